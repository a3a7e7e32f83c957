// An autograd post hook on every parameter's gradient accumulator: it runs once the
// parameter's .grad is final for this backward pass, the moment PyTorch's c10d reducer marks
// the parameter ready. The gradient reducer launches buckets from it; the gradient timer
// (engine/gradient_timer.hpp) stamps the time.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

namespace ddpscale {

class GradientReadyHooks {
 public:
  // on_ready(i) runs each time parameters[i]'s accumulator has run (a parameter used twice
  // in forward may fire more than once).
  GradientReadyHooks(const std::vector<torch::Tensor>& parameters, std::function<void(size_t)> on_ready);
  GradientReadyHooks(const GradientReadyHooks&) = delete;
  GradientReadyHooks& operator=(const GradientReadyHooks&) = delete;

 private:
  class Hook;
  std::function<void(size_t)> on_ready_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;  // kept alive: they carry our hooks
  std::shared_ptr<const bool> alive_ = std::make_shared<const bool>(true);  // expires with this object
};

}  // namespace ddpscale
