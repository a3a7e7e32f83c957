// The statistics of runs spread over launches (results/statistics/launch_statistics.hpp): variance
// components against a hand-worked example (cross-checked with scipy.stats.f_oneway), the
// speed-level test against an independent exhaustive search and on synthetic data with and
// without levels, and the two-level bootstrap against a hand-worked bootstrap distribution
// and on simulated studies whose true speedup is known.
#include "results/analysis/config_summary.hpp"
#include "results/statistics/launch_statistics.hpp"
#include "tests/launch_records.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace ddpscale {
namespace {

// ---- Variance components ---------------------------------------------------------------

TEST(LaunchVariance, MatchesHandWorkedUnbalancedExample) {
  // Groups {10, 12}, {20, 22, 24}, {14, 16, 18, 16}: N = 9, grand mean 152/9, group means
  // 11, 22, 16. MSB = [2 (11 - 152/9)^2 + 3 (22 - 152/9)^2 + 4 (16 - 152/9)^2] / 2 = 679/9;
  // MSW = (2 + 8 + 8) / 6 = 3; n0 = (9 - 29/9) / 2 = 26/9; between = (679/9 - 3) / (26/9)
  // = 326/13; share = 326 / 365. scipy.stats.f_oneway gives F = 25.148148 = MSB / MSW.
  const VarianceComponents v = launch_variance_components({{10, 12}, {20, 22, 24}, {14, 16, 18, 16}});
  EXPECT_EQ(v.launches, 3u);
  EXPECT_NEAR(v.within_variance, 3.0, 1e-12);
  EXPECT_NEAR(v.between_variance, 326.0 / 13.0, 1e-12);
  EXPECT_NEAR(v.between_share, 326.0 / 365.0, 1e-12);
}

TEST(LaunchVariance, NoBetweenPartWhenLaunchesAgreeAndNaNWithOneLaunch) {
  // Equal launch means: MSB = 0 < MSW, so the estimate is clipped to 0.
  const VarianceComponents v = launch_variance_components({{1, 3}, {1, 3}, {}});
  EXPECT_EQ(v.launches, 2u);
  EXPECT_EQ(v.between_variance, 0.0);
  EXPECT_EQ(v.between_share, 0.0);
  EXPECT_TRUE(std::isnan(launch_variance_components({{1, 2, 3}}).between_share));
}

// ---- Speed levels ----------------------------------------------------------------------

// The statistic by brute force: every split of the values into two non-empty groups,
// contiguous or not (2^(n-1) - 1 of them), an algorithm independent of the sorted scan.
double best_share_by_exhaustive_search(const std::vector<double>& values) {
  const size_t n = values.size();
  double grand = 0;
  for (double v : values) grand += v / static_cast<double>(n);
  double total = 0;
  for (double v : values) total += (v - grand) * (v - grand);
  double best = 0;
  for (unsigned mask = 1; mask < (1u << (n - 1)); ++mask) {  // value n-1 always in the second group
    double sum_a = 0, sum_b = 0;
    size_t count_a = 0;
    for (size_t i = 0; i < n; ++i) {
      if (mask & (1u << i)) {
        sum_a += values[i];
        ++count_a;
      } else {
        sum_b += values[i];
      }
    }
    const double mean_a = sum_a / count_a, mean_b = sum_b / (n - count_a);
    const double between = count_a * (mean_a - grand) * (mean_a - grand) +
                           (n - count_a) * (mean_b - grand) * (mean_b - grand);
    best = std::max(best, between / total);
  }
  return best;
}

TEST(SpeedLevels, SortedScanFindsTheSplitAnExhaustiveSearchFinds) {
  std::mt19937_64 generator(5);
  std::uniform_real_distribution<double> uniform(0, 1);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> values(3 + trial % 10);
    for (double& v : values) v = uniform(generator) * (trial % 2 ? 1.0 : 100.0);
    EXPECT_NEAR(two_level_split(values, 0).statistic, best_share_by_exhaustive_search(values), 1e-12)
        << "trial " << trial;
  }
}

TEST(SpeedLevels, HandWorkedSplit) {
  // {1, 2, 10, 11}: the cut between 2 and 10 explains B = 4/4 * ... : groups means 1.5 and
  // 10.5, B = 2 * 2 / 4 * 9^2 = 81, T = 81 + 4 * 0.25 = 82.
  const LevelSplit split = two_level_split({11, 1, 10, 2}, 0);
  EXPECT_NEAR(split.statistic, 81.0 / 82.0, 1e-12);
  EXPECT_EQ(split.low_count, 2u);
  EXPECT_NEAR(split.low_mean, 1.5, 1e-12);
  EXPECT_NEAR(split.high_mean, 10.5, 1e-12);
}

std::vector<double> normal_sample(std::mt19937_64& generator, size_t n, double mean, double sd) {
  std::normal_distribution<double> normal(mean, sd);
  std::vector<double> values(n);
  for (double& v : values) v = normal(generator);
  return values;
}

