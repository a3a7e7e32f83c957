// Speedups and "pays off" (study_analysis): the ratio of mean throughputs, its bootstrap
// interval (which decides whether it paid off) and Welch p (checked against scipy, see
// report_test_helpers.hpp), and no interval, p or pay-off from single runs.
#include "tests/report_test_helpers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace ddpscale {
namespace {

using namespace report_test;

struct PairCase {
  std::vector<double> one, two;
  double p;      // scipy, see report_test_helpers.hpp
  bool paid_off;
};

void check_pair(const PairCase& pc) {
  const ConfigRecord one = make_config("mlp", 1000, 32, 1, pc.one);
  const ConfigRecord two = make_config("mlp", 1000, 32, 2, pc.two);
  const StudyAnalysis a = analyze_study({one, two});
  ASSERT_EQ(a.comparisons.size(), 1u);
  const Comparison& c = a.comparisons[0];
  double sum_one = 0, sum_two = 0;
  for (double v : pc.one) sum_one += v;
  for (double v : pc.two) sum_two += v;
  const double expected = (sum_two / pc.two.size()) / (sum_one / pc.one.size());
  EXPECT_EQ(a.configs[c.one_gpu].outliers_removed, 0u);
  EXPECT_EQ(a.configs[c.n_gpu].outliers_removed, 0u);
  EXPECT_DOUBLE_EQ(a.configs[c.one_gpu].throughput.mean, sum_one / pc.one.size());
  EXPECT_NEAR(c.speedup.speedup, expected, 1e-12 * expected);
  EXPECT_NEAR(c.speedup.p_value, pc.p, 1e-6 * pc.p);
  EXPECT_TRUE(c.speedup.speedup_ci.contains(c.speedup.speedup));
  EXPECT_EQ(c.paid_off(), pc.paid_off);
}

TEST(ReportSpeedup, RatioOfMeansAndSignificantGainPaysOff) {
  // Means 180 and 100: speedup 1.8; scipy p = 5.437303319663031e-09.
  check_pair({kOneRank, kTwoRanks, 5.437303319663031e-09, true});
}

TEST(ReportSpeedup, FasterButWithAnIntervalReachingBelowOneDoesNotPayOff) {
  // Means 105 and 100: speedup 1.05, but runs this spread put its interval across 1 (scipy p = 0.8088874454935351).
  check_pair({{100, 140, 60, 120, 80}, {105, 145, 65, 125, 85}, 0.8088874454935351, false});
}

TEST(ReportSpeedup, SignificantlySlowerDoesNotPayOff) {
  // Means 50 and 100: speedup 0.5, scipy p = 1.4663766681006931e-09.
  check_pair({kOneRank, {50, 51, 49, 50.5, 49.5}, 1.4663766681006931e-09, false});
}

TEST(ReportSpeedup, SingleRunsGiveAPointButNoIntervalNoPAndNoPayOff) {
  const StudyAnalysis a = analyze_study({make_config("mlp", 1000, 32, 1, {100}), make_config("mlp", 1000, 32, 2, {300})});
  ASSERT_EQ(a.comparisons.size(), 1u);
  EXPECT_DOUBLE_EQ(a.comparisons[0].speedup.speedup, 3.0);
  EXPECT_FALSE(a.comparisons[0].speedup.speedup_ci.valid());
  EXPECT_TRUE(std::isnan(a.comparisons[0].speedup.p_value));
  EXPECT_FALSE(a.comparisons[0].paid_off());
}

}  // namespace
}  // namespace ddpscale
