#include "engine/graph_step.hpp"

#include <torch/version.h>

namespace ddpscale {

GraphStep::GraphStep(const torch::Device& device)
    : stream_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())), current_(stream_) {}

// ThreadLocal capture mode: the other threads (NVML sampler, and autograd's device thread,
// which issues backward onto the captured stream) may go on calling CUDA.
void GraphStep::capture(const std::function<torch::Tensor()>& body) {
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
