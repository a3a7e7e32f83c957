#include "trainer/engine/gradient_ready_hooks.hpp"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

namespace ddpscale {

// The hook cannot be taken off the node again, and the node outlives its owner whenever
// something else still holds it (a run's model is reused by the next run: InitialModel), so
// the hook does nothing once its owner is gone.
class GradientReadyHooks::Hook final : public torch::autograd::FunctionPostHook {
 public:
  Hook(const GradientReadyHooks& owner, size_t parameter)
      : on_ready_(owner.on_ready_), alive_(owner.alive_), parameter_(parameter) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    if (!alive_.expired()) on_ready_(parameter_);
    return outputs;
  }

 private:
  const std::function<void(size_t)>& on_ready_;  // the owner's: valid while alive_ is
  std::weak_ptr<const bool> alive_;
  size_t parameter_;
};

GradientReadyHooks::GradientReadyHooks(const std::vector<torch::Tensor>& parameters,
                                       std::function<void(size_t)> on_ready)
    : on_ready_(std::move(on_ready)) {
  for (size_t p = 0; p < parameters.size(); ++p) {
    auto accumulator = torch::autograd::impl::grad_accumulator(parameters[p]);
    accumulator->add_post_hook(std::make_unique<Hook>(*this, p));
    accumulators_.push_back(std::move(accumulator));
  }
}

}  // namespace ddpscale
