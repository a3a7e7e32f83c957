#include "relu_dropout.hpp"

#ifdef DDPSCALE_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <optional>

#include "relu_dropout_backward.cuh"
#endif

namespace ddpscale {
namespace {

#ifdef DDPSCALE_CUDA
std::optional<ReluDropoutElement> fused_element(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat: return ReluDropoutElement::float32;
    case torch::kDouble: return ReluDropoutElement::float64;
    case torch::kHalf: return ReluDropoutElement::float16;
    case torch::kBFloat16: return ReluDropoutElement::bfloat16;
    default: return std::nullopt;
  }
}

torch::Tensor relu_dropout_backward(const torch::Tensor& grad_output, const torch::Tensor& mask,
                                    const torch::Tensor& activated, double scale) {
  const torch::Tensor grad = grad_output.contiguous();
  TORCH_CHECK(grad.scalar_type() == activated.scalar_type() && grad.sizes() == activated.sizes(),
              "relu_dropout: the gradient's dtype or shape differs from the activation's");
  torch::Tensor grad_input = torch::empty_like(activated);
  const c10::cuda::CUDAGuard on_device(grad.device());
  const cudaError_t launched = launch_relu_dropout_backward(
      *fused_element(grad.scalar_type()), grad_input.data_ptr(), grad.data_ptr(), mask.data_ptr<bool>(),
      activated.data_ptr(), scale, grad.numel(), c10::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(launched == cudaSuccess, "launch_relu_dropout_backward failed: ", cudaGetErrorString(launched));
  return grad_input;
}

// Forward: ReLU, then LibTorch's fused dropout, which is what torch::dropout runs on a CUDA
// tensor in training (the same random stream). Saved: what the two backward formulas read,
// ReLU's output and dropout's mask.
class ReluDropout : public torch::autograd::Function<ReluDropout> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, double p) {
    torch::Tensor activated = at::relu(x);
    auto [output, mask] = at::native_dropout(activated, p, /*train=*/true);
    ctx->save_for_backward({activated, mask});
    ctx->saved_data["scale"] = 1.0 / (1.0 - p);  // native_dropout's backward scale
    return output;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    // The kernel's result carries no autograd history, so a second derivative would be
    // silently zero: refuse it (the DDP engine differentiates once).
    TORCH_CHECK(!torch::autograd::GradMode::is_enabled(),
                "relu_dropout: double backward (create_graph=True) is not supported");
    if (!grad_outputs[0].defined()) return {torch::Tensor(), torch::Tensor()};
    const auto saved = ctx->get_saved_variables();
    return {relu_dropout_backward(grad_outputs[0], saved[1], saved[0], ctx->saved_data["scale"].toDouble()),
            torch::Tensor()};
  }
};
#endif

}  // namespace

bool relu_dropout_is_fused(const torch::Tensor& x, double p) {
#ifdef DDPSCALE_CUDA
  return x.is_cuda() && p > 0 && p < 1 && x.numel() > 0 && x.is_contiguous() && fused_element(x.scalar_type());
#else
  (void)x;
  (void)p;
  return false;
#endif
}

torch::Tensor relu_dropout(const torch::Tensor& x, double p, bool training) {
  if (p <= 0) return torch::relu(x);  // no dropout op at all: the small models are launch-bound
#ifdef DDPSCALE_CUDA
  if (training && relu_dropout_is_fused(x, p)) return ReluDropout::apply(x, p);
#endif
  return torch::dropout(torch::relu(x), p, training);
}

}  // namespace ddpscale
