// The paired design's estimates (docs/methodology.md, "The paired speedup"): a ratio of two
// sides measured in adjacent blocks, with a 95% interval over units that are independent in
// fact, and the checks that show the design honest. Plain functions on plain records.
#pragma once
#include "results/statistics/launch_statistics.hpp"
#include "results/statistics/statistics.hpp"
#include "results/store/run_record.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ddpscale {

// A ratio from paired blocks. Each pair gives log(a / b); consecutive pairs of one launch are
// averaged in batches, doubled in length while the batch means still correlate (lag-1
// autocorrelation above kBatchCorrelationLimit) and at least kMinBatches remain, so the
// batches are far enough apart to be independent units. Two levels of spread:
// - within: each launch's mean has the variance of its batch means over their count;
// - between: the launch means' own spread, over two or more launches, which holds whatever
//   changes from launch to launch (processes, buffers' addresses, the host's slow states).
// The interval takes the larger of the two, with its degrees of freedom (t), so a rerun's
// launch-to-launch change is covered where it shows and the batches decide where it does not.
struct PairedEstimate {
  double ratio = kNaN;        // exp(mean log ratio) times the scale
  Interval ci;                // 95% unless asked otherwise
  double p_value = kNaN;      // two-sided t test of ratio == 1
  size_t pairs = 0;
  size_t batches = 0;         // over all launches
  int pairs_per_batch = 0;    // the largest any launch used
  int launches = 0;
  std::string level;          // "batches", "launches" or "launches, study": the spread that set the interval
  double relative_half_width() const;  // (high - low) / 2 / ratio; NaN without an interval
};

inline constexpr double kBatchCorrelationLimit = 0.2;
inline constexpr size_t kMinBatches = 8;

// How much more the launch means of one comparison spread than their batches predict: the
// launch means' variance over the mean within-launch variance of a launch mean (an F ratio,
// 1 where launches add nothing), with launches - 1 degrees of freedom. NaN below 2 launches.
struct LaunchSpread {
  double ratio = kNaN;
  double df = 0;
};
LaunchSpread launch_spread(const std::vector<std::vector<double>>& series_by_launch);

// The launch spread a study's comparisons share, estimated from all of them (empirical Bayes,
// Smyth 2004, "Linear models and empirical Bayes methods for assessing differential
// expression in microarray experiments", section 6.2): the ratios are taken as draws whose
// true values follow a scaled inverse chi-square of `df` degrees of freedom around `ratio`.
// With 3 launches a comparison's own launch variance has 2 degrees of freedom (t = 4.30);
// moderated by the study's it has df + 2, while a comparison whose launches disagree more
// than the study's keeps most of its own spread. `df` is capped at the ratios' total degrees
// of freedom (the study holds no more information than that) and is 0 (no prior) below
// kMinComparisonsForPrior comparisons.
struct LaunchSpreadPrior {
  double ratio = kNaN;
  double df = 0;
  int comparisons = 0;
  bool valid() const { return df > 0 && ratio > 0; }
};
inline constexpr int kMinComparisonsForPrior = 5;
LaunchSpreadPrior launch_spread_prior(const std::vector<LaunchSpread>& spreads);

// x with trigamma(x) = y (Smyth 2004, appendix: Newton's method on 1 / trigamma), y > 0.
double trigamma_inverse(double y);

// The two-level estimate over per-launch series of log ratios (in time order), times `scale`.
// With a valid prior the launch level's variance is moderated: (prior.df x prior.ratio +
// (L - 1) x F) / (prior.df + L - 1) times the batches' variance, with prior.df + L - 1 degrees
// of freedom, wherever that exceeds the batches' own.
PairedEstimate two_level_log_ratio(const std::vector<std::vector<double>>& log_ratios_by_launch, double scale,
                                   double confidence = 0.95, const LaunchSpreadPrior& prior = {});

// The log ratios log(a / b) of the pairs of `kind`, per launch, in the order they ran.
std::vector<std::vector<double>> log_ratios_by_launch(const std::vector<PairedLaunch>& launches, PairKind kind);

// The speedup of N ranks over 1: throughput(N) / throughput(1) = scale * t(1-rank block) /
// t(N-rank block), scale = N under weak scaling (an N-rank step trains N times the samples)
// and 1 under strong scaling (the same global batch).
PairedEstimate paired_speedup(const std::vector<PairedLaunch>& launches, const std::string& scaling, int world_size,
                              const LaunchSpreadPrior& prior = {});

// The A/A checks: the ratio of two blocks of the same session (A over B), which must cover 1
// when the pairing is fair.
PairedEstimate same_session_ratio(const std::vector<PairedLaunch>& launches, PairKind kind,
                                  const LaunchSpreadPrior& prior = {});

// A study's priors, one per kind of pair, from the paired launches of all its comparisons.
struct PairedPriors {
  LaunchSpreadPrior speedup, same_one_rank, same_n_ranks;
};
PairedPriors paired_priors(const std::vector<std::vector<PairedLaunch>>& launches_by_comparison);

// The solo checks: the throughput of one side's paired blocks over that of the same side's
// runs (the configuration's own runs in the same launch, each a continuous run of its steps;
// for the 1-rank side, on rank 0 with every other rank asleep, so only the 1-rank blocks rank
// 0 ran count), launch by launch. `samples_per_step` is that side's global batch. Below 1:
// taking turns slowed that side's steps (a rank waking up, caches left cold by the other
// session), which biases the speedup when the two sides pay differently.
enum class PairedSide { one_rank, n_ranks };
PairedEstimate solo_check(const std::vector<PairedLaunch>& launches, int64_t samples_per_step,
                          const LaunchGroups& runs_by_launch, PairedSide side = PairedSide::one_rank);

// The paired measurement of a comparison, as the report and summary print it.
struct PairedChecks {
  bool measured = false;
  PairedEstimate speedup;
  PairedEstimate same_one_rank;   // A/A, 1 rank against 1 rank
  PairedEstimate same_n_ranks;    // A/A, N ranks against N ranks
  PairedEstimate solo;            // paired 1-rank blocks against the 1-rank runs
  PairedEstimate solo_n_ranks;    // paired N-rank blocks against the N-rank runs
  std::vector<int> block_steps;   // per launch
  std::vector<double> autocorrelation_lag1;  // per launch, of the pilot's log step times
  std::vector<int> window_speedups;  // per launch: the speedups whose rounds took turns with its own (itself included)
  bool aa_covers_one() const;     // both A/A intervals hold 1 (true where not measured)
};
PairedChecks paired_checks(const std::vector<PairedLaunch>& launches, const std::string& scaling, int world_size,
                           int64_t one_rank_samples_per_step, const LaunchGroups& one_rank_runs_by_launch,
                           int64_t n_ranks_samples_per_step = 0, const LaunchGroups& n_ranks_runs_by_launch = {},
                           const PairedPriors& priors = {});

}  // namespace ddpscale
