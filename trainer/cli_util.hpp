// Small parsing helpers shared by the subcommands.
#pragma once
#include <cstdint>
#include <exception>
#include <string>

namespace ddpscale {

// "8", "32K", "128M", "2G" (binary multiples, as nccl-tests takes them). Throws
// std::invalid_argument with a message naming the option.
uint64_t parse_byte_size(const std::string& option, const std::string& text);

// "500K", "10M", "1.5B" (decimal multiples, as parameter counts are written).
int64_t parse_count(const std::string& text);

// A user error: printed as one line "ddpscale: <message>" and exit code 2, on every rank.
struct UsageError : std::exception {
  explicit UsageError(std::string text) : message(std::move(text)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

}  // namespace ddpscale
