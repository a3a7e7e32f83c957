// Rank 0's buffers (BatchNorm's running statistics and batch counter) on every rank before
// each forward: PyTorch DDP's broadcast_buffers=True. As PyTorch does, one collective carries
// all buffers of a dtype (it flattens them into one tensor per bucket and copies back after);
// here the buffers live in that tensor for the session's whole life, so the broadcast needs
// no copy either way. On GPUs it is ordered on the streams, as the allreduces are: the host
// never waits for it, and a CUDA graph capture records it as it records the allreduces.
#pragma once
#include "comm/communicator.hpp"

#include <torch/torch.h>

#include <vector>

namespace ddpscale {

class BufferBroadcast {
 public:
  // Moves every buffer (in place, as set_data does: the model keeps the same tensors) into
  // one contiguous tensor per dtype. The communicator must outlive this object.
  BufferBroadcast(std::vector<torch::Tensor> buffers, Communicator& comm);

  // Enqueues the broadcasts from rank 0; the compute stream's next work sees their result.
  void broadcast_from_rank0();

  // One per dtype among the buffers (float32 statistics and an int64 counter: 2).
  size_t collective_count() const { return flat_.size(); }

 private:
  std::vector<torch::Tensor> buffers_;  // kept so the flat tensors' views stay the model's
  std::vector<torch::Tensor> flat_;
  Communicator& comm_;
};

}  // namespace ddpscale
