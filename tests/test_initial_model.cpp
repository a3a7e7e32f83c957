// InitialModel (trainer/engine/initial_model.hpp): a configuration's model, built once and handed to
// every run at the same initial parameters. CPU only; the 2-rank equivalence of a reused
// model's runs is DdpInitialModel.* in test_ddp_mpi.
#include "trainer/engine/initial_model.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace ddpscale {
namespace {

std::vector<torch::Tensor> snapshot(Model& model) {
  std::vector<torch::Tensor> copies;
  for (const auto& p : model.parameters()) copies.push_back(p.detach().clone());
  return copies;
}

// A run trains the model in place and leaves gradients behind; the next fresh() must undo both.
TEST(InitialModel, FreshRestoresParametersAndDropsGradients) {
  InitialModel initial("mlp-medium", ModelOptions{}, 42, torch::kCPU);
  const auto model = initial.fresh();
  const auto start = snapshot(*model);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.add_(1.0);
  }
  model->parameters().front().mutable_grad() = torch::ones_like(model->parameters().front());
  model->eval();

  const auto again = initial.fresh();
  EXPECT_EQ(again.get(), model.get()) << "built a second time instead of restored";
  const auto params = again->parameters();
  ASSERT_EQ(params.size(), start.size());
  for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(torch::equal(params[i], start[i])) << "parameter " << i;
  for (const auto& p : params) EXPECT_FALSE(p.grad().defined());
  EXPECT_TRUE(again->is_training());
}

// The parameters are those build_model draws from the seed, as a session building its own
// model gets them: run 0 of a configuration is unchanged by the reuse.
TEST(InitialModel, StartsFromTheSeedsParameters) {
  InitialModel initial("mlp-medium", ModelOptions{}, 7, torch::kCPU);
  const auto start = snapshot(*initial.fresh());
  torch::manual_seed(7);
  const auto built = build_model("mlp-medium", ModelOptions{});
  const auto expected = built->parameters();
  ASSERT_EQ(start.size(), expected.size());
  for (size_t i = 0; i < start.size(); ++i) EXPECT_TRUE(torch::equal(start[i], expected[i])) << "parameter " << i;
  torch::manual_seed(8);
  EXPECT_FALSE(torch::equal(start[0], build_model("mlp-medium", ModelOptions{})->parameters()[0]));
}

// A build that fails (here an unknown model; on a GPU, out of memory) keeps nothing, so each
// run reports the failure again instead of training a half-built model.
TEST(InitialModel, AFailedBuildIsRetriedAndFailsAgain) {
  InitialModel initial("mlp@1K", ModelOptions{}, 42, torch::kCPU);
  EXPECT_THROW(initial.fresh(), UnknownModelError);
  EXPECT_THROW(initial.fresh(), UnknownModelError);
}

}  // namespace
}  // namespace ddpscale
