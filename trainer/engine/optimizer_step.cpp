#include "trainer/engine/optimizer_step.hpp"

#include <algorithm>
#include <stdexcept>

namespace ddpscale {
namespace {

class LibTorchOptimizer final : public OptimizerStep {
 public:
  LibTorchOptimizer(std::unique_ptr<torch::optim::Optimizer> optimizer, std::string name)
      : optimizer_(std::move(optimizer)), name_(std::move(name)) {}
  void step() override { optimizer_->step(); }
  std::string describe() const override { return name_; }

 private:
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::string name_;
};

#ifdef DDPSCALE_CUDA
// torch.optim.Adam(fused=True)'s kernel, called directly: same defaults as LibTorch's
// Adam (betas 0.9/0.999, eps 1e-8, no weight decay, no amsgrad).
class FusedAdam final : public OptimizerStep {
 public:
  FusedAdam(std::vector<torch::Tensor> parameters, double lr)
      : parameters_(std::move(parameters)), exp_avg_(parameters_.size()), exp_avg_sq_(parameters_.size()),
        steps_(parameters_.size()), lr_(lr) {}
  void step() override {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> grads;
    grads.reserve(parameters_.size());
    for (size_t i = 0; i < parameters_.size(); ++i) {
      grads.push_back(parameters_[i].grad());
      if (grads[i].defined() && !steps_[i].defined()) allocate_state(i);
    }
    const bool every_gradient = std::all_of(grads.begin(), grads.end(), [](const torch::Tensor& g) { return g.defined(); });
    if (every_gradient) {
      update(parameters_, grads, exp_avg_, exp_avg_sq_, steps_);
      return;
    }
    // A parameter the loss did not use has no gradient (one rank, .grad reset each step):
    // like torch.optim.Adam, leave it and its state alone.
    std::vector<torch::Tensor> params, used_grads, avg, avg_sq, steps;
    for (size_t i = 0; i < parameters_.size(); ++i) {
      if (!grads[i].defined()) continue;
      params.push_back(parameters_[i]);
      used_grads.push_back(grads[i]);
      avg.push_back(exp_avg_[i]);
      avg_sq.push_back(exp_avg_sq_[i]);
      steps.push_back(steps_[i]);
    }
    if (!params.empty()) update(params, used_grads, avg, avg_sq, steps);
  }
  std::string describe() const override { return "adam-fused"; }

 private:
  // At a parameter's first update, in torch.optim.Adam's order (step count, then the two
  // moments), so that after the first backward the state lands in device memory as
  // PyTorch's does, not beside the parameters.
  void allocate_state(size_t i) {
    const torch::Tensor& p = parameters_[i];
    steps_[i] = torch::zeros({}, p.options().dtype(torch::kFloat));
    exp_avg_[i] = torch::zeros_like(p);
    exp_avg_sq_[i] = torch::zeros_like(p);
  }
  void update(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& grads,
              const std::vector<torch::Tensor>& avg, const std::vector<torch::Tensor>& avg_sq,
              const std::vector<torch::Tensor>& steps) {
    // The kernel reads the step count for the bias corrections but does not advance it:
    // torch.optim.Adam(fused=True) adds 1 first. Without this, step 1 divides by
    // 1 - beta^0 = 0 and every parameter becomes NaN.
    at::_foreach_add_(steps, 1);
    at::_fused_adam_(params, grads, avg, avg_sq, /*max_exp_avg_sqs=*/{}, steps, lr_, 0.9, 0.999,
                     /*weight_decay=*/0.0, /*eps=*/1e-8, /*amsgrad=*/false, /*maximize=*/false);
  }

 private:
  std::vector<torch::Tensor> parameters_, exp_avg_, exp_avg_sq_, steps_;
  double lr_;
};
#endif

}  // namespace

bool fused_adam_available(const torch::Device& device) {
#ifdef DDPSCALE_CUDA
  return device.is_cuda();
#else
  (void)device;
  return false;
#endif
}

std::unique_ptr<OptimizerStep> make_optimizer(const std::string& kind, bool fused, double lr,
                                              std::vector<torch::Tensor> parameters) {
  if (kind == "sgd") {
    if (fused) throw std::invalid_argument("--fused-optimizer applies to adam only");
    return std::make_unique<LibTorchOptimizer>(
        std::make_unique<torch::optim::SGD>(parameters, torch::optim::SGDOptions(lr)), "sgd");
  }
  if (kind != "adam") throw std::invalid_argument("unknown optimizer '" + kind + "' (adam or sgd)");
  if (fused) {
    if (parameters.empty() || !fused_adam_available(parameters.front().device()))
      throw std::invalid_argument("the fused Adam kernel needs parameters on a CUDA GPU");
#ifdef DDPSCALE_CUDA
    return std::make_unique<FusedAdam>(std::move(parameters), lr);
#endif
  }
  return std::make_unique<LibTorchOptimizer>(
      std::make_unique<torch::optim::Adam>(parameters, torch::optim::AdamOptions(lr)), "adam");
}

}  // namespace ddpscale
