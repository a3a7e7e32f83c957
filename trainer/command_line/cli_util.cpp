#include "trainer/command_line/cli_util.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

// ---- Output folders ----------------------------------------------------------------

std::string output_folder_refusal(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // The nearest part of the path that exists must be a folder: below a file nothing can be made.
  fs::path target = fs::path(path).lexically_normal();
  if (target.filename().empty() && target.has_parent_path()) target = target.parent_path();  // "out/"
  for (fs::path at = target; !at.empty(); at = at.parent_path()) {
    const fs::file_status status = fs::status(at, ec);
    if (!fs::exists(status)) {
      if (at == at.parent_path()) break;
      continue;
    }
    if (fs::is_directory(status)) return "";
    const std::string what = fs::is_regular_file(status) ? "a file" : "not a folder";
    if (at == target)
      return option + " " + path + " is " + what + ", not a folder: give a folder to write into (it is created "
             "where missing), or move " + path + " away; nothing was run";
    return option + " " + path + ": " + at.string() + " is " + what + ", so no folder can be made below it: give "
           "another " + option + ", or move " + at.string() + " away; nothing was run";
  }
  return "";
}

void require_output_folder(const std::string& option, const std::string& path) {
  if (std::string refusal = output_folder_refusal(option, path); !refusal.empty()) throw UsageError(refusal);
}

// ---- Error reporting shared by the subcommands ----------------------------------------

std::string explain_option_error(const std::exception& error, int argc, char** argv, const std::string& program) {
  const std::string hint = " (see " + program + " --help)";
  std::string text = error.what();
  // cxxopts 3: "Argument ‘abc’ failed to parse" with typographic quotes around the value.
  static const std::string kPrefix = "Argument ";
  static const std::string kSuffix = " failed to parse";
  if (text.rfind(kPrefix, 0) != 0 || text.size() < kPrefix.size() + kSuffix.size() ||
      text.compare(text.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
    return text + hint;
  std::string quoted = text.substr(kPrefix.size(), text.size() - kPrefix.size() - kSuffix.size());
  // Strip one quote character (ASCII ' or the 3-byte UTF-8 ‘ ’) at each end.
  auto strip = [&](bool front) {
    for (const char* q : {"\xE2\x80\x98", "\xE2\x80\x99", "'"}) {
      const size_t n = std::strlen(q);
      if (quoted.size() < n) continue;
      if (front && quoted.compare(0, n, q) == 0) {
        quoted.erase(0, n);
        return;
      }
      if (!front && quoted.compare(quoted.size() - n, n, q) == 0) {
        quoted.erase(quoted.size() - n);
        return;
      }
    }
  };
  strip(true);
  strip(false);
  std::string option;
  for (int i = 1; i < argc && option.empty(); ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    if (arg.rfind("-", 0) == 0 && eq != std::string::npos && arg.substr(eq + 1) == quoted)
      option = arg.substr(0, eq);
    else if (arg == quoted && i > 1 && argv[i - 1][0] == '-')
      option = argv[i - 1];
  }
  if (option.empty()) return "'" + quoted + "' is not a valid value for its option" + hint;
  return option + " '" + quoted + "' is not a valid value: expected a number" + hint;
}

}  // namespace ddpscale
