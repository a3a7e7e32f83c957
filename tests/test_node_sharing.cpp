// The cost of sharing a node per GPU count (prediction/node_sharing): a cost measured at the
// asked count is used as measured; another count gets the nearest measured one, widened,
// checked here in float64 against the formulas worked by hand; a one-GPU study predicted from
// a profile with costs at 2 and 4 GPUs uses each target's own; the interval widens as the
// cost is carried further; and interconnects.yaml's single-block and list forms parse, with
// errors naming the file, the line and the key.
#include "prediction/interconnect_curves.hpp"
#include "prediction/node_sharing.hpp"
#include "prediction/scaling_prediction.hpp"
#include "results/statistics/statistics.hpp"
#include "tests/error_message.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace ddpscale {
namespace {

// Both sides evaluate the same float64 expressions in a different order: they agree to a few
// units in the last place of numbers of order 1, far inside this.
constexpr double kSameArithmetic = 1e-12;

const double kRoot3 = std::sqrt(3.0);
const double kGaussHermite[] = {-kRoot3, 0, 0, 0, 0, kRoot3};

struct LogMedian {
  double median, se;
};

// The median of log(1 + e) and its standard error sqrt(pi / 2) sd / sqrt(n), written out.
LogMedian log_median(const std::vector<double>& errors) {
  std::vector<double> logs;
  for (double e : errors) logs.push_back(std::log(1 + e));
  std::sort(logs.begin(), logs.end());
  const size_t n = logs.size();
  const double middle = n % 2 == 1 ? logs[n / 2] : (logs[n / 2 - 1] + logs[n / 2]) / 2;
  double sum = 0;
  for (double l : logs) sum += l;
  const double m = sum / static_cast<double>(n);
  double squares = 0;
  for (double l : logs) squares += (l - m) * (l - m);
  const double sd = std::sqrt(squares / static_cast<double>(n - 1));
  return {middle, std::sqrt(std::acos(-1.0) / 2) * sd / std::sqrt(static_cast<double>(n))};
}

// The carried errors as the header states them: each source error's log distance from its
// median, about the fitted centre, plus the six Gauss-Hermite points times the model's sd.
std::vector<double> carried_by_hand(const std::vector<double>& source, double centre, double model_sd) {
  const double source_median = log_median(source).median;
  std::vector<double> errors;
  for (double e : source)
    for (double z : kGaussHermite) errors.push_back(std::exp(centre + std::log(1 + e) - source_median + model_sd * z) - 1);
  return errors;
}

void expect_errors_near(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], kSameArithmetic) << "error " << i;
}

const std::vector<double> kTwoGpuErrors = {0.1, 0.3, 0.2};

// One cost at 2 GPUs: carried unchanged, centre c2 and standard error se2. The log2 N line
// through the origin has slope c2 (x(2) = 1): at 4 it says 2 c2, half the gap c2 / 2; at 8,
// 3 c2, half the gap c2.
TEST(NodeSharing, CarriedFromOneCountByHand) {
  const NodeSharingProfile profile{{{2, kTwoGpuErrors, "test"}}};
  const LogMedian two = log_median(kTwoGpuErrors);
  struct Case {
    int gpus;
    double x_log2;
  };
  for (const Case& c : {Case{4, 2}, Case{8, 3}}) {
    const NodeSharingAtN at = node_sharing_at(profile, c.gpus);
    EXPECT_FALSE(at.measured);
    EXPECT_EQ(at.spread_from_gpus, 2);
    EXPECT_NEAR(at.log_inflation, two.median, kSameArithmetic);
    EXPECT_NEAR(at.fit_sd, two.se, kSameArithmetic);
    EXPECT_NEAR(at.growth_sd, (c.x_log2 - 1) * two.median / 2, kSameArithmetic);
    const double model_sd = std::hypot(two.se, (c.x_log2 - 1) * two.median / 2);
    EXPECT_NEAR(at.model_sd, model_sd, kSameArithmetic);
    expect_errors_near(at.step_errors, carried_by_hand(kTwoGpuErrors, two.median, model_sd));
    EXPECT_NE(at.how.find("carried from 2 GPUs: the 2-GPU cost unchanged (median step error +20.0%)"),
              std::string::npos)
        << at.how;
    EXPECT_NE(at.how.find("a line through the origin, no cost at 1 GPU, and the costs measured at 2 GPUs"),
              std::string::npos)
        << at.how;
  }
  // Unchanged: four of each error's six copies sit on it, so the median stays 2's, 0.2.
  EXPECT_NEAR(median(node_sharing_at(profile, 4).step_errors), 0.2, kSameArithmetic);
  // At the measured count: the errors as measured, nothing added.
  const NodeSharingAtN measured = node_sharing_at(profile, 2);
  EXPECT_TRUE(measured.measured);
  EXPECT_EQ(measured.step_errors, kTwoGpuErrors);
  EXPECT_EQ(measured.how, "measured at 2 GPUs (3 model errors)");
}

