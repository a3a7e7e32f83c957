// The cost of sharing a node, as a named interconnect profile carries it to a study that
// measured one GPU only: the relative errors of the predictor's model-only step time on
// configurations measured on that hardware at N GPUs (measured N-GPU step / predicted - 1).
// They hold what the model leaves out when N ranks share a host and their GPUs: ranks
// computing slower beside each other, the host issuing NCCL calls, NCCL's kernels taking
// SMs, the slower of N ranks setting the pace. docs/methodology.md, "Predicted scaling".
#pragma once
#include <string>
#include <vector>

namespace ddpscale {

struct NodeSharingCost {
  int gpus = 0;                     // the GPU count the errors were measured at
  std::vector<double> step_errors;  // one per measured configuration
  std::string source;               // the studies and command they come from
  bool given() const { return !step_errors.empty(); }
};

// The `node_sharing:` block of an interconnects.yaml entry holding `cost`, for a user to
// add to the entry of the machine the study ran on (indented for an entry's keys).
std::string node_sharing_yaml(const NodeSharingCost& cost);

}  // namespace ddpscale
