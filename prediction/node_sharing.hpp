// The cost of sharing a node, as a named interconnect profile carries it to a study that
// measured one GPU only: the relative errors of the predictor's model-only step time on
// configurations measured on that hardware at N GPUs (measured N-GPU step / predicted - 1).
// They hold what the model leaves out when N ranks share a host and their GPUs: ranks
// computing slower beside each other, the host issuing NCCL calls, NCCL's kernels taking
// SMs, the slower of N ranks setting the pace. A profile may hold costs measured at several
// GPU counts; a count it has not measured gets one carried from those it has by a stated
// model. docs/methodology.md, "Predicted scaling".
#pragma once
#include <string>
#include <vector>

namespace ddpscale {

struct NodeSharingCost {
  int gpus = 0;                     // the GPU count the errors were measured at
  std::vector<double> step_errors;  // one per measured configuration
  std::string source;               // the studies and command they come from
  // Optional, one per error: the 1-GPU step (us, mean) its prediction started from. Given,
  // each error is moved to the step of the configuration it calibrates (errors_at_step).
  std::vector<double> one_gpu_step_us;
  bool given() const { return !step_errors.empty(); }
};

// The costs of one machine, at most one per GPU count, in increasing GPU count. At least one
// is measured at 2 or more GPUs where any is given (a cost at 1 GPU alone carries nothing).
struct NodeSharingProfile {
  std::vector<NodeSharingCost> costs;
  bool given() const { return !costs.empty(); }
  const NodeSharingCost* measured_at(int gpus) const;  // null where that count was not measured
  std::string gpu_counts() const;                      // "2 and 4", for messages
};

// The typical log inflation at `gpus` from the least-squares line in log2 N through each
// measured count's median of log(1 + error): through the origin (no cost at 1 GPU, where the
// model is its own measurement) unless the profile measured 1 GPU, then with an intercept. sd:
// the line's standard error there, from each median's (sqrt(pi / 2) sd / sqrt(n)). It bounds
// how far a carried cost may have grown, not where it is.
struct FittedInflation {
  double log_inflation = 0;
  double sd = 0;
};
FittedInflation log2_line_inflation(const NodeSharingProfile& profile, int gpus);

// The cost a prediction on `gpus` GPUs sharing a node is calibrated by: the one measured at
// that count, or one carried to it. Carried: the measured count nearest below (else above)
// is taken unchanged, its errors spread by the carry's own uncertainty, model_sd (in log):
// its median's standard error and half the gap between its median and the log2 N line at
// `gpus`, drawn by the three-point Gauss-Hermite rule (-sqrt 3, 0, +sqrt 3 with weights 1/6,
// 2/3, 1/6, as six equally likely copies), which keeps a normal's variance and kurtosis. Why
// unchanged: pooled over seven 4x H200 leases the 4-GPU log inflation was 1.28 times the
// 2-GPU one, where N - 1 growth says 3 and log2 N 2 (docs/methodology.md, "The cost at each N").
struct NodeSharingAtN {
  int gpus = 0;
  bool measured = false;
  std::vector<double> step_errors;  // what calibrates the prediction
  std::vector<double> one_gpu_step_us;  // one per error where the cost records them
  std::string how;                  // "measured at 4 GPUs ..." or "carried from 2 GPUs: ..."
  // Carried only:
  int spread_from_gpus = 0;         // the measured count whose errors' spread is kept
  double log_inflation = 0;         // the median log(1 + error) carried (the nearest count's)
  double fit_sd = 0, growth_sd = 0, model_sd = 0;  // model_sd^2 = fit_sd^2 + growth_sd^2
};
// Throws std::invalid_argument when the profile has no cost at 2 or more GPUs.
NodeSharingAtN node_sharing_at(const NodeSharingProfile& profile, int gpus);

// How the cost of sharing a node falls with the 1-GPU step it is added to: an error e measured
// on a configuration whose 1-GPU step took s us, moved to a step of t us, becomes
// (1 + e)^((t / s)^-kNodeSharingStepExponent) - 1: its log inflation scaled by that power.
// The host's share of a short step is large and of a long one small: over seven 4x H200
// leases, errors against the paired speedup, the least-squares slope of log(log(1 + e)) on
// log s was -0.27 at 2 GPUs and -0.24 at 4 (docs/methodology.md, "The cost of sharing a node").
inline constexpr double kNodeSharingStepExponent = 0.25;

// `at`'s errors for a configuration whose 1-GPU step takes `one_gpu_step_us`, each moved from
// its own 1-GPU step by the rule above, with the target step held within the recorded steps'
// range (no extrapolation past what was measured). Unchanged where `at` records no steps or
// the configuration's step is not a positive number (not measured).
std::vector<double> errors_at_step(const NodeSharingAtN& at, double one_gpu_step_us);

// The `node_sharing:` block of an interconnects.yaml entry holding `cost`, for a user to
// add to the entry of the machine the study ran on (indented for an entry's keys).
std::string node_sharing_yaml(const NodeSharingCost& cost);
// One cost as above; several as a list of such blocks under `node_sharing:`.
std::string node_sharing_yaml(const NodeSharingProfile& profile);

}  // namespace ddpscale
