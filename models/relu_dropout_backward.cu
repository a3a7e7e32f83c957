#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "relu_dropout_backward.cuh"

namespace ddpscale {
namespace {

// The type LibTorch computes an element type in (its acc_type), and the conversions.
template <typename T>
struct Arithmetic {
  using Acc = T;
  __device__ static Acc widen(T v) { return v; }
  __device__ static T narrow(Acc v) { return v; }
};
template <>
struct Arithmetic<__half> {
  using Acc = float;
  __device__ static Acc widen(__half v) { return __half2float(v); }
  __device__ static __half narrow(Acc v) { return __float2half_rn(v); }
};
template <>
struct Arithmetic<__nv_bfloat16> {
  using Acc = float;
  __device__ static Acc widen(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 narrow(Acc v) { return __float2bfloat16_rn(v); }
};

// masked_scale's lambda is `(float)mask * src * scale` (scale in the accumulation type),
// rounded to the element type; threshold_backward's is `x <= 0 ? 0 : grad`.
template <typename T>
__global__ void relu_dropout_backward_kernel(T* grad_input, const T* grad_output, const bool* mask,
                                             const T* activated, typename Arithmetic<T>::Acc scale, int64_t n) {
  using A = Arithmetic<T>;
  using Acc = typename A::Acc;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T dropped = A::narrow(static_cast<Acc>(static_cast<float>(mask[i])) * A::widen(grad_output[i]) * scale);
    grad_input[i] = A::widen(activated[i]) <= Acc(0) ? A::narrow(Acc(0)) : dropped;
  }
}

template <typename T>
cudaError_t launch(void* grad_input, const void* grad_output, const bool* mask, const void* activated, double scale,
                   int64_t n, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, 65535);
  if (n > 0)
    relu_dropout_backward_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<T*>(grad_input), static_cast<const T*>(grad_output), mask, static_cast<const T*>(activated),
        static_cast<typename Arithmetic<T>::Acc>(scale), n);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_relu_dropout_backward(ReluDropoutElement element, void* grad_input, const void* grad_output,
                                         const bool* mask, const void* activated, double scale, int64_t n,
                                         cudaStream_t stream) {
  switch (element) {
    case ReluDropoutElement::float32: return launch<float>(grad_input, grad_output, mask, activated, scale, n, stream);
    case ReluDropoutElement::float64: return launch<double>(grad_input, grad_output, mask, activated, scale, n, stream);
    case ReluDropoutElement::float16: return launch<__half>(grad_input, grad_output, mask, activated, scale, n, stream);
    case ReluDropoutElement::bfloat16:
      return launch<__nv_bfloat16>(grad_input, grad_output, mask, activated, scale, n, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace ddpscale
