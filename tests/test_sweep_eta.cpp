// The sweep's estimate of the time left (trainer/study/sweep_eta.hpp), on plans whose run
// times are known: a simulated sweep feeds SweepEta the times a real one would, and the
// estimate is compared with the time the simulation really has left.
#include "trainer/study/sweep_eta.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ddpscale {
namespace {

ConfigurationShape shape(const std::string& model, int world, int64_t batch, int steps) {
  const std::string id = model + "_b" + std::to_string(batch) + "_w" + std::to_string(world);
  return ConfigurationShape{id, model, world, batch, steps};
}

// A configuration of the simulated sweep and what it really costs.
struct TrueConfiguration {
  ConfigurationShape shape;
  int runs = 1;
  double run_seconds = 1;    // every run
  double build_seconds = 0;  // before its first run (model build)
  double store_seconds = 0;  // after its last run (file, barriers)
};

double total_seconds(const std::vector<TrueConfiguration>& sweep) {
  double total = 0;
  for (const auto& c : sweep) total += c.build_seconds + c.runs * c.run_seconds + c.store_seconds;
  return total;
}

std::vector<PlannedConfiguration> plan_of(const std::vector<TrueConfiguration>& sweep) {
  std::vector<PlannedConfiguration> plan;
  for (const auto& c : sweep) plan.push_back(PlannedConfiguration{c.shape, c.runs, false, false});
  return plan;
}

// The estimate against the truth at one moment of the simulated sweep.
struct Reading {
  double at = 0, estimate = 0, truth = 0;
  double relative_error() const { return std::abs(estimate - truth) / truth; }
};

// Runs `sweep` one configuration after the other through SweepEta, reading its estimate
// every `every` seconds (and at every event) once the first configuration has finished.
std::vector<Reading> simulate(const std::vector<TrueConfiguration>& sweep, double every = 0.25) {
  SweepEta eta(plan_of(sweep));
  const double end = total_seconds(sweep);
  std::vector<Reading> readings;
  double now = 0;
  // Reads the estimate from `now` up to `until`, then moves the clock there.
  auto advance_to = [&](double until) {
    for (double t = now; t < until; t += every)
      if (const auto left = eta.seconds_left(t); left && end - t > 1e-9) readings.push_back({t, *left, end - t});
    now = until;
  };
  for (size_t i = 0; i < sweep.size(); ++i) {
    eta.group_started(i, 1, now);
    advance_to(now + sweep[i].build_seconds);
    eta.runs_began(now);
    for (int r = 0; r < sweep[i].runs; ++r) {
      advance_to(now + sweep[i].run_seconds);
      eta.run_done(i, now);
    }
    advance_to(now + sweep[i].store_seconds);
    eta.configuration_done(i, now);
  }
  return readings;
}

double worst_error(const std::vector<Reading>& readings) {
  double worst = 0;
  for (const auto& r : readings) worst = std::max(worst, r.relative_error());
  return worst;
}

TEST(SweepEta, NothingUntilTheFirstConfigurationHasFinished) {
  SweepEta eta({PlannedConfiguration{shape("m", 1, 8, 10), 2}, PlannedConfiguration{shape("m", 1, 16, 10), 2}});
  eta.group_started(0, 1, 0);
  EXPECT_FALSE(eta.seconds_left(0.5));
  eta.runs_began(0.5);
  eta.run_done(0, 1);
  EXPECT_FALSE(eta.seconds_left(1.5)) << "one run says nothing of a configuration's wrap-up";
  eta.run_done(0, 2);
  eta.configuration_done(0, 2.5);
  EXPECT_TRUE(eta.seconds_left(2.5));
}

TEST(SweepEta, NothingMeasuredNothingEstimated) {
  EXPECT_FALSE(estimate_seconds_left({PlannedConfiguration{shape("m", 1, 8, 10), 3}}, {}));
}

// Runs of 1 s and 3 s: the same model, world size and batch, 10 and 30 steps a run, and a
// third configuration on another world size. A step costs the same in all, so once the
// first configuration is measured the estimate is exact.
TEST(SweepEta, RunsOfOneAndThreeSecondsAreEstimatedExactlyFromTheirSteps) {
  const std::vector<TrueConfiguration> sweep = {
      {shape("m", 1, 8, 10), 3, 1.0, 0.5, 0.1},
      {ConfigurationShape{"m_b8_w1_long", "m", 1, 8, 30}, 3, 3.0, 0.5, 0.1},
      {shape("m", 2, 8, 10), 2, 1.0, 0.5, 0.1},  // another world size: from the mean step
  };
  const auto readings = simulate(sweep);
  ASSERT_FALSE(readings.empty());
  EXPECT_LT(worst_error(readings), 1e-9);
  // At the end of the first configuration: 0.6 + 9 + 0.6 + 2 s left.
  EXPECT_NEAR(readings.front().truth, 12.2, 1e-9);
  EXPECT_NEAR(readings.front().estimate, 12.2, 1e-9);
}

// A larger batch of the same model on the same world: with one batch measured, a step's
// time is taken as independent of the batch (a lower bound); with two, the measured growth
// is used. Runs as on 2 CPU ranks: 1 s at batch 8, 1.23 s at 16, 1.52 s at 32 (t ~ batch^0.3).
TEST(SweepEta, LargerBatchesWithinHalfOfTheTruthAfterTheFirstConfiguration) {
  const std::vector<TrueConfiguration> sweep = {
      {shape("m", 1, 8, 10), 4, 1.0, 0.5, 0.1},
      {shape("m", 1, 16, 10), 4, 1.23, 0.5, 0.1},
      {shape("m", 1, 32, 10), 4, 1.52, 0.5, 0.1},
  };
  const auto readings = simulate(sweep);
  ASSERT_FALSE(readings.empty());
  const double worst = worst_error(readings);
  RecordProperty("worst_relative_error", std::to_string(worst));
  EXPECT_LT(worst, 0.5);
  // After the first: batches 16 and 32 taken as 1 s a run: 8 + 1.2 s against 12.2 s.
  EXPECT_NEAR(readings.front().truth, 12.2, 1e-9);
  EXPECT_NEAR(readings.front().estimate, 9.2, 1e-9);
  // Once batch 16 is measured, batch 32 is estimated from the growth from 8 to 16.
  const Reading last_config_start = *std::find_if(readings.begin(), readings.end(),
                                                  [](const Reading& r) { return r.at >= 10.12 - 1e-9; });
  EXPECT_NEAR(last_config_start.truth, 0.6 + 4 * 1.52, 1e-9);
  EXPECT_NEAR(last_config_start.estimate, last_config_start.truth, 0.01 * last_config_start.truth);
}

// A study's later launches run the same configurations again: once the first launch is
// measured, what they take is its run times, setups and wrap-ups, exactly.
TEST(SweepEta, LaterLaunchesOfTheSameConfigurationsAreExact) {
  std::vector<TrueConfiguration> launch = {
      {shape("m", 1, 8, 10), 2, 1.0, 0.4, 0.1},
      {shape("m", 2, 8, 10), 2, 3.0, 0.4, 0.1},
  };
  std::vector<TrueConfiguration> study = launch;
  study.insert(study.end(), launch.begin(), launch.end());
  const auto readings = simulate(study);
  for (const auto& r : readings)
    if (r.at >= total_seconds(launch) - 1e-9) EXPECT_NEAR(r.estimate, r.truth, 1e-9) << "at " << r.at << " s";
}

TEST(SweepEta, TwinsShareTheirSetupAndWrapUp) {
  // Twins: their model built in 1 s, then A runs 1 s, B 2 s (A B B A), stored at 7.5 and 8 s.
  SweepEta eta({PlannedConfiguration{shape("m", 1, 8, 10), 2}, PlannedConfiguration{shape("m", 2, 8, 10), 2},
                PlannedConfiguration{shape("m", 1, 8, 10), 2}, PlannedConfiguration{shape("m", 2, 8, 10), 2}});
  eta.group_started(0, 2, 0);
  eta.runs_began(1);
  eta.run_done(0, 2);
  eta.run_done(1, 4);
  eta.run_done(1, 6);
  eta.run_done(0, 7);
  eta.configuration_done(0, 7.5);
  eta.configuration_done(1, 8);
  // What is left: two runs of 1 s and two of 2 s, and a setup of 0.5 s (the shared build)
  // and a wrap-up of 0.5 s for each twin.
  EXPECT_NEAR(*eta.seconds_left(8), 8.0, 1e-9);
}

TEST(SweepEta, APairedWindowsBlocksAreSharedByAllItsMembers) {
  // The paired design: two pairs of twins run (setups of 0.5 s each pair, runs of 1 s on one
  // rank and 2 s on two), then the window's 8 s of blocks, then all four are stored. A later
  // launch of the same four takes the same 15 s: 1 s of setups, 6 s of runs, 8 s of blocks.
  std::vector<PlannedConfiguration> plan;
  for (int launch = 0; launch < 2; ++launch)
    for (int64_t batch : {8, 16})
      for (int world : {1, 2}) plan.push_back(PlannedConfiguration{shape("m", world, batch, 10), 1});
  SweepEta eta(plan);
  eta.group_started(0, 2, 0);
  eta.runs_began(0.5);
  eta.run_done(0, 1.5);
  eta.run_done(1, 3.5);
  eta.group_started(2, 2, 3.5);
  eta.runs_began(4);
  eta.run_done(2, 5);
  eta.run_done(3, 7);
  for (size_t c = 0; c < 3; ++c) {
    eta.configuration_done(c, 15);
    EXPECT_FALSE(eta.seconds_left(15)) << "the window's members are not all stored yet";
  }
  eta.configuration_done(3, 15);
  // Were the blocks the last twins' wrap-up (4 s each, the mean over every configuration),
  // the later launch would read 1 + 6 + 4 x 4 = 23 s.
  EXPECT_NEAR(*eta.seconds_left(15), 15.0, 1e-9);
}

TEST(SweepEta, RunUnderWayIsTakenOffButNoMoreThanItsEstimate) {
  SweepEta eta({PlannedConfiguration{shape("m", 1, 8, 10), 1}, PlannedConfiguration{shape("m", 1, 8, 10), 2}});
  eta.group_started(0, 1, 0);
  eta.runs_began(0);
  eta.run_done(0, 2);
  eta.configuration_done(0, 2);  // 2 s a run, no setup or wrap-up
  eta.group_started(1, 1, 2);
  eta.runs_began(2);
  EXPECT_NEAR(*eta.seconds_left(3), 3.0, 1e-9);  // 4 s of runs, 1 s of them done
  EXPECT_NEAR(*eta.seconds_left(9), 2.0, 1e-9);  // the run overran: the other one is still ahead
}

TEST(SweepEta, BasisIsTheBestMeasurementThereIs) {
  MeasuredConfiguration small{shape("m", 1, 8, 10), {1.2, 0.8, 1.0}, 0.5, 0.1};
  MeasuredConfiguration other_model{shape("n", 1, 8, 10), {4.0}, std::nullopt, std::nullopt};
  const std::vector<MeasuredConfiguration> measured = {small, other_model};
  EXPECT_EQ(estimate_basis(shape("m", 1, 8, 20), measured), EstimateBasis::same_configuration);
  EXPECT_NEAR(*estimate_run_seconds(shape("m", 1, 8, 20), measured), 2.0, 1e-9);  // a mean of 1 s per 10 steps
  EXPECT_EQ(estimate_basis(shape("m", 1, 64, 10), measured), EstimateBasis::same_model_and_world);
  EXPECT_NEAR(*estimate_run_seconds(shape("m", 1, 64, 10), measured), 1.0, 1e-9);  // one batch: batch-independent
  EXPECT_EQ(estimate_basis(shape("m", 2, 8, 10), measured), EstimateBasis::mean_step);
  // (1.2 + 0.8 + 1 + 4) s over 40 steps, 10 steps a run.
  EXPECT_NEAR(*estimate_run_seconds(shape("m", 2, 8, 10), measured), 1.75, 1e-9);
}

TEST(SweepEta, TwoMeasuredBatchesGiveTheGrowthBetweenThem) {
  // 1 s at batch 8, 2 s at 32: t ~ batch^0.5, so batch 128 takes 4 s from its nearest (32).
  const std::vector<MeasuredConfiguration> measured = {
      {shape("m", 1, 8, 10), {1.0}, std::nullopt, std::nullopt}, {shape("m", 1, 32, 10), {2.0}, std::nullopt, std::nullopt}};
  EXPECT_NEAR(*estimate_run_seconds(shape("m", 1, 128, 10), measured), 4.0, 1e-9);
  // Noise that makes the larger batch faster is taken as no growth, never as a cheaper step.
  const std::vector<MeasuredConfiguration> noisy = {
      {shape("m", 1, 8, 10), {1.0}, std::nullopt, std::nullopt}, {shape("m", 1, 16, 10), {0.9}, std::nullopt, std::nullopt}};
  EXPECT_NEAR(*estimate_run_seconds(shape("m", 1, 64, 10), noisy), 0.9, 1e-9);
}


// --dry-run's steps not timed: the nearest timed step in parameters x batch, scaled in
// proportion to the cost (exponent 1). Exact arithmetic on exact binary fractions: compared
// exactly.
TEST(ExtrapolatedStep, ScalesTheNearestTimedStepByTheCost) {
  const std::vector<std::pair<double, double>> timed = {{1e6, 0.5}, {8e6, 2.0}};
  // 64e6 is nearest to 8e6 in log(cost): 2.0 s x 8.
  EXPECT_EQ(*extrapolated_step_seconds(64e6, timed), 16.0);
  // 2e6 is nearer to 1e6 (a factor 2) than to 8e6 (a factor 4): 0.5 s x 2.
  EXPECT_EQ(*extrapolated_step_seconds(2e6, timed), 1.0);
  EXPECT_EQ(*extrapolated_step_seconds(8e6, timed), 2.0);
}

// The exponent: log(seconds) on log(cost). Steps of 1, 2 and 4 s at costs 1, 4 and 16 grow
// as cost^0.5; a step time that falls with cost is held at 0, one that grows faster at 1.
// Sums of logs: within 1e-12.
TEST(ExtrapolatedStep, TheExponentIsFittedToTheTimedSteps) {
  EXPECT_NEAR(cost_exponent({{1, 1}, {4, 2}, {16, 4}}), 0.5, 1e-12);
  EXPECT_EQ(cost_exponent({{1, 4}, {4, 2}}), 0.0);
  EXPECT_EQ(cost_exponent({{1, 1}, {2, 8}}), 1.0);
  EXPECT_EQ(cost_exponent({{1, 1}}), 1.0);  // one step: nothing to fit
  EXPECT_NEAR(*extrapolated_step_seconds(64, {{16, 4}}, 0.5), 8.0, 1e-12);
}

TEST(ExtrapolatedStep, NothingWithoutATimedStep) {
  EXPECT_FALSE(extrapolated_step_seconds(1e6, {}).has_value());
  EXPECT_FALSE(extrapolated_step_seconds(0, {{1e6, 0.5}}).has_value());
  EXPECT_FALSE(extrapolated_step_seconds(1e6, {{1e6, 0.0}}).has_value());
}

}  // namespace
}  // namespace ddpscale
