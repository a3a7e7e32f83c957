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

// cxxopts says "Argument 'abc' failed to parse" without naming the option; this finds the
// option the value was given to in argv and says "--batch 'abc' is not a valid number
// (see ddpscale train --help)". Other messages come back as they are, plus the --help hint.
std::string explain_option_error(const std::exception& error, int argc, char** argv, const std::string& program);

// Why an output folder (--out PATH) cannot be made or written into, or "" where it can: the
// path, or a folder above it, is an existing file (create_directories would throw midway,
// after the command had done its work). Checked from the file system alone, so every rank of
// a launch reaches the same verdict before any collective. option: "--out" as the user gave it.
std::string output_folder_refusal(const std::string& option, const std::string& path);
// Throws UsageError with output_folder_refusal's message, where it has one.
void require_output_folder(const std::string& option, const std::string& path);

}  // namespace ddpscale