// A cost measured at 1 GPU (a launch's shift against its twin) gives the log2 N line an
// intercept: through (0, c1) and (1, c2) it says 2 c2 - c1 at 4 GPUs (x = 2). The centre is
// still 2's, c2, so half the gap is |c2 - c1| / 2.
TEST(NodeSharing, CarriedWithAnInterceptWhereOneGpuWasMeasured) {
  const std::vector<double> one_gpu = {0.01, -0.01, 0.03};
  const NodeSharingProfile profile{{{1, one_gpu, "one"}, {2, kTwoGpuErrors, "two"}}};
  const LogMedian one = log_median(one_gpu), two = log_median(kTwoGpuErrors);
  const NodeSharingAtN at = node_sharing_at(profile, 4);
  EXPECT_EQ(at.spread_from_gpus, 2);
  EXPECT_NEAR(at.log_inflation, two.median, kSameArithmetic);
  EXPECT_NEAR(at.fit_sd, two.se, kSameArithmetic);
  EXPECT_NEAR(at.growth_sd, std::abs(two.median - one.median) / 2, kSameArithmetic);
  expect_errors_near(at.step_errors,
                     carried_by_hand(kTwoGpuErrors, two.median, std::hypot(two.se, std::abs(two.median - one.median) / 2)));
  EXPECT_NE(at.how.find("a line with the costs measured at 1 and 2 GPUs"), std::string::npos) << at.how;
}

// Costs at 2 and 4, carried to 8: 4's cost (the nearest below), centre c4, sd se4; the log2 N
// line through the origin (x = 1, 2) has slope (c2 + 2 c4) / 5 and says 3 (c2 + 2 c4) / 5 at
// 8. Between them, at 3 GPUs, 2's cost is carried (nearest below) and the line says
// log2(3) (c2 + 2 c4) / 5 there.
TEST(NodeSharing, CarriedPastAndBetweenTwoMeasuredCounts) {
  const std::vector<double> four = {0.3, 0.5, 0.45, 0.6};
  const NodeSharingProfile profile{{{2, kTwoGpuErrors, "two"}, {4, four, "four"}}};
  const LogMedian c2 = log_median(kTwoGpuErrors), c4 = log_median(four);
  const NodeSharingAtN eight = node_sharing_at(profile, 8);
  const double growth_sd = std::abs(3 * (c2.median + 2 * c4.median) / 5 - c4.median) / 2;
  EXPECT_EQ(eight.spread_from_gpus, 4);
  EXPECT_NEAR(eight.log_inflation, c4.median, kSameArithmetic);
  EXPECT_NEAR(eight.fit_sd, c4.se, kSameArithmetic);
  EXPECT_NEAR(eight.growth_sd, growth_sd, kSameArithmetic);
  expect_errors_near(eight.step_errors, carried_by_hand(four, c4.median, std::hypot(c4.se, growth_sd)));
  EXPECT_NE(eight.how.find("carried from 2 and 4 GPUs: the 4-GPU cost unchanged"), std::string::npos) << eight.how;

  const NodeSharingAtN three = node_sharing_at(profile, 3);
  EXPECT_EQ(three.spread_from_gpus, 2);
  EXPECT_NEAR(three.log_inflation, c2.median, kSameArithmetic);
  EXPECT_NEAR(three.growth_sd, std::abs(std::log2(3.0) * (c2.median + 2 * c4.median) / 5 - c2.median) / 2,
              kSameArithmetic);
  EXPECT_EQ(node_sharing_at(profile, 4).step_errors, four);
  EXPECT_THROW(node_sharing_at(NodeSharingProfile{{{1, {0.01}, "one"}}}, 4), std::invalid_argument);
}

