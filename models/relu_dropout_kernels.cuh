// The CUDA side of relu_dropout (relu_dropout.hpp): plain CUDA, no LibTorch, so that nvcc
// compiles it without LibTorch's headers.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace ddpscale {

enum class ReluDropoutElement { float32, float64, float16, bfloat16 };

// grad_input[i] = x[i] <= 0 ? 0 : float(mask[i]) * grad_output[i] * scale, computed as
// LibTorch's masked_scale and threshold kernels compute their halves (half and bfloat16 in
// float, rounded once to the element type). ReLU's threshold reads ReLU's output, which is
// <= 0 exactly where its input is. All four arrays are contiguous, n elements; 16-byte loads
// when n and the arrays' alignment allow. Returns the launch's error.
cudaError_t launch_relu_dropout_backward(ReluDropoutElement element, void* grad_input, const void* grad_output,
                                         const bool* mask, const void* x, double scale, int64_t n,
                                         cudaStream_t stream);

// The Philox seed and offset of LibTorch's CUDA generator for one launch (at::PhiloxCudaState):
// plain values in eager mode; during a CUDA-graph capture, pointers the replay reads, so every
// replay draws fresh numbers.
struct PhiloxDraw {
  bool captured = false;
  uint64_t seed = 0, offset = 0;
  const int64_t* seed_pointer = nullptr;
  const int64_t* offset_pointer = nullptr;
  uint32_t offset_in_graph = 0;
};

// output = dropout(relu(x)) and its keep mask, drawing the random numbers exactly as LibTorch's
// vectorized fused dropout kernel draws them for a contiguous tensor of n elements with `vec`
// elements per load (4 for float, 8 for half and bfloat16) on `blocks` blocks of 256 threads,
// so the mask is the one at::native_dropout(at::relu(x)) would draw from the same generator
// state. keep = 1 - p in the accumulation type (float). float32, float16 and bfloat16 only;
// x and output 16-byte aligned, mask vec-byte aligned (else cudaErrorMisalignedAddress).
cudaError_t launch_relu_dropout_forward(ReluDropoutElement element, void* output, bool* mask, const void* x,
                                        float keep, int64_t n, int vec, unsigned blocks, PhiloxDraw draw,
                                        cudaStream_t stream);

}  // namespace ddpscale
