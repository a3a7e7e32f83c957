#include "results/report/report_format.hpp"

#include "results/analysis/study_analysis.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ddpscale {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

std::string group_thousands(int64_t value) {
  // Unsigned magnitude: -INT64_MIN does not fit in int64_t.
  const uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  std::string digits = std::to_string(magnitude);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string format_number(double value, int significant) {
  if (!std::isfinite(value)) return "n/a";
  if (value == 0) return "0";
  // The magnitude after rounding to `significant` digits: 9.996 rounds to 1.00e+01, so it
  // is printed "10.0", not "10.00" (log10 of the unrounded value would say 0).
  char text[64];
  std::snprintf(text, sizeof(text), "%.*e", std::max(significant, 1) - 1, value);
  const int magnitude = std::atoi(std::strchr(text, 'e') + 1);
  const int decimals = std::max(0, significant - 1 - magnitude);
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

std::string gpus_text(int world) { return std::to_string(world) + (world == 1 ? " GPU" : " GPUs"); }

std::string ranks_text(const ConfigParams& p) {
  if (p.device == "cuda") return gpus_text(p.world_size);
  return std::to_string(p.world_size) + (p.world_size == 1 ? " CPU rank" : " CPU ranks");
}

std::string throughput_text(const Summary& s) {
  if (s.n == 0) return "n/a";
  const std::string mean = format_number(s.mean, 4);
  if (!std::isfinite(s.ci_low) || !std::isfinite(s.ci_high)) return mean + " (n=" + std::to_string(s.n) + ", no CI)";
  return mean + " [" + format_number(s.ci_low, 4) + ", " + format_number(s.ci_high, 4) + "]";
}

std::string speedup_text(const ConfigSpeedup& s) {
  if (!std::isfinite(s.speedup)) return "n/a";
  std::string text = format_number(s.speedup, 3) + "x";
  if (s.speedup_ci.valid())
    text += " [" + format_number(s.speedup_ci.low, 3) + ", " + format_number(s.speedup_ci.high, 3) + "]";
  else
    text += " [n/a]";
  return text;
}

std::string p_text(double p) {
  if (!std::isfinite(p)) return "n/a";
  if (p < 0.001) return "< 0.001";
  return format_number(p, 2);
}

std::string short_percent(double share) {
  if (!std::isfinite(share)) return "n/a";
  char text[32];
  // Three significant digits, without an exponent for the wide ones ("4090%").
  std::snprintf(text, sizeof(text), std::fabs(100 * share) < 1000 ? "%.3g%%" : "%.0f%%", 100 * share);
  return text;
}

std::string percent(double share) { return std::isfinite(share) ? format_number(100 * share, 3) + "%" : "n/a"; }

std::string mib_text(double bytes) { return std::isfinite(bytes) ? format_number(bytes / kMiB, 4) + " MiB" : "n/a"; }

std::string parameters_text(double parameters) {
  if (!std::isfinite(parameters)) return "n/a";
  // Three significant digits round 999.5K up to "1000K": such a count is written 1.00M.
  if (parameters >= 999.5e6) return format_number(parameters / 1e9, 3) + "B";
  if (parameters >= 999.5e3) return format_number(parameters / 1e6, 3) + "M";
  if (parameters >= 999.5) return format_number(parameters / 1e3, 3) + "K";
  return format_number(parameters, 3);
}

std::string fixed_ms(double us) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", us / 1000);
  return text;
}

std::string safe_stem(const std::string& text) {
  std::string out;
  for (char c : text) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out;
}

std::string variant_of(const ConfigParams& p) {
  std::string v = p.scaling + " scaling" + exec_dtype_text(p.exec, p.dtype) + engine_text(p.engine);
  if (p.nccl_profile != "default") v += ", NCCL profile " + p.nccl_profile;
  if (p.optimizer != "adam") v += ", " + p.optimizer;
  return v;
}

std::string settings_of(const ConfigParams& p) {
  return std::string(p.overlap ? "overlap" : "no overlap") + ", " + format_number(p.bucket_mb, 3) + " MiB" +
         (p.allreduce_dtype != "float32" ? ", " + p.allreduce_dtype + " allreduce" : "");
}

}  // namespace ddpscale