MeasuredConfig one_gpu_study_config() {
  MeasuredConfig c;
  c.id = "m_b32_w1";
  c.params.model = "m";
  c.params.parameters = 250'000;  // 1e6 bytes of float32 gradients: one bucket
  c.params.scaling = "weak";
  c.params.exec = "eager";
  c.params.batch_per_rank = c.params.global_batch = 32;
  c.params.world_size = 1;
  c.params.bucket_mb = 25;
  c.params.overlap = true;
  c.params.allreduce_dtype = "float32";
  c.step_us = {1000, 20, 10};
  c.backward_us = {500, 10, 10};
  c.throughput = {32000, 640, 10};
  return c;
}

PredictOptions one_gpu_options() {
  PredictOptions options;
  options.targets = {{1, 2}, {1, 4}, {1, 8}};
  options.draws = 2000;
  options.allreduce = {{1e3, 1e6, 8e6}, {10, 100, 730}, 2, "two-gpu test curve"};
  return options;
}

// A study of one GPU predicted at 2, 4 and 8 GPUs from a profile measured at 2 and 4: each
// calibrated step is the model-only step times (1 + the median of the cost used there). At 4
// GPUs that is 4's median 0.5, far from 2's 0.2; at 8 the carried cost's.
TEST(NodeSharing, OneGpuStudyUsesTheCostMeasuredAtItsTarget) {
  StudyDigest study;
  study.configs.push_back(one_gpu_study_config());
  PredictOptions options = one_gpu_options();
  const ScalingPrediction model_only = predict_scaling(study, options);
  const std::vector<double> four = {0.4, 0.5, 0.6};
  options.node_sharing = {{{2, kTwoGpuErrors, "two-gpu runs"}, {4, four, "four-gpu runs"}}};
  const ScalingPrediction result = predict_scaling(study, options);
  ASSERT_EQ(result.predictions.size(), 3u);
  ASSERT_EQ(result.node_sharing_used.size(), 3u);
  const double expected_median[] = {0.2, 0.5, median(node_sharing_at(options.node_sharing, 8).step_errors)};
  for (size_t i = 0; i < 3; ++i) {
    const Prediction& p = result.predictions[i];
    EXPECT_TRUE(p.calibrated);
    EXPECT_NEAR(p.step_us.point, model_only.predictions[i].step_us.point * (1 + expected_median[i]), 1e-9)
        << p.topology.gpus_per_node << " GPUs";
  }
  EXPECT_GT(result.predictions[1].step_us.point, model_only.predictions[1].step_us.point * 1.2 * 1.2);
  EXPECT_TRUE(result.node_sharing_used[1].measured);
  EXPECT_FALSE(result.node_sharing_used[2].measured);
  EXPECT_NE(result.calibration.find("3 and 3 model errors measured on 2 and 4 GPUs of the named interconnect "
                                    "(2 GPUs: two-gpu runs; 4 GPUs: four-gpu runs)"),
            std::string::npos)
      << result.calibration;
  EXPECT_NE(result.calibration.find("at 4 GPUs a node, measured at 4 GPUs (3 model errors)"), std::string::npos);
  EXPECT_NE(result.calibration.find("at 8 GPUs a node, carried from 2 and 4 GPUs: the 4-GPU cost unchanged"),
            std::string::npos);
}

double relative_width(const PredictedValue& v) { return (v.interval95.high - v.interval95.low) / v.point; }

// Carried, the 4-GPU interval is wider than with the 2-GPU errors applied unchanged at 4
// (a profile holding them as measured there), by the model's sd; and wider at 8 than at 4.
TEST(NodeSharing, IntervalWidensWithTheCarry) {
  StudyDigest study;
  study.configs.push_back(one_gpu_study_config());
  PredictOptions options = one_gpu_options();
  options.node_sharing = {{{2, kTwoGpuErrors, "two"}}};
  const ScalingPrediction carried = predict_scaling(study, options);
  options.node_sharing = {{{2, kTwoGpuErrors, "two"}, {4, kTwoGpuErrors, "two, as if at four"}}};
  const ScalingPrediction unchanged = predict_scaling(study, options);
  EXPECT_GT(relative_width(carried.predictions[1].step_us), relative_width(unchanged.predictions[1].step_us));
  EXPECT_GT(relative_width(carried.predictions[2].step_us), relative_width(carried.predictions[1].step_us));
  EXPECT_GT(relative_width(carried.predictions[1].step_us), relative_width(carried.predictions[0].step_us));
}

