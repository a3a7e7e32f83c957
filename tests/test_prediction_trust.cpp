// Whether a prediction may be used as it stands (prediction/prediction_trust.hpp): a study on
// other hardware than its allreduce curve is warned of, and a failed self-check marks the
// predictions unreliable and withholds the break-even verdict.
#include "prediction/prediction_report.hpp"
#include "prediction/prediction_trust.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace ddpscale {
namespace {

StudyDigest study_on(const std::string& device, std::vector<std::string> gpu_names = {}) {
  StudyDigest study;
  MeasuredConfig c;
  c.params.device = device;
  study.configs.push_back(c);
  study.gpu_names = std::move(gpu_names);
  return study;
}

PredictOptions with_named_curve(const std::string& hardware) {
  PredictOptions options;
  options.allreduce = {{8, 1024}, {10, 20}, 2, "h100-nvlink-2gpu: " + hardware};
  options.allreduce_hardware = hardware;
  return options;
}

const std::string kH100 = "2x NVIDIA H100 80GB HBM3 in one node, NVLink between them";

TEST(HardwareMismatch, ACpuStudyWithAGpuCurveIsWarnedOf) {
  const std::string warning = hardware_mismatch(study_on("cpu"), with_named_curve(kH100));
  EXPECT_EQ(warning.rfind("the study's steps were measured on CPU and the allreduce curve on GPUs (" + kH100 + ")", 0),
            0u)
      << warning;
}

TEST(HardwareMismatch, TheSameGpusOrAnUnknownCurveSayNothing) {
  EXPECT_EQ(hardware_mismatch(study_on("cuda", {"NVIDIA H100 80GB HBM3"}), with_named_curve(kH100)), "");
  PredictOptions csv = with_named_curve("");  // a commbench.csv: where it was measured is not recorded
  EXPECT_EQ(hardware_mismatch(study_on("cpu"), csv), "");
  EXPECT_EQ(hardware_mismatch(study_on("cpu"), PredictOptions{}), "");  // the study's own curve
}

TEST(HardwareMismatch, OtherGpusAreNamed) {
  const std::string warning = hardware_mismatch(study_on("cuda", {"NVIDIA H200"}), with_named_curve(kH100));
  EXPECT_EQ(warning.rfind("the study's steps were measured on NVIDIA H200 and the allreduce curve on other hardware", 0),
            0u)
      << warning;
}

// P(X <= k) for X ~ Binomial(n, 0.95), against values computed by hand: 0.05^2 = 0.0025 and
// 0.05^3 + 3 x 0.95 x 0.05^2 = 0.00725. Summed logs of factorials: within 1e-12 relative.
TEST(SelfCheck, BinomialLowerTail) {
  EXPECT_NEAR(binomial_lower_tail(0, 2, 0.95), 0.0025, 0.0025 * 1e-12);
  EXPECT_NEAR(binomial_lower_tail(1, 3, 0.95), 0.00725, 0.00725 * 1e-12);
  EXPECT_NEAR(binomial_lower_tail(3, 3, 0.95), 1.0, 1e-12);
}

ScalingPrediction checked(size_t configurations, double calibrated_coverage, double calibrated_error) {
  ScalingPrediction result;
  result.summary.configurations = configurations;
  result.calibration_configurations = configurations;  // calibrated by the study's own N-GPU runs
  result.summary.calibrated_coverage = calibrated_coverage;
  result.summary.calibrated_median_abs_error = calibrated_error;
  result.summary.model_only_coverage = 1.0;  // not the check the calibrated predictions answer to
  result.summary.model_only_median_abs_error = 0.01;
  return result;
}

// The 2-rank CPU study of a new user: calibrated 41.7% median |error|, 0 of 3 inside.
TEST(SelfCheck, NoneInsideOfSeveralFails) {
  const std::string failure = self_check_failure(checked(3, 0.0, 0.417));
  EXPECT_EQ(failure, "the calibrated self-check: median |error| 41.7%, the measured mean inside the 95% interval for "
                     "0 of 3 configurations: 95% intervals that held would miss that often with a probability below "
                     "1.0%, so the intervals do not hold for this study");
}

TEST(SelfCheck, PassesWhenTheIntervalsHoldAndTheErrorIsSmall) {
  EXPECT_EQ(self_check_failure(checked(26, 25.0 / 26, 0.05)), "");
  EXPECT_EQ(self_check_failure(checked(1, 0.0, 0.2)), "");  // one miss of one: 5% for intervals that hold
  EXPECT_EQ(self_check_failure(ScalingPrediction{}), "");   // nothing to check against
}

TEST(SelfCheck, AMedianErrorAboveHalfFailsWhateverTheIntervals) {
  EXPECT_NE(self_check_failure(checked(2, 1.0, 0.6)).find("off by more than half"), std::string::npos);
}

Prediction pays_off(const std::string& model) {
  Prediction p;
  p.model = model;
  p.parameters = 1000;
  p.scaling = "weak";
  p.exec = "eager";
  p.batch_per_rank = 8;
  p.topology = {1, 8};
  p.speedup = {2.53, {1.89, 3.43}};
  return p;
}

std::string markdown_of(const ScalingPrediction& result) {
  ReportDocument doc;
  add_prediction_blocks(doc, result, PredictOptions{}, "studies/mynet", 2, nullptr);
  return render_markdown(doc);
}

TEST(PredictionDocument, AFailedSelfCheckWithholdsTheBreakEvenVerdict) {
  ScalingPrediction result = checked(3, 0.0, 0.417);
  result.predictions = {pays_off("mynet")};
  EXPECT_NE(markdown_of(result).find("mynet (1000)"), std::string::npos);  // the verdict, while trusted
  result.unreliable = self_check_failure(result);
  const std::string text = markdown_of(result);
  EXPECT_NE(text.find("**Unreliable:** the predictions below failed their self-check"), std::string::npos) << text;
  EXPECT_NE(text.find("Not drawn: the predictions failed their self-check"), std::string::npos) << text;
  EXPECT_EQ(text.find("mynet (1000)"), std::string::npos) << text;  // no "pays off from"
  EXPECT_EQ(text.find("pays off from"), std::string::npos) << text;
}

TEST(PredictionDocument, AHardwareWarningLeadsTheSection) {
  ScalingPrediction result;
  result.predictions = {pays_off("mynet")};
  assess_predictions(result, study_on("cpu"), with_named_curve(kH100));
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(markdown_of(result).find("**Warning:** the study's steps were measured on CPU"), std::string::npos);
}

}  // namespace
}  // namespace ddpscale