TEST(SpeedLevels, FlagFiresOnTwoLevelsAndNotOnOne) {
  std::mt19937_64 generator(11);
  int flagged_one_level = 0, flagged_two_levels = 0;
  const int studies = 200;
  for (int s = 0; s < studies; ++s) {
    // One level: 10 runs around 80K samples/s with a 2% spread.
    if (has_separate_levels(two_level_split(normal_sample(generator, 10, 80000, 1600)))) ++flagged_one_level;
    // Two levels, as measured on the 2-GPU machine: 34.4K and 47.8K, 2% spread each.
    std::vector<double> runs = normal_sample(generator, 6, 34400, 690);
    for (double v : normal_sample(generator, 4, 47800, 960)) runs.push_back(v);
    if (has_separate_levels(two_level_split(runs))) ++flagged_two_levels;
  }
  EXPECT_LE(flagged_one_level, studies * 3 / 100) << "false alarms on one level";
  EXPECT_GE(flagged_two_levels, studies * 99 / 100) << "missed two levels";
}

TEST(SpeedLevels, PValueIsUniformishUnderTheNull) {
  // Under one normal level the Monte Carlo p-value is about uniform: about 10% below 0.1.
  std::mt19937_64 generator(3);
  int below = 0;
  const int samples = 400;
  for (int s = 0; s < samples; ++s)
    if (two_level_split(normal_sample(generator, 12, 0, 1), 500).p_value < 0.1) ++below;
  // Binomial(400, 0.1): mean 40, sd 6; 4 sd either side.
  EXPECT_GT(below, 16);
  EXPECT_LT(below, 64);
}

// ---- The speedup over launches -----------------------------------------------------------

TEST(TwoLevelBootstrap, OneLaunchIsTheOneLevelBootstrap) {
  const std::vector<double> one = {100, 102, 98, 101}, two = {180, 176, 185, 181};
  const SpeedupEstimate plain = bootstrap_speedup(one, two, 2);
  const LaunchSpeedup launched = two_level_bootstrap_speedup({one}, {two}, 2);
  EXPECT_EQ(launched.launches, 1u);
  EXPECT_EQ(launched.estimate.speedup, plain.speedup);
  EXPECT_EQ(launched.estimate.speedup_ci.low, plain.speedup_ci.low);
  EXPECT_EQ(launched.estimate.speedup_ci.high, plain.speedup_ci.high);
}

TEST(TwoLevelBootstrap, MatchesHandWorkedDistributionOfTwoLaunches) {
  // No spread within a launch: launch A has 1-GPU 100, N-GPU 150; launch B 100 and 200.
  // Resampling two launches with replacement gives AA (1/4): ratio 1.5, AB or BA (1/2):
  // 175/100 = 1.75, BB (1/4): 2. The log ratio's sd is then
  //   sqrt(E[x^2] - E[x]^2) over {ln 1.5: 1/4, ln 1.75: 1/2, ln 2: 1/4},
  // and the interval log(1.75) +- t(0.975, 1) * sqrt(2) * sd (t = 12.706).
  const double a = std::log(1.5), m = std::log(1.75), b = std::log(2.0);
  const double ex = a / 4 + m / 2 + b / 4, ex2 = a * a / 4 + m * m / 2 + b * b / 4;
  const double sd = std::sqrt(ex2 - ex * ex);
  const LaunchSpeedup s = two_level_bootstrap_speedup({{100, 100}, {100, 100}}, {{150, 150}, {200, 200}}, 2);
  EXPECT_EQ(s.launches, 2u);
  EXPECT_NEAR(s.estimate.speedup, 1.75, 1e-12);
  // 10000 resamples estimate the sd within about 1/sqrt(2 * 10000) = 0.7% of itself; allow 3%.
  EXPECT_NEAR(s.log_standard_error / (std::sqrt(2.0) * sd), 1.0, 0.03);
  const double half = 12.706204736174707 * std::sqrt(2.0) * sd;
  EXPECT_NEAR(std::log(s.estimate.speedup_ci.low), m - half, 0.03 * half);
  EXPECT_NEAR(std::log(s.estimate.speedup_ci.high), m + half, 0.03 * half);
}

TEST(TwoLevelBootstrap, LaunchesMissingOnOneSideAreDropped) {
  const LaunchSpeedup s = two_level_bootstrap_speedup({{100, 101}, {}, {99, 100}}, {{150, 152}, {160}, {149, 151}}, 2);
  EXPECT_EQ(s.launches, 2u);
  EXPECT_NEAR(s.estimate.speedup, ((151.0 + 150.0) / 2) / ((100.5 + 99.5) / 2), 1e-12);
}

// A simulated study: the 1-GPU side is steady, the N-GPU side's speed level is drawn anew
// at every launch (sd 10% around its mean, as the 2-GPU machine's levels moved), runs within
// a launch differ by 2%. The true speedup is 1.5: the mean over launches of the N side over
// the 1-GPU mean.
struct SimulatedStudy {
  LaunchGroups one, n;
};