// An error moves to another 1-GPU step as (1 + e)^((t / s)^-0.5) - 1, worked here in closed
// form: 0.2 recorded at 1000 us, moved to 4000 us, is 1.2^0.5 - 1; 0.5 recorded at 4000 us,
// moved to 1000 us, is 1.5^2 - 1 = 1.25. A target outside the recorded steps is held at the
// nearest end; a cost without steps is used as it is.
TEST(NodeSharing, ErrorsMovedToTheConfigurationsStepByHand) {
  ASSERT_EQ(kNodeSharingStepExponent, 0.25);
  NodeSharingAtN at;
  at.step_errors = {0.2, 0.5};
  at.one_gpu_step_us = {1000, 4000};
  // (1 + e)^((t / s)^-0.25) - 1: a step 4 times as long takes the log inflation times 1/sqrt(2).
  expect_errors_near(errors_at_step(at, 4000), {std::pow(1.2, 1 / std::sqrt(2.0)) - 1, 0.5});
  expect_errors_near(errors_at_step(at, 1000), {0.2, std::pow(1.5, std::sqrt(2.0)) - 1});
  expect_errors_near(errors_at_step(at, 2000),
                     {std::pow(1.2, std::pow(2.0, -0.25)) - 1, std::pow(1.5, std::pow(2.0, 0.25)) - 1});
  expect_errors_near(errors_at_step(at, 1e6), errors_at_step(at, 4000));
  expect_errors_near(errors_at_step(at, 10), errors_at_step(at, 1000));
  at.one_gpu_step_us.clear();
  expect_errors_near(errors_at_step(at, 4000), at.step_errors);
}

// A one-GPU study whose step is 1000 us, from a cost recorded at 1000 and 4000 us: its
// calibrated step is the model-only step times (1 + the median of the moved errors); carried
// to 8 GPUs, each of the six copies of an error keeps that error's step.
TEST(NodeSharing, OneGpuStudyTakesTheCostAtItsOwnStep) {
  StudyDigest study;
  study.configs.push_back(one_gpu_study_config());
  PredictOptions options = one_gpu_options();
  options.targets = {{1, 2}, {1, 8}};
  const ScalingPrediction model_only = predict_scaling(study, options);
  NodeSharingCost two{2, {0.2, 0.5, 0.1}, "two-gpu runs"};
  two.one_gpu_step_us = {1000, 4000, 1000};
  options.node_sharing = {{two}};
  const ScalingPrediction result = predict_scaling(study, options);
  ASSERT_EQ(result.predictions.size(), 2u);
  const double moved_median = 0.2;  // of {0.2, 1.5^sqrt(2) - 1 = 0.775, 0.1}
  EXPECT_NEAR(result.predictions[0].step_us.point, model_only.predictions[0].step_us.point * (1 + moved_median), 1e-9);
  const NodeSharingAtN carried = node_sharing_at(options.node_sharing, 8);
  ASSERT_EQ(carried.one_gpu_step_us.size(), 18u);
  for (size_t i = 0; i < 18; ++i) EXPECT_EQ(carried.one_gpu_step_us[i], two.one_gpu_step_us[i / 6]) << i;
  EXPECT_NEAR(result.predictions[1].step_us.point,
              model_only.predictions[1].step_us.point * (1 + median(errors_at_step(carried, 1000))), 1e-9);
  EXPECT_NE(result.calibration.find("at 2 GPUs a node, measured at 2 GPUs (3 model errors), each error moved from its "
                                    "own 1-GPU step to the predicted configuration's (log inflation times (step "
                                    "ratio)^-0.25)"),
            std::string::npos)
      << result.calibration;
}

using testing_errors::message_of;

const std::string kEntry =
    "interconnects:\n"
    "  test-4gpu:\n"
    "    about: four test GPUs\n"
    "    measured: 2026-11-27\n"
    "    source: a test\n"
    "    gpus: 4\n"
    "    bytes: [1000, 1000000]\n"
    "    time_us: [10, 100]\n";

