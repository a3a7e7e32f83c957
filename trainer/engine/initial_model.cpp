#include "trainer/engine/initial_model.hpp"

#include <utility>

namespace ddpscale {

namespace {

// Parameters then buffers, in registration order: the order build() copies them in.
std::vector<torch::Tensor> state_of(Model& model) {
  std::vector<torch::Tensor> state = model.parameters();
  for (const auto& buffer : model.buffers()) state.push_back(buffer);
  return state;
}

// Pinned memory restores 2 GB (mlp@500M) several times faster than pageable memory, but a
// host may refuse to pin that much (locked-memory limits); restoring is then only slower.
torch::Tensor pinned_if_possible(const torch::Tensor& host) {
  try {
    return host.pin_memory();
  } catch (const std::exception&) {
    return host;
  }
}

}  // namespace

InitialModel::InitialModel(std::string name, const ModelOptions& options, uint64_t seed, torch::Device device)
    : name_(std::move(name)), options_(options), seed_(seed), device_(device) {}

std::shared_ptr<Model> InitialModel::fresh() {
  if (!model_)
    build();
  else
    restore();
  return model_;
}

void InitialModel::build() {
  torch::manual_seed(seed_);
  auto model = build_model(name_, options_);
  model->to(device_);
  std::vector<torch::Tensor> initial;
  for (const auto& t : state_of(*model)) {
    auto copy = t.detach().to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true);
    initial.push_back(device_.is_cuda() ? pinned_if_possible(copy) : copy);
  }
  // Kept only once everything succeeded: a build that ran out of memory is retried next run.
  initial_ = std::move(initial);
  model_ = std::move(model);
}

void InitialModel::restore() {
  torch::NoGradGuard no_grad;
  auto state = state_of(*model_);
  for (size_t i = 0; i < state.size(); ++i) {
    // The last run's gradient buffers would otherwise stay allocated until the next run's
    // reducer replaces them, inflating its peak memory.
    if (state[i].grad().defined()) state[i].mutable_grad() = torch::Tensor();
    state[i].copy_(initial_[i]);  // blocking: the run's streams need no ordering with it
  }
  model_->train();
}

}  // namespace ddpscale
