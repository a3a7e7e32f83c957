#include "prediction/prediction_trust.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace ddpscale {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string percent_text(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100 * fraction);
  return buffer;
}

bool study_on_cpu(const StudyDigest& study) {
  return !study.configs.empty() && std::all_of(study.configs.begin(), study.configs.end(), [](const MeasuredConfig& c) {
           return c.params.device == "cpu";
         });
}

}  // namespace

std::string hardware_mismatch(const StudyDigest& study, const PredictOptions& options) {
  if (!options.allreduce.given() || options.allreduce_hardware.empty()) return "";
  const std::string curve = options.allreduce.source;
  if (study_on_cpu(study))
    return "the study's steps were measured on CPU and the allreduce curve on GPUs (" + options.allreduce_hardware +
           "): the predictions combine a CPU step with a GPU allreduce, so they describe neither this machine with "
           "more ranks nor that machine; measure the step on the curve's GPUs (or give a curve measured where the "
           "study ran, --allreduce FILE.csv)";
  if (study.gpu_names.empty()) return "";
  const std::string& gpu = study.gpu_names.front();
  if (lower(options.allreduce_hardware).find(lower(gpu)) != std::string::npos) return "";
  return "the study's steps were measured on " + gpu + " and the allreduce curve on other hardware (" +
         options.allreduce_hardware + "): each GPU's step and its links are taken as they were measured on different "
         "machines";
}

double binomial_lower_tail(size_t inside, size_t n, double p) {
  double tail = 0;
  for (size_t k = 0; k <= std::min(inside, n); ++k) {
    const double log_choose = std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
    tail += std::exp(log_choose + k * std::log(p) + (n - k) * std::log1p(-p));
  }
  return std::min(1.0, tail);
}

std::string self_check_failure(const ScalingPrediction& result) {
  const ValidationSummary& s = result.summary;
  if (s.configurations == 0) return "";
  // The forward predictions are calibrated by the study's own errors where it has N-GPU
  // configurations: their leave-one-out check is the calibrated one.
  const bool calibrated = result.calibration_configurations > 0;
  const double coverage = calibrated ? s.calibrated_coverage : s.model_only_coverage;
  const double error = calibrated ? s.calibrated_median_abs_error : s.model_only_median_abs_error;
  if (!std::isfinite(coverage) || !std::isfinite(error)) return "";
  const auto inside = static_cast<size_t>(std::lround(coverage * static_cast<double>(s.configurations)));
  const std::string check = std::string(calibrated ? "calibrated" : "model-only") + " self-check: median |error| " +
                            percent_text(error) + ", the measured mean inside the 95% interval for " +
                            std::to_string(inside) + " of " + std::to_string(s.configurations) + " configurations";
  const double chance = binomial_lower_tail(inside, s.configurations, 0.95);
  if (chance < kSelfCheckAlpha)
    return "the " + check + ": 95% intervals that held would miss that often with a probability below " +
           percent_text(kSelfCheckAlpha) + ", so the intervals do not hold for this study";
  if (error > kLargestUsableMedianError)
    return "the " + check + ": the predictions are off by more than half the measured throughput";
  return "";
}

void assess_predictions(ScalingPrediction& result, const StudyDigest& study, const PredictOptions& options) {
  result.warnings.clear();
  if (std::string mismatch = hardware_mismatch(study, options); !mismatch.empty())
    result.warnings.push_back(std::move(mismatch));
  result.unreliable = self_check_failure(result);
}

}  // namespace ddpscale
