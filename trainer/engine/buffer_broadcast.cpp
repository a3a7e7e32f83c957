#include "trainer/engine/buffer_broadcast.hpp"

#include "trainer/engine/gradient_reducer.hpp"

#include <algorithm>
#include <iterator>

namespace ddpscale {

namespace {

// Each buffer starts at a multiple of 16 bytes in its flat tensor, as a fresh allocation
// would: kernels that vectorise their loads (cuDNN's batch norm among them) keep doing so.
int64_t aligned_elements(int64_t elements, int64_t element_size) {
  const int64_t per_16_bytes = std::max<int64_t>(1, 16 / element_size);
  return (elements + per_16_bytes - 1) / per_16_bytes * per_16_bytes;
}

// The buffers of one dtype and device, in the model's order, moved into one tensor.
torch::Tensor gather_into_flat(const std::vector<torch::Tensor>& buffers) {
  const torch::Tensor& first = buffers.front();
  int64_t total = 0;
  for (const auto& b : buffers) total += aligned_elements(b.numel(), b.element_size());
  torch::Tensor flat = torch::zeros({total}, first.options());
  int64_t offset = 0;
  for (auto b : buffers) {  // a handle to the same tensor: set_data changes the model's own
    torch::Tensor place = flat.narrow(0, offset, b.numel()).view(b.sizes());
    place.copy_(b);
    b.set_data(place);
    offset += aligned_elements(b.numel(), b.element_size());
  }
  return flat;
}

}  // namespace

BufferBroadcast::BufferBroadcast(std::vector<torch::Tensor> buffers, Communicator& comm)
    : buffers_(std::move(buffers)), comm_(comm) {
  torch::NoGradGuard no_grad;
  // Grouped in order of first appearance, so every rank builds the same collectives.
  std::vector<std::pair<torch::TensorOptions, std::vector<torch::Tensor>>> groups;
  for (const auto& b : buffers_) {
    if (b.numel() == 0) continue;
    auto same_kind = [&b](const auto& group) {
      return group.first.dtype() == b.dtype() && group.first.device() == b.device();
    };
    auto it = std::find_if(groups.begin(), groups.end(), same_kind);
    if (it == groups.end()) {
      groups.push_back({b.options(), {}});
      it = std::prev(groups.end());
    }
    it->second.push_back(b);
  }
  for (const auto& group : groups) flat_.push_back(gather_into_flat(group.second));
}

void BufferBroadcast::broadcast_from_rank0() {
  for (auto& flat : flat_)
    comm_.broadcast_async(flat.data_ptr(), static_cast<size_t>(flat.numel()), comm_dtype(flat), 0)->wait();
}

}  // namespace ddpscale