SimulatedStudy simulate(std::mt19937_64& generator, int launches, int runs_per_launch) {
  std::normal_distribution<double> level(1.0, 0.10), run(1.0, 0.02);
  SimulatedStudy study;
  for (int l = 0; l < launches; ++l) {
    const double n_level = level(generator);
    std::vector<double> one, n;
    for (int r = 0; r < runs_per_launch; ++r) {
      one.push_back(100.0 * run(generator));
      n.push_back(150.0 * n_level * run(generator));
    }
    study.one.push_back(one);
    study.n.push_back(n);
  }
  return study;
}

TEST(TwoLevelBootstrap, CoversTheTrueSpeedupWhereTheOneLevelIntervalDoesNot) {
  std::mt19937_64 generator(2024);
  BootstrapOptions options;
  options.resamples = 1000;  // enough for a standard error; keeps 300 studies fast
  int covered_two_level = 0, covered_one_level = 0;
  const int studies = 300;
  for (int s = 0; s < studies; ++s) {
    const SimulatedStudy study = simulate(generator, 3, 10);
    if (two_level_bootstrap_speedup(study.one, study.n, 2, options).estimate.speedup_ci.contains(1.5))
      ++covered_two_level;
    std::vector<double> one, n;
    for (size_t l = 0; l < study.one.size(); ++l) {
      one.insert(one.end(), study.one[l].begin(), study.one[l].end());
      n.insert(n.end(), study.n[l].begin(), study.n[l].end());
    }
    if (bootstrap_speedup(one, n, 2, options).speedup_ci.contains(1.5)) ++covered_one_level;
  }
  std::printf("coverage of the true speedup over %d simulated studies: two-level %d, one-level %d\n", studies,
              covered_two_level, covered_one_level);
  EXPECT_GE(covered_two_level, studies * 90 / 100) << "two-level coverage " << covered_two_level << "/" << studies;
  EXPECT_LT(covered_one_level, studies * 50 / 100) << "one-level coverage " << covered_one_level << "/" << studies;
}

// ---- Through the configuration summary -----------------------------------------------------

ConfigRecord record_with_launches(const std::vector<std::vector<double>>& throughput_by_launch, int world) {
  return testing_samples::record_over_launches("m", world, throughput_by_launch,
                                               static_cast<int>(throughput_by_launch.size()));
}

TEST(LaunchSummary, SpeedupOverLaunchesUsesTheLaunchesAndOutliersStayWithinTheirLaunch) {
  // Launch 2 of the 2-rank side runs at a level 40% above the others: the per-launch
  // outlier filter keeps it, and the interval is computed over the three launches.
  const ConfigSummary one = summarize_config(record_with_launches({{100, 101, 99}, {100, 100, 101}, {99, 100, 100}}, 1));
  const ConfigSummary two =
      summarize_config(record_with_launches({{150, 151, 149}, {210, 211, 209}, {150, 150, 151}}, 2));
  EXPECT_EQ(two.kept_throughputs.size(), 9u);
  EXPECT_EQ(two.launches, 3);
  EXPECT_GT(two.launch_variance.between_share, 0.99);
  EXPECT_TRUE(two.separate_levels);
  const ConfigSpeedup s = speedup_over_one_gpu(one, two);
  EXPECT_EQ(s.launches, 3);
  EXPECT_NEAR(s.speedup, (150.0 + 210.0 + 150.333333333333333) / 3 / 100.0, 1e-9);
  EXPECT_TRUE(s.speedup_ci.contains(1.5));
  EXPECT_TRUE(s.speedup_ci.contains(2.1));  // as wide as the launches disagree
}

}  // namespace
}  // namespace ddpscale

namespace ddpscale {
namespace {

// Independent source: scipy 1.10.1 (Debian python3-scipy). With s = 0.1 and L = 8,
// h = stats.t.ppf(0.975, 7) * s / sqrt(8); the interval 1.5 * exp(-+h); the least L' with
// stats.t.ppf(0.975, L' - 1) * s / sqrt(L') <= asinh(0.05) is 18 (17 gives 0.05154 > 0.04998).
// With s = 0.02 it is 3.
TEST(LaunchesForHalfWidth, SizesLaunchesFromTheSpreadTheIntervalShows) {
  EXPECT_EQ(launches_for_half_width(1.5, {1.3796957667198066, 1.6307943057253271}, 8, 0.05), 18);
  EXPECT_EQ(launches_for_half_width(1.5, {1.4751278878785132, 1.5252914804803033}, 8, 0.05), 3);
  // The same width over twice the launches means a wider spread between them (s = h sqrt(L) /
  // t): it asks for more.
  EXPECT_GT(launches_for_half_width(1.5, {1.3796957667198066, 1.6307943057253271}, 16, 0.05), 18);
  EXPECT_EQ(launches_for_half_width(1.5, {1.3796957667198066, 1.6307943057253271}, 1, 0.05), -1);
  EXPECT_EQ(launches_for_half_width(1.5, Interval{}, 8, 0.05), -1);
  EXPECT_EQ(launches_for_half_width(1.5, {1.3796957667198066, 1.6307943057253271}, 8, 0.05, 10), -1);
}

}  // namespace
}  // namespace ddpscale
