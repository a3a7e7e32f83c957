// --dtype bfloat16: the forward pass under autocast, as torch.autocast(dtype=torch.bfloat16)
// in PyTorch. Matrix products (linear, matmul, the recurrent cells' GEMMs where autocast
// lists them) run in bf16; the weights, their gradients, the optimizer's state and the
// gradient allreduce stay fp32 ("fp32 master weights"). bf16 keeps fp32's exponent range,
// so no loss scaling is needed, unlike float16.
#pragma once
#include <torch/torch.h>

namespace ddpscale {

// bf16 autocast on `device` for the lifetime of the scope (nothing at all when !enabled).
// On exit the previous state comes back and autocast's cached bf16 copies of the weights
// are dropped, since the weights change every step.
class AutocastScope {
 public:
  AutocastScope(bool enabled, const torch::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_;
  c10::DeviceType device_type_;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kFloat;
};

}  // namespace ddpscale
