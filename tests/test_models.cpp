#include <gtest/gtest.h>

#include <torch/torch.h>

#include "model_registry.hpp"

namespace ddpscale {
namespace {

int64_t built_parameter_count(const std::string& name) {
  int64_t total = 0;
  for (const auto& p : build_model(name, ModelOptions{})->parameters()) total += p.numel();
  return total;
}

TEST(Models, SeedModelsHaveTheSeedsExactCounts) {
  // ../shared/seeds/003: "Medium Model (258,432 parameters)", "Large Model (6,885,376 parameters)".
  EXPECT_EQ(describe_model("mlp-medium", {}).parameters, 258432);
  EXPECT_EQ(describe_model("mlp-large", {}).parameters, 6885376);
  EXPECT_EQ(built_parameter_count("mlp-medium"), 258432);
  EXPECT_EQ(built_parameter_count("mlp-large"), 6885376);
}

TEST(Models, SequenceModelsInTheSeedsRangesAndClosedFormIsExact) {
  const auto lstm = describe_model("lstm", {}).parameters;
  const auto gru = describe_model("gru", {}).parameters;
  const auto transformer = describe_model("transformer", {}).parameters;
  EXPECT_GE(lstm, 300000);
  EXPECT_LE(lstm, 500000);
  EXPECT_GE(gru, 200000);
  EXPECT_LE(gru, 400000);
  EXPECT_GE(transformer, 1500000);
  EXPECT_LE(transformer, 3000000);
  EXPECT_EQ(built_parameter_count("lstm"), lstm);
  EXPECT_EQ(built_parameter_count("gru"), gru);
  EXPECT_EQ(built_parameter_count("transformer"), transformer);
}

TEST(Models, SizeFamiliesLandWithinTwoPercent) {
  for (const char* family : {"mlp@", "transformer@"}) {
    for (const auto& [text, target] : std::vector<std::pair<std::string, double>>{
             {"100K", 1e5}, {"250K", 2.5e5}, {"1M", 1e6}, {"3M", 3e6}, {"10M", 1e7}, {"30M", 3e7},
             {"100M", 1e8}, {"300M", 3e8}, {"500M", 5e8}, {"1.5B", 1.5e9}}) {
      const auto name = std::string(family) + text;
      const double count = static_cast<double>(describe_model(name, {}).parameters);
      EXPECT_NEAR(count / target, 1.0, 0.02) << name << " has " << count;
    }
  }
}

TEST(Models, ClosedFormEqualsBuiltModelForSmallFamilies) {
  for (const char* name : {"mlp@100K", "mlp@3M", "transformer@100K", "transformer@1M", "transformer@3M"})
    EXPECT_EQ(built_parameter_count(name), describe_model(name, {}).parameters) << name;
}

TEST(Models, ForwardShapes) {
  for (const auto& name : builtin_model_names()) {
    auto model = build_model(name, {});
    const auto batch = make_synthetic_batch(name, {}, 3, 7, torch::kCPU);
    const auto logits = model->forward(batch.inputs);
    ASSERT_EQ(logits.dim(), 2) << name;
    EXPECT_EQ(logits.size(0), 3) << name;
    EXPECT_GT(batch.labels.max().item<int64_t>() + 1, 0);
    EXPECT_LT(batch.labels.max().item<int64_t>(), logits.size(1)) << name;
    EXPECT_TRUE(std::isfinite(model_loss(logits, batch.labels).item<float>())) << name;
  }
}

TEST(Models, SyntheticDataFollowsTheSeed) {
  const auto a = make_synthetic_batch("lstm", {}, 4, 11, torch::kCPU);
  const auto b = make_synthetic_batch("lstm", {}, 4, 11, torch::kCPU);
  const auto c = make_synthetic_batch("lstm", {}, 4, 12, torch::kCPU);
  EXPECT_TRUE(torch::equal(a.inputs, b.inputs));
  EXPECT_TRUE(torch::equal(a.labels, b.labels));
  EXPECT_FALSE(torch::equal(a.inputs, c.inputs));
}

TEST(Models, DropoutOffIsDeterministicInTrainMode) {
  ModelOptions options;
  options.dropout = false;
  for (const auto& name : builtin_model_names()) {
    auto model = build_model(name, options);
    model->train();
    const auto batch = make_synthetic_batch(name, options, 2, 3, torch::kCPU);
    EXPECT_TRUE(torch::equal(model->forward(batch.inputs), model->forward(batch.inputs))) << name;
  }
  auto noisy = build_model("mlp-medium", {});
  noisy->train();
  const auto batch = make_synthetic_batch("mlp-medium", {}, 2, 3, torch::kCPU);
  EXPECT_FALSE(torch::equal(noisy->forward(batch.inputs), noisy->forward(batch.inputs)));
}

TEST(Models, UnknownModelsAreNamedWithTheChoices) {
  try {
    describe_model("resnet50", {});
    FAIL();
  } catch (const UnknownModelError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'resnet50'"), std::string::npos);
    EXPECT_NE(message.find("mlp-medium"), std::string::npos);
    EXPECT_NE(message.find("transformer@<size>"), std::string::npos);
  }
  EXPECT_THROW(describe_model("mlp@10X", {}), UnknownModelError);
  EXPECT_THROW(describe_model("mlp@50K", {}), UnknownModelError);  // below 100K
  EXPECT_THROW(describe_model("transformer@3B", {}), UnknownModelError);
}

}  // namespace
}  // namespace ddpscale
