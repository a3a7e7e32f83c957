#include "models/relu_dropout_kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <curand_kernel.h>

#include <algorithm>
#include <cstdint>

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

// VEC elements moved by one load or store (16 bytes for the vectorized launches): the caller
// guarantees the alignment.
template <typename T, int VEC>
struct alignas(sizeof(T) * VEC) Vector {
  T at[VEC];
};

// masked_scale's lambda is `(float)mask * src * scale` (scale in the accumulation type),
// rounded to the element type; threshold_backward's is `relu(x) <= 0 ? 0 : grad`. Each thread
// takes VEC consecutive elements per grid-wide stride (VEC 1: element by element).
template <typename T, int VEC>
__global__ void relu_dropout_backward_kernel(T* grad_input, const T* grad_output, const bool* mask, const T* x,
                                             typename Arithmetic<T>::Acc scale, int64_t n) {
  using A = Arithmetic<T>;
  using Acc = typename A::Acc;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x * VEC;
  for (int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * VEC; first < n;
       first += stride) {
    const auto grad = *reinterpret_cast<const Vector<T, VEC>*>(grad_output + first);
    const auto kept = *reinterpret_cast<const Vector<bool, VEC>*>(mask + first);
    const auto input = *reinterpret_cast<const Vector<T, VEC>*>(x + first);
    Vector<T, VEC> result;
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      const T dropped = A::narrow(static_cast<Acc>(static_cast<float>(kept.at[k])) * A::widen(grad.at[k]) * scale);
      result.at[k] = A::widen(input.at[k]) <= Acc(0) ? A::narrow(Acc(0)) : dropped;
    }
    *reinterpret_cast<Vector<T, VEC>*>(grad_input + first) = result;
  }
}

// What at::cuda::philox::unpack returns: during a capture the seed and offset are read when
// the graph runs, the offset plus this launch's place in the graph.
__device__ void unpack(const PhiloxDraw& draw, uint64_t& seed, uint64_t& offset) {
  if (draw.captured) {
    seed = static_cast<uint64_t>(*draw.seed_pointer);
    offset = static_cast<uint64_t>(*draw.offset_pointer + draw.offset_in_graph);
  } else {
    seed = draw.seed;
    offset = draw.offset;
  }
}

// The draw order of LibTorch's vectorized fused dropout: thread t is Philox subsequence t and
// takes elements t*VEC .. t*VEC+VEC-1 of each grid-wide stride, one curand_uniform4 per 4 of
// them, element k keeping uniform k < keep; the kept value is `src * 1.0f * scale` in float,
// scale = 1.0 / keep in double rounded to float, then rounded to the element type. Here src is
// relu(x): LibTorch's ReLU (clamp_min) returns x itself or 0, and NaN stays NaN.
template <typename T, int VEC>
__global__ void relu_dropout_forward_kernel(T* output, bool* mask, const T* x, float keep, int64_t n,
                                            PhiloxDraw draw) {
  using A = Arithmetic<T>;
  uint64_t seed = 0, offset = 0;
  unpack(draw, seed, offset);
  const uint64_t thread = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t state;
  curand_init(seed, thread, offset, &state);
  const float scale = 1.0 / keep;
  constexpr int kDraws = (VEC + 3) / 4;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x * VEC;
  for (int64_t first = static_cast<int64_t>(thread) * VEC; first < n; first += stride) {
    float4 uniform[kDraws];
#pragma unroll
    for (int d = 0; d < kDraws; ++d) uniform[d] = curand_uniform4(&state);
    const auto input = *reinterpret_cast<const Vector<T, VEC>*>(x + first);
    Vector<T, VEC> result;
    Vector<bool, VEC> kept_mask;
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      const float kept = (&uniform[k / 4].x)[k % 4] < keep;
      const T v = input.at[k];
      const T activated = A::widen(v) < typename A::Acc(0) ? A::narrow(typename A::Acc(0)) : v;
      result.at[k] = A::narrow(A::widen(activated) * kept * scale);
      kept_mask.at[k] = kept;
    }
    *reinterpret_cast<Vector<T, VEC>*>(output + first) = result;
    *reinterpret_cast<Vector<bool, VEC>*>(mask + first) = kept_mask;
  }
}

bool aligned_to(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// 16-byte vectors when n and all four arrays allow them, else element by element.
template <typename T>
cudaError_t launch_backward(void* grad_input, const void* grad_output, const bool* mask, const void* x, double scale,
                   int64_t n, cudaStream_t stream) {
  constexpr int kThreads = 256;
  constexpr int kVec = 16 / sizeof(T);
  const bool vectorized = n % kVec == 0 && aligned_to(grad_input, 16) && aligned_to(grad_output, 16) &&
                          aligned_to(x, 16) && aligned_to(mask, kVec);
  const int64_t per_thread = vectorized ? kVec : 1;
  const int64_t blocks = std::min<int64_t>((n / per_thread + kThreads - 1) / kThreads, 65535);
  const auto acc_scale = static_cast<typename Arithmetic<T>::Acc>(scale);
  if (n <= 0) return cudaGetLastError();
  if (vectorized)
    relu_dropout_backward_kernel<T, kVec><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<T*>(grad_input), static_cast<const T*>(grad_output), mask, static_cast<const T*>(x), acc_scale, n);
  else
    relu_dropout_backward_kernel<T, 1><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<T*>(grad_input), static_cast<const T*>(grad_output), mask, static_cast<const T*>(x), acc_scale, n);
  return cudaGetLastError();
}

template <typename T, int VEC>
cudaError_t launch_forward(void* output, bool* mask, const void* x, float keep, int64_t n, unsigned blocks,
                           const PhiloxDraw& draw, cudaStream_t stream) {
  if (n % VEC != 0 || !aligned_to(output, 16) || !aligned_to(x, 16) || !aligned_to(mask, VEC))
    return cudaErrorMisalignedAddress;
  if (n > 0)
    relu_dropout_forward_kernel<T, VEC><<<blocks, 256, 0, stream>>>(static_cast<T*>(output), mask,
                                                                    static_cast<const T*>(x), keep, n, draw);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_relu_dropout_backward(ReluDropoutElement element, void* grad_input, const void* grad_output,
                                         const bool* mask, const void* x, double scale, int64_t n,
                                         cudaStream_t stream) {
  switch (element) {
    case ReluDropoutElement::float32: return launch_backward<float>(grad_input, grad_output, mask, x, scale, n, stream);
    case ReluDropoutElement::float64: return launch_backward<double>(grad_input, grad_output, mask, x, scale, n, stream);
    case ReluDropoutElement::float16: return launch_backward<__half>(grad_input, grad_output, mask, x, scale, n, stream);
    case ReluDropoutElement::bfloat16:
      return launch_backward<__nv_bfloat16>(grad_input, grad_output, mask, x, scale, n, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_relu_dropout_forward(ReluDropoutElement element, void* output, bool* mask, const void* x,
                                        float keep, int64_t n, int vec, unsigned blocks, PhiloxDraw draw,
                                        cudaStream_t stream) {
  if (element == ReluDropoutElement::float32 && vec == 4)
    return launch_forward<float, 4>(output, mask, x, keep, n, blocks, draw, stream);
  if (element == ReluDropoutElement::float16 && vec == 8)
    return launch_forward<__half, 8>(output, mask, x, keep, n, blocks, draw, stream);
  if (element == ReluDropoutElement::bfloat16 && vec == 8)
    return launch_forward<__nv_bfloat16, 8>(output, mask, x, keep, n, blocks, draw, stream);
  return cudaErrorInvalidValue;
}

}  // namespace ddpscale
