#include "cli_util.hpp"

#include <cctype>
#include <cmath>
#include <stdexcept>

namespace ddpscale {

static bool split_number_suffix(const std::string& text, double& number, char& suffix) {
  size_t used = 0;
  try {
    number = std::stod(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  suffix = 0;
  if (used < text.size()) {
    if (used + 1 != text.size()) return false;
    suffix = static_cast<char>(std::toupper(static_cast<unsigned char>(text[used])));
  }
  return std::isfinite(number) && number >= 0;
}

uint64_t parse_byte_size(const std::string& option, const std::string& text) {
  double number = 0;
  char suffix = 0;
  if (!split_number_suffix(text, number, suffix))
    throw std::invalid_argument("--" + option + " '" + text + "' is not a size (e.g. 8, 32K, 128M, 2G)");
  double multiplier = 1;
  switch (suffix) {
    case 0: break;
    case 'K': multiplier = 1024.0; break;
    case 'M': multiplier = 1024.0 * 1024; break;
    case 'G': multiplier = 1024.0 * 1024 * 1024; break;
    default: throw std::invalid_argument("--" + option + " '" + text + "': unknown suffix (use K, M or G)");
  }
  return static_cast<uint64_t>(std::llround(number * multiplier));
}

int64_t parse_count(const std::string& text) {
  double number = 0;
  char suffix = 0;
  if (!split_number_suffix(text, number, suffix))
    throw std::invalid_argument("'" + text + "' is not a count (e.g. 250K, 10M, 1.5B)");
  double multiplier = 1;
  switch (suffix) {
    case 0: break;
    case 'K': multiplier = 1e3; break;
    case 'M': multiplier = 1e6; break;
    case 'B':
    case 'G': multiplier = 1e9; break;
    default: throw std::invalid_argument("'" + text + "': unknown suffix (use K, M or B)");
  }
  return static_cast<int64_t>(std::llround(number * multiplier));
}

}  // namespace ddpscale
