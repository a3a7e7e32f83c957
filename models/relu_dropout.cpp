#include "models/relu_dropout.hpp"

#ifdef DDPSCALE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <tuple>

#include "models/relu_dropout_kernels.cuh"
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

torch::Tensor relu_dropout_backward(const torch::Tensor& grad_output, const torch::Tensor& mask, const torch::Tensor& x,
                                    double scale) {
  const torch::Tensor grad = grad_output.contiguous();
  TORCH_CHECK(grad.scalar_type() == x.scalar_type() && grad.sizes() == x.sizes(),
              "relu_dropout: the gradient's dtype or shape differs from the input's");
  torch::Tensor grad_input = torch::empty_like(x);
  const c10::cuda::CUDAGuard on_device(grad.device());
  const cudaError_t launched = launch_relu_dropout_backward(
      *fused_element(grad.scalar_type()), grad_input.data_ptr(), grad.data_ptr(), mask.data_ptr<bool>(), x.data_ptr(),
      scale, grad.numel(), c10::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(launched == cudaSuccess, "launch_relu_dropout_backward failed: ", cudaGetErrorString(launched));
  return grad_input;
}

// How LibTorch's fused dropout launches on a fresh contiguous tensor of n elements, as
// aten/src/ATen/native/cuda/Dropout.cu of PyTorch 2.11 (the GPU image's) does; should a
// LibTorch launch otherwise, ReluDropout.OutputsAndGradientsAreLibTorchsBitForBit fails. 16-byte
// vectors (4 floats, 8 halves or bfloat16s) when n is a multiple of the vector, on at most as
// many 256-thread blocks as the GPU keeps resident, advancing the Philox offset by 4 per
// grid-wide stride. vec 0: it would take another kernel, whose draw order ours does not follow.
struct DropoutLaunch {
  int vec = 0;
  unsigned blocks = 0;
  uint64_t philox_increment = 0;
};

DropoutLaunch libtorch_dropout_launch(torch::ScalarType type, int64_t n) {
  DropoutLaunch launch;
  const int vec = type == torch::kFloat ? 4 : (type == torch::kHalf || type == torch::kBFloat16) ? 8 : 0;
  if (vec == 0 || n <= 0 || n % vec != 0 || n > std::numeric_limits<int32_t>::max()) return launch;
  constexpr int64_t kThreads = 256;
  const cudaDeviceProp* device = at::cuda::getCurrentDeviceProperties();
  const int64_t resident = static_cast<int64_t>(device->multiProcessorCount) *
                           (device->maxThreadsPerMultiProcessor / kThreads);
  launch.vec = vec;
  launch.blocks = static_cast<unsigned>(std::min((n + kThreads - 1) / kThreads, resident));
  launch.philox_increment = static_cast<uint64_t>(((n - 1) / (kThreads * launch.blocks * 4) + 1) * 4);
  return launch;
}

// dropout(relu(x)) and its mask: one kernel where LibTorch's shape of launch allows and x is
// 16-byte aligned (the same mask, drawn from the default CUDA generator as at::native_dropout
// draws it, graph capture included), else LibTorch's relu and fused dropout.
std::tuple<torch::Tensor, torch::Tensor> relu_then_dropout(const torch::Tensor& x, double p) {
  const c10::cuda::CUDAGuard on_device(x.device());
  const DropoutLaunch launch = libtorch_dropout_launch(x.scalar_type(), x.numel());
  // Our kernel loads 16-byte vectors; a fresh tensor (a Linear's output) is always aligned.
  const bool aligned = reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0;
  if (launch.vec == 0 || !aligned) return at::native_dropout(at::relu(x), p, /*train=*/true);
  at::PhiloxCudaState state;
  {
    auto* generator = at::check_generator<at::CUDAGeneratorImpl>(at::cuda::detail::getDefaultCUDAGenerator());
    const std::lock_guard<std::mutex> lock(generator->mutex_);
    state = generator->philox_cuda_state(launch.philox_increment);
  }
  PhiloxDraw draw;
  draw.captured = state.captured_;
  if (state.captured_) {
    draw.seed_pointer = state.seed_.ptr;
    draw.offset_pointer = state.offset_.ptr;
    draw.offset_in_graph = state.offset_intragraph_;
  } else {
    draw.seed = state.seed_.val;
    draw.offset = state.offset_.val;
  }
  torch::Tensor output = torch::empty_like(x);
  torch::Tensor mask = torch::empty_like(x, x.options().dtype(torch::kBool));
  const cudaError_t launched = launch_relu_dropout_forward(
      *fused_element(x.scalar_type()), output.data_ptr(), mask.data_ptr<bool>(), x.data_ptr(),
      static_cast<float>(1.0 - p), x.numel(), launch.vec, launch.blocks, draw,
      c10::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(launched == cudaSuccess, "launch_relu_dropout_forward failed: ", cudaGetErrorString(launched));
  return {output, mask};
}

// Forward: dropout(relu(x)), one kernel for float, half and bfloat16 (relu_then_dropout).
// Saved: dropout's mask and x, where ReLU's threshold reads ReLU's output: x <= 0 exactly
// where relu(x) <= 0, NaN included.
class ReluDropout : public torch::autograd::Function<ReluDropout> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, double p) {
    auto [output, mask] = relu_then_dropout(x, p);
    ctx->save_for_backward({x, mask});
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
