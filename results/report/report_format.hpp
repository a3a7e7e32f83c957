// How the report writes its numbers and settings: significant digits, intervals, units,
// "n/a" for what cannot be formed. Shared by the report's sections (report_writer.cpp,
// report_thresholds.cpp).
#pragma once
#include "results/analysis/thresholds.hpp"
#include "results/statistics/statistics.hpp"
#include "results/store/run_record.hpp"

#include <cmath>
#include <cstdint>
#include <string>

namespace ddpscale {

// "12,345" style thousands separators for counts.
std::string group_thousands(int64_t value);
// A number with `significant` significant digits (at least 0 decimals), "n/a" when NaN.
std::string format_number(double value, int significant = 3);

std::string gpus_text(int world);  // "1 GPU", "2 GPUs"
// Ranks are GPUs on a GPU study and processes on a CPU one: says which.
std::string ranks_text(const ConfigParams& p);

// "mean ± half-width of the 95% interval", "mean (n=1, no CI)" or "n/a"; the caller says
// how each of the two numbers is written.
template <typename MeanText, typename HalfWidthText>
std::string mean_pm_ci(const Summary& s, MeanText mean_text, HalfWidthText half_width_text) {
  if (s.n == 0) return "n/a";
  if (!std::isfinite(s.ci_low) || !std::isfinite(s.ci_high))
    return mean_text(s.mean) + " (n=" + std::to_string(s.n) + ", no CI)";
  return mean_text(s.mean) + " ± " + half_width_text((s.ci_high - s.ci_low) / 2);
}

// Throughputs: "mean [low, high]" with four significant digits; the interval is on the log
// scale (summarize_positive), so not centred on the mean and never below zero. "mean (n=1,
// no CI)" or "n/a" as mean_pm_ci.
std::string throughput_text(const Summary& s);
std::string speedup_text(const ConfigSpeedup& s);  // "1.80x [1.75, 1.85]", "n/a"
std::string p_text(double p);                      // "< 0.001", "0.032", "n/a"
std::string percent(double share);                 // 0.423 -> "42.3%"
std::string short_percent(double share);           // 0.05 -> "5%", 0.0716 -> "7.16%": a target or a bound
std::string mib_text(double bytes);
std::string parameters_text(double parameters);    // "316K", "1.00M", "2.50B"
// Milliseconds with three decimals (a microsecond): phases span 0.005 ms to seconds, and
// significant digits would print a data phase of 50 ns as 0.0000500.
std::string fixed_ms(double us);

// A file stem gnuplot and every file system accept.
std::string safe_stem(const std::string& text);
// What distinguishes tables of the same model: scaling, and any non-default setting.
std::string variant_of(const ConfigParams& p);
// The communication settings: overlap, bucket size, and the allreduce's precision if not float32.
std::string settings_of(const ConfigParams& p);

}  // namespace ddpscale
