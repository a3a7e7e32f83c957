// From per-configuration speedups to the study's answer: which configurations pay off,
// the parameter count where N GPUs start to beat 1, and the seed study's table of
// parameter ranges, computed from measurements instead of typed by hand.
#pragma once
#include "results/statistics/statistics.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ddpscale {

// One measured configuration (model x batch x world size) compared with its 1-GPU twin.
struct ConfigSpeedup {
  std::string model;
  int64_t parameters = 0;
  int64_t batch = 0;        // per rank
  double speedup = kNaN;    // point estimate, mean throughput(N) / mean throughput(1)
  Interval speedup_ci;      // bootstrap percentile interval
  double p_value = kNaN;    // Welch, throughput(N) vs throughput(1), over the runs
  int world_size = 2;
  int launches = 1;         // the launches the interval was computed over
  // Which design measured it: "paired" (1-rank and N-rank blocks taking turns inside one
  // live job, results/statistics/paired_speedup.hpp) or "runs" (whole runs of each side).
  std::string design = "runs";
};

// "Pays off": the speedup's 95% bootstrap interval lies wholly above 1. The one rule of the
// report's text, tables and charts alike: the interval is what the tables print and the
// charts draw as error bars against the line at 1, so a reader sees the verdict where it is
// stated. Welch's p stays beside it as a second opinion. Without an interval (fewer than two
// runs on a side) nothing pays off.
bool pays_off(const ConfigSpeedup& config);

// The three answers an interval gives: wholly above 1 (paid off), wholly at or below 1 (did
// not pay off), or holding 1, or no interval at all (undecided: more launches could show
// either). "Did not pay off" and "undecided" both fail pays_off; the text keeps them apart,
// because "undecided" asks the user for more launches, not for a verdict against N GPUs.
enum class Payoff { paid_off, undecided, not_paid_off };
Payoff payoff_of(const ConfigSpeedup& config);
// "paid off", "undecided" or "did not pay off".
std::string payoff_word(Payoff payoff);

// Least-squares fit speedup = intercept + slope * log10(parameters).
struct LogLinearFit {
  double intercept = kNaN;
  double slope = kNaN;
  bool ok = false;  // false with fewer than 2 distinct parameter counts
};
LogLinearFit fit_speedup_vs_log10_parameters(const std::vector<ConfigSpeedup>& configs);

// The parameter count where the fitted line crosses speedup 1: 10^((1 - intercept) / slope).
struct BreakEven {
  int world_size = 0;
  size_t configs = 0;           // configurations of that world size used in the fit
  LogLinearFit fit;
  bool found = false;           // the fit has a positive slope, so the crossing means "bigger pays"
  double parameters = kNaN;     // the break-even point; NaN when not found
  bool extrapolated = false;    // the crossing lies outside the measured parameter counts
  // More than ten times below the smallest or above the largest measured count: a line
  // that flat says no more than "below (above) the measured range", so no size is quoted.
  bool far_extrapolated = false;
  Interval ci;                  // bootstrap percentile over configurations; NaN bounds: see reason
  int resamples = 0;
  int resamples_without_crossing = 0;  // resamples whose slope was not positive (or undefined)
  std::string reason;           // empty when found with a valid interval; otherwise why not
};
// Uses every configuration of the given world size with a finite speedup. The bootstrap
// resamples configurations with replacement; a resample without a positive slope has no
// crossing and sorts as +infinity ("never breaks even"), so when more than (1-confidence)/2
// of the resamples lack one, the upper bound does not exist and both bounds are NaN.
BreakEven estimate_break_even(const std::vector<ConfigSpeedup>& configs, int world_size,
                              const BootstrapOptions& options = {});

// The family a model belongs to: its name up to the first '@' or '-' ("mlp@10M" and
// "mlp-large" -> "mlp", "transformer" -> "transformer"). Families differ in how their speedup
// grows with size, so a study of several gets one break-even fit per family besides the
// pooled one: a line through all of them can cross 1.0 where none of them does.
std::string model_family(const std::string& model);

// A row range of the seed's table: parameters in [low, high).
struct ParameterRange {
  std::string label;
  int64_t low = 0;
  int64_t high = 0;  // exclusive; INT64_MAX for the open top range
};
// < 500K, 500K - 1M, 1M - 5M, 5M - 10M, 10M - 25M, 25M - 50M, >= 50M (as in the seed study;
// the boundaries are half-open, so a model of exactly 50M parameters is in the last row).
const std::vector<ParameterRange>& seed_parameter_ranges();

// Wilson score interval of a proportion (successes of trials); invalid when trials == 0.
// Chosen over the Wald interval because it stays inside [0, 1] and is honest at 0 of 3.
Interval wilson_interval(int successes, int trials, double confidence = 0.95);

// The word for a share of configurations that paid off, exact on the counts:
//   not measured: trials == 0
//   Never:     share == 0
//   Rarely:    0    < share < 0.20
//   Sometimes: 0.20 <= share < 0.50
//   Often:     0.50 <= share < 0.75
//   Usually:   0.75 <= share < 1
//   Always:    share == 1
std::string benefit_word(int paid_off, int measured);

struct ThresholdRow {
  ParameterRange range;
  int measured = 0;              // configurations measured in this range (0: "not measured")
  int paid_off = 0;
  double share = kNaN;           // paid_off / measured; NaN when not measured
  Interval share_ci;             // Wilson 95%
  std::string word;              // benefit_word
  std::string confidence;        // e.g. "2 of 5 paid off; Wilson 95% CI of the share 12%-77%"
  std::vector<std::string> models;  // distinct model names measured here, first-seen order
};
// One row per seed range for the configurations of one world size.
std::vector<ThresholdRow> threshold_table(const std::vector<ConfigSpeedup>& configs, int world_size);

// The measured answer to "from which size on does it pay off", with no fitted line: for one
// model family at one batch size per rank, the smallest model from which every larger one
// measured paid off. A size with several comparisons (other bucket sizes, NCCL profiles)
// counts as paying off only when all of them did.
struct MeasuredThreshold {
  std::string family;
  int64_t batch = 0;                  // per rank
  int sizes = 0;                      // distinct parameter counts compared
  int64_t pays_from = -1;             // parameters; -1 when the largest size did not pay off
  std::string pays_from_model;
  int64_t largest_not_paying = -1;    // the next size below pays_from (or the largest); -1: none
  std::string largest_not_paying_model;
  bool largest_not_paying_undecided = false;  // no comparison of that size decided against
};
// Ordered by family, then batch.
std::vector<MeasuredThreshold> measured_thresholds(const std::vector<ConfigSpeedup>& configs, int world_size);

}  // namespace ddpscale
