// Statistics of runs that came from several launches (fresh processes, communicators and
// CUDA contexts each): runs of one launch share its host state, so they are not independent
// of each other, and an interval computed as if they were is too narrow (docs/methodology.md,
// "Launches"). Plain functions on plain vectors, like statistics.hpp.
#pragma once
#include "results/statistics/statistics.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ddpscale {

// One configuration's values grouped by launch: by_launch[l] are the values of launch l.
using LaunchGroups = std::vector<std::vector<double>>;

// ---- How much of the spread lies between launches -----------------------------------

// One-way random-effects analysis of variance by the method of moments (Searle, Casella and
// McCulloch, "Variance Components", 1992, section 3.6), unbalanced groups allowed:
//   MSB = sum n_l (mean_l - grand)^2 / (L - 1),  MSW = sum (y - mean_l)^2 / (N - L),
//   n0  = (N - sum n_l^2 / N) / (L - 1),        between = max(0, (MSB - MSW) / n0).
// Groups without values are ignored. NaN fields where L < 2 or N - L < 1.
struct VarianceComponents {
  size_t launches = 0;
  double between_variance = kNaN;
  double within_variance = kNaN;
  double between_share = kNaN;  // between / (between + within): the intraclass correlation
};
VarianceComponents launch_variance_components(const LaunchGroups& groups);

// ---- Speed levels ---------------------------------------------------------------------

// Whether a set of runs falls into two separate speed levels: Engelman and Hartigan's test
// for two clusters ("Percentage points of a test for clusters", JASA 64, 1969). The
// statistic is the largest share of the total sum of squares that a split into two groups
// explains, max over splits of B / T; for values on a line the best split is contiguous in
// sorted order, so scanning the n - 1 cuts finds it. Its null distribution (one normal
// level) does not depend on the mean or spread, so the p-value is the share of `null_samples`
// normal samples of the same size whose statistic is at least as large (seeded: the same
// values give the same p-value every time).
struct LevelSplit {
  size_t n = 0;
  double statistic = kNaN;   // max B / T in [0, 1]
  double p_value = kNaN;     // NaN below 4 values or when all values are equal
  size_t low_count = 0;      // values in the slower group
  double low_mean = kNaN, high_mean = kNaN;
  double ratio = kNaN;       // high_mean / low_mean
};
LevelSplit two_level_split(const std::vector<double>& values, int null_samples = 2000, uint64_t seed = 19690301);

// The report's flag: two levels at p < alpha, each holding at least two runs, at least
// min_ratio apart (a split that is significant but 1% wide is not a level a user meets).
bool has_separate_levels(const LevelSplit& split, double alpha = 0.01, double min_ratio = 1.05);

// ---- The speedup over launches --------------------------------------------------------

// The speedup of N ranks over 1 from runs spread over launches. The launches pair the two
// sides: one_gpu[l] and n_gpu[l] ran in launch l, in the same processes; launches missing on
// either side are dropped. With one launch this is bootstrap_speedup on its runs.
// With L >= 2 launches, a two-level bootstrap: resample launches with replacement (the same
// launches for both sides), then each chosen launch's runs with replacement, side by side;
// each side's mean is the mean of its launches' means, the ratio N / 1. Resampling L
// clusters cannot reach beyond the L launches seen and understates the spread between them
// by (L - 1) / L, so the interval is not the bootstrap's percentiles but
//   exp(log(speedup) +- t(0.975, L - 1) * sqrt(L / (L - 1)) * sd(log ratio of the resamples)),
// a bootstrap standard error with Student's small-sample quantile (Efron and Tibshirani,
// "An Introduction to the Bootstrap", 1993, sections 12.2 and 13.2).
struct LaunchSpeedup {
  SpeedupEstimate estimate;
  size_t launches = 0;          // paired launches used
  double log_standard_error = kNaN;
};
LaunchSpeedup two_level_bootstrap_speedup(const LaunchGroups& one_gpu, const LaunchGroups& n_gpu, int world_size,
                                          const BootstrapOptions& options = {});

// How many launches an interval like `interval` would need for a half-width of `target` of
// the speedup ((high - low) / 2 / speedup, 0.05 for 5%), at the spread between launches it
// shows: the sizing Kalibera and Jones (ISMM 2013) recommend, from the variance at the level
// that dominates. The two-level interval over L launches is exp(log(speedup) +- h) with
// h = t(0.975, L - 1) * s / sqrt(L), s the spread of a launch's log speedup; so
// s = h * sqrt(L) / t(0.975, L - 1), and the answer is the least L' >= 2 with
// t(0.975, L' - 1) * s / sqrt(L') <= asinh(target) (the interval's half-width relative to the
// speedup is sinh(h)). -1 where it cannot be said (fewer than 2 launches, no interval) or
// where more than `most` would be needed.
int launches_for_half_width(double speedup, const Interval& interval, int launches, double target, int most = 1000);

}  // namespace ddpscale
