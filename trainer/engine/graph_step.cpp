#include "trainer/engine/graph_step.hpp"

#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/version.h>

namespace ddpscale {

GraphStep::GraphStep(const torch::Device& device)
    : stream_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())), current_(stream_) {}

// ThreadLocal capture mode: the other threads (the NVML sampler) may go on calling CUDA. The
// backward pass is issued from this thread (BackwardOnCallingThread, training_session.cpp).
void GraphStep::capture(const std::function<torch::Tensor()>& body) {
  // As torch.cuda.graph does before it captures: the warm-up's cached blocks go back to the
  // driver, so the graph's private pool is laid out in device memory as PyTorch's is.
  c10::cuda::CUDACachingAllocator::emptyCache();
#if TORCH_VERSION_MAJOR >= 2
  graph_.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
#else
  graph_.capture_begin();  // LibTorch 1.x: global capture mode only
#endif
  loss_ = body();
  graph_.capture_end();
  captured_ = true;
}

}  // namespace ddpscale
