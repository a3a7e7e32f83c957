// Whether a prediction may be used as it stands: the study's step and the allreduce curve it
// is combined with should come from the same hardware, and the predictor should pass its
// self-check on the study's own N-GPU configurations. Both verdicts go into the prediction
// (ScalingPrediction::warnings, ::unreliable), which predict.md, the report's "Predicted
// scaling" section and the command lines then state; a failed self-check also withholds the
// break-even verdicts ("pays off from") that would be drawn from the predictions.
#pragma once
#include "prediction/scaling_prediction.hpp"

#include <string>

namespace ddpscale {

// Why the study and the curve were measured on different hardware ("" where they agree or
// cannot be told apart): a study on CPU with a curve of GPUs, or a study whose GPUs the
// curve's machine does not name. Only a given curve (options.allreduce) can differ: a study's
// own commbench ran where its steps did.
std::string hardware_mismatch(const StudyDigest& study, const PredictOptions& options);

// The largest probability, for 95% intervals that hold, of `inside` or fewer of n measured
// means falling inside them: below kSelfCheckAlpha the intervals are judged not to hold.
double binomial_lower_tail(size_t inside, size_t n, double p);
constexpr double kSelfCheckAlpha = 0.01;
// A median |error| above this says nothing about whether N ranks pay off, whatever the
// intervals: the predictions are off by more than half the measured throughput.
constexpr double kLargestUsableMedianError = 0.5;

// Why the self-check of the predictions as made (calibrated by the study's own N-GPU
// configurations where it has them, model only otherwise) fails, or "" where it passes or
// the study has nothing to check against.
std::string self_check_failure(const ScalingPrediction& result);

// Sets result.warnings and result.unreliable from the two above.
void assess_predictions(ScalingPrediction& result, const StudyDigest& study, const PredictOptions& options);

}  // namespace ddpscale
