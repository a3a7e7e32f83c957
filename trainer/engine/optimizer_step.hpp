// The optimizer behind one interface: LibTorch's own Adam/SGD (a loop over parameters,
// several kernels each), or on CUDA PyTorch's fused Adam kernel (one launch for all
// parameters), which is what makes a small model's step cheap on the host.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace ddpscale {

class OptimizerStep {
 public:
  virtual ~OptimizerStep() = default;
  virtual void step() = 0;
  virtual std::string describe() const = 0;  // "adam", "adam-fused", "sgd"
};

// kind: adam | sgd. fused: use the fused CUDA Adam kernel when the parameters are on a
// GPU and this LibTorch has it (throws std::invalid_argument otherwise).
std::unique_ptr<OptimizerStep> make_optimizer(const std::string& kind, bool fused, double lr,
                                              std::vector<torch::Tensor> parameters);

// Whether the fused path exists for parameters on this device in this build.
bool fused_adam_available(const torch::Device& device);

}  // namespace ddpscale
