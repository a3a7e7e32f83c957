// The CUDA side of relu_dropout (relu_dropout.hpp): plain CUDA, no LibTorch, so that nvcc
// compiles it without LibTorch's headers.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace ddpscale {

enum class ReluDropoutElement { float32, float64, float16, bfloat16 };

// grad_input[i] = activated[i] <= 0 ? 0 : float(mask[i]) * grad_output[i] * scale, computed as
// LibTorch's masked_scale and threshold kernels compute their halves (half and bfloat16 in
// float, rounded once to the element type). All four arrays are contiguous, n elements.
// Returns the launch's error.
cudaError_t launch_relu_dropout_backward(ReluDropoutElement element, void* grad_input, const void* grad_output,
                                         const bool* mask, const void* activated, double scale, int64_t n,
                                         cudaStream_t stream);

}  // namespace ddpscale
