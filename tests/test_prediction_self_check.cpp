// The prediction's self-check against the paired speedup and the speedup's interval drawn
// from its own 1-GPU step (prediction/scaling_prediction.hpp), on studies built by hand.
#include "prediction/scaling_prediction.hpp"
#include "tests/prediction_test_helpers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ddpscale {
namespace {

// The same study, its 2-rank runs measured in a slower host state than its 1-rank ones (every
// step 30% longer), and its paired speedup measured at the model's own ratio: the self-check
// and the node-sharing error are taken against the paired speedup, in which the host's state
// cancels, so both read 0 where the runs' throughput would read an error of about 30%.
TEST(PredictionSelfCheck, APairedSpeedupIsWhatTheModelIsCheckedAgainst) {
  const std::vector<double> bytes = {1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  std::vector<double> times;
  for (double b : bytes) times.push_back(0.02 * std::pow(b, 0.6));
  const auto config = [](int world, double step) {
    return measured_config("m", 1'000'000, 8, world, {step, step * 1.01, step * 0.99}, {step / 2, step / 2, step / 2});
  };
  StudyDigest study;
  study.commbench_bytes = bytes;
  study.commbench_time_us = times;
  study.commbench_ranks = 2;
  study.configs.push_back(config(1, 1000));
  const ScalingPrediction alone = predict_scaling([&] {
    StudyDigest s = study;
    s.configs.push_back(config(2, 1000));
    return s;
  }(), PredictOptions{});
  const double model_speedup = alone.validation.at(0).model_only.speedup.point;
  ASSERT_GT(model_speedup, 1.0);
  // The 2-rank runs at a host state 30% slower than the model's step; the paired speedup at
  // the model's ratio.
  study.configs.push_back(config(2, 1.3 * 2 * 1000 / model_speedup));
  const ScalingPrediction by_runs = predict_scaling(study, PredictOptions{});
  EXPECT_NEAR(by_runs.validation.at(0).model_only_error, 1.3 - 1, 0.01);
  EXPECT_FALSE(by_runs.validation.at(0).measured_paired);
  study.configs.back().paired_speedup = model_speedup;
  const ScalingPrediction by_pairs = predict_scaling(study, PredictOptions{});
  const ValidationRow& row = by_pairs.validation.at(0);
  EXPECT_TRUE(row.measured_paired);
  EXPECT_EQ(row.measured_speedup, model_speedup);
  EXPECT_NEAR(row.model_only_error, 0.0, 1e-12);
  EXPECT_TRUE(row.model_only_covered);
  ASSERT_EQ(by_pairs.measured_node_sharing.costs.size(), 1u);
  EXPECT_NEAR(by_pairs.measured_node_sharing.costs[0].step_errors.at(0), 0.0, 1e-12);
}

// A speedup predicted from its own 1-GPU step is N times that step over the N-GPU one: the
// 1-GPU step's measurement spread stands on both sides. Model only, the interval then holds
// the future measurement's own error alone, a factor 1/f on the point with f ~ N(1, se), se
// the 1-GPU step's relative standard error (runs 6400, 8000 and 9600 us: 11.5%), so its
// width is about 1/(1 - 1.96 se) - 1/(1 + 1.96 se) = 0.47 of the point; with the 1-GPU step
// drawn in the denominator alone (the same spread once more) it would be about 0.71.
TEST(PredictionInterval, A1GpuStepsSpreadCancelsInTheSpeedupPredictedFromIt) {
  const std::vector<double> bytes = {1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  std::vector<double> times;
  for (double b : bytes) times.push_back(0.02 * std::pow(b, 0.6));  // exact in log-log: no curve error
  StudyDigest study;
  study.commbench_bytes = bytes;
  study.commbench_time_us = times;
  study.commbench_ranks = 2;
  study.configs.push_back(measured_config("m", 1'000'000, 8, 1, {6400, 8000, 9600}, {3000, 3000, 3000}));
  PredictOptions options;
  options.targets = {{1, 2}};
  options.draws = 20000;
  const ScalingPrediction result = predict_scaling(study, options);
  const PredictedValue& speedup = result.predictions.at(0).speedup;
  const double se = 1600.0 / std::sqrt(3.0) / 8000;
  const double expected = 1 / (1 - 1.96 * se) - 1 / (1 + 1.96 * se);
  EXPECT_NEAR((speedup.interval95.high - speedup.interval95.low) / speedup.point, expected, 0.1 * expected)
      << speedup.interval95.low << " " << speedup.point << " " << speedup.interval95.high;
}

}  // namespace
}  // namespace ddpscale
