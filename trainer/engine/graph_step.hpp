// --exec graph: one whole training step (forward, backward with the bucketed allreduces,
// optimizer, the gradients handed over) captured as a CUDA graph, then replayed (CUDA graph
// builds only).
#pragma once
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <torch/torch.h>

#include <functional>

namespace ddpscale {

class GraphStep {
 public:
  // The session's own stream (graphs cannot be captured on the default stream) becomes
  // current for the session's whole life, so that warm-up, capture, replays and the
  // communicator's ordering events all use it.
  explicit GraphStep(const torch::Device& device);
  GraphStep(const GraphStep&) = delete;
  GraphStep& operator=(const GraphStep&) = delete;

  // Captures body(), which returns the step's loss, as the graph.
  void capture(const std::function<torch::Tensor()>& body);
  bool captured() const { return captured_; }
  void replay() { graph_.replay(); }
  // The captured step's loss: every replay overwrites it.
  const torch::Tensor& loss() const { return loss_; }
  cudaStream_t stream() const { return stream_.stream(); }

 private:
  c10::cuda::CUDAStream stream_;
  c10::cuda::CUDAStreamGuard current_;
  at::cuda::CUDAGraph graph_;
  torch::Tensor loss_;
  bool captured_ = false;
};

}  // namespace ddpscale