// Both forms: one block (a map) and a list of blocks, kept in increasing GPU count; the list
// predict writes reads back. Bad input names the file, the line, the block and the key.
TEST(NodeSharing, BothFormsParseAndBadInputIsNamed) {
  const std::string list =
      "    node_sharing:\n"
      "      - gpus: 4\n"
      "        source: four\n"
      "        step_errors: [0.3, 0.4]\n"
      "      - {gpus: 2, source: two, step_errors: [0.1]}\n";
  const NodeSharingProfile parsed = parse_interconnect_catalog(kEntry + list, "t.yaml")[0].node_sharing;
  ASSERT_EQ(parsed.costs.size(), 2u);
  EXPECT_EQ(parsed.costs[0].gpus, 2);
  EXPECT_EQ(parsed.costs[1].gpus, 4);
  EXPECT_EQ(parsed.costs[1].source, "four");
  EXPECT_EQ(parsed.costs[1].step_errors, (std::vector<double>{0.3, 0.4}));
  const NodeSharingProfile back =
      parse_interconnect_catalog(kEntry + node_sharing_yaml(parsed), "t.yaml")[0].node_sharing;
  ASSERT_EQ(back.costs.size(), 2u);
  EXPECT_EQ(back.costs[1].step_errors, parsed.costs[1].step_errors);  // 0.3 and 0.4 at 4 digits, read back
  const NodeSharingProfile single =
      parse_interconnect_catalog(kEntry + "    node_sharing: {gpus: 2, source: s, step_errors: [0.1]}\n", "t.yaml")[0]
          .node_sharing;
  ASSERT_EQ(single.costs.size(), 1u);
  EXPECT_EQ(single.costs[0].gpus, 2);

  const auto refused = [&](const std::string& block) {
    return message_of([&] { parse_interconnect_catalog(kEntry + block, "t.yaml"); });
  };
  const std::string twice = refused("    node_sharing:\n      - {gpus: 2, source: a, step_errors: [0.1]}\n"
                                    "      - {gpus: 2, source: b, step_errors: [0.2]}\n");
  EXPECT_NE(twice.find("t.yaml:11: interconnect 'test-4gpu.node_sharing[1]': a second cost at 2 GPUs"),
            std::string::npos)
      << twice;
  const std::string no_errors = refused("    node_sharing:\n      - {gpus: 2, source: a, step_errors: [0.1]}\n"
                                        "      - {gpus: 4, source: b}\n");
  EXPECT_NE(no_errors.find("t.yaml:11: interconnect 'test-4gpu.node_sharing[1]' needs step_errors"),
            std::string::npos)
      << no_errors;
  const std::string bad_gpus = refused("    node_sharing:\n      - {gpus: four, source: a, step_errors: [0.1]}\n");
  EXPECT_NE(bad_gpus.find("t.yaml:10: interconnect 'test-4gpu.node_sharing[0]': gpus is 'four', not a whole number"),
            std::string::npos)
      << bad_gpus;
  const std::string bad_error = refused("    node_sharing:\n      - {gpus: 2, source: a, step_errors: [0.1, x]}\n");
  EXPECT_NE(bad_error.find("t.yaml:10: interconnect 'test-4gpu.node_sharing[0]': step_errors holds 'x', not a number"),
            std::string::npos)
      << bad_error;
  const std::string one_only = refused("    node_sharing:\n      - {gpus: 1, source: a, step_errors: [0.01]}\n");
  EXPECT_NE(one_only.find("t.yaml:10: interconnect 'test-4gpu.node_sharing': needs a cost measured at 2 or more GPUs"),
            std::string::npos)
      << one_only;
  const std::string unknown = refused("    node_sharing:\n      - {gpus: 2, sources: a, step_errors: [0.1]}\n");
  EXPECT_NE(unknown.find("t.yaml:10: interconnect 'test-4gpu.node_sharing[0]': unknown key 'sources'"),
            std::string::npos)
      << unknown;
  EXPECT_NE(refused("    node_sharing: []\n").find("needs a cost measured at 2 or more GPUs"), std::string::npos);
  EXPECT_NE(refused("    node_sharing: [3]\n").find("'test-4gpu.node_sharing[0]': expected a map"), std::string::npos);
}

}  // namespace
}  // namespace ddpscale
