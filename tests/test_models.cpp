#include "models/encoder_block.hpp"
#include "models/model_registry.hpp"
#include "models/catalog/model_shapes.hpp"
#include "models/relu_dropout.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ddpscale {
namespace {

int64_t built_parameter_count(const std::string& name, const ModelOptions& options = {}) {
  int64_t total = 0;
  for (const auto& p : build_model(name, options)->parameters()) total += p.numel();
  return total;
}

std::vector<std::string> parameter_names(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& item : build_model(name, {})->named_parameters()) names.push_back(item.key());
  return names;
}

// Every size the threshold study sweeps, and the family limits.
const std::vector<std::pair<std::string, double>> kFamilySizes = {
    {"100K", 1e5}, {"250K", 2.5e5}, {"1M", 1e6},   {"3M", 3e6},     {"10M", 1e7},  {"30M", 3e7},
    {"100M", 1e8}, {"300M", 3e8},   {"500M", 5e8}, {"1.5B", 1.5e9}, {"2B", 2e9}};

// Built (allocated) only up to 10M; the closed form covers the rest.
const std::vector<std::string> kBuildableSizes = {"100K", "250K", "1M", "3M", "10M"};

TEST(Models, SeedModelsHaveTheSeedsExactCounts) {
  // shared/seeds/003: "Medium Model (258,432 parameters)", "Large Model (6,885,376 parameters)".
  EXPECT_EQ(describe_model("mlp-medium", {}).parameters, 258432);
  EXPECT_EQ(describe_model("mlp-large", {}).parameters, 6885376);
  EXPECT_EQ(built_parameter_count("mlp-medium"), 258432);
  EXPECT_EQ(built_parameter_count("mlp-large"), 6885376);
}

TEST(Models, SequenceModelsInTheSeedsRanges) {
  const auto lstm = describe_model("lstm", {}).parameters;
  const auto gru = describe_model("gru", {}).parameters;
  const auto transformer = describe_model("transformer", {}).parameters;
  EXPECT_GE(lstm, 300000);
  EXPECT_LE(lstm, 500000);
  EXPECT_GE(gru, 200000);
  EXPECT_LE(gru, 400000);
  EXPECT_GE(transformer, 1500000);
  EXPECT_LE(transformer, 3000000);
}

TEST(Models, ClosedFormEqualsBuiltModelForEveryBuiltinModel) {
  for (const auto& name : builtin_model_names())
    EXPECT_EQ(built_parameter_count(name), describe_model(name, {}).parameters) << name;
}

TEST(Models, ClosedFormEqualsBuiltModelWithOtherOptions) {
  ModelOptions options;
  options.seq_len = 16;
  options.features = 24;
  options.vocab = 300;
  options.classes = 7;
  for (const auto& name : builtin_model_names())
    EXPECT_EQ(built_parameter_count(name, options), describe_model(name, options).parameters) << name;
  for (const char* name : {"mlp@1M", "transformer@1M"})
    EXPECT_EQ(built_parameter_count(name, options), describe_model(name, options).parameters) << name;
}

TEST(Models, DescriptionsCarryMemoryAndSummary) {
  const auto d = describe_model("mlp-large", {});
  EXPECT_EQ(d.name, "mlp-large");
  EXPECT_EQ(d.family, "mlp");
  EXPECT_EQ(d.weight_bytes_fp32, 4 * 6885376);
  EXPECT_EQ(d.adam_state_bytes_fp32, 8 * 6885376);
  EXPECT_NE(d.layers.find("4608-1024-1024-512-512-256-768"), std::string::npos) << d.layers;
  EXPECT_EQ(describe_model("lstm", {}).family, "lstm");
  EXPECT_EQ(describe_model("gru", {}).family, "gru");
  EXPECT_EQ(describe_model("transformer@100M", {}).family, "transformer");
  EXPECT_EQ(describe_model("mlp@10M", {}).family, "mlp");
}

TEST(Models, SizeFamiliesLandWithinTwoPercent) {
  for (const char* family : {"mlp@", "transformer@"}) {
    for (const auto& [text, target] : kFamilySizes) {
      const auto name = std::string(family) + text;
      const double count = static_cast<double>(describe_model(name, {}).parameters);
      EXPECT_NEAR(count / target, 1.0, 0.02) << name << " has " << count;
    }
  }
}

TEST(Models, SizeFamiliesKeepTheirSizeWhenTheDataChanges) {
  ModelOptions options;
  options.features = 64;
  options.classes = 3;
  options.vocab = 5000;
  options.seq_len = 128;
  for (const auto& [name, target] : std::vector<std::pair<std::string, double>>{
           {"mlp@1M", 1e6}, {"mlp@100M", 1e8}, {"transformer@10M", 1e7}, {"transformer@300M", 3e8}}) {
    const double count = static_cast<double>(describe_model(name, options).parameters);
    EXPECT_NEAR(count / target, 1.0, 0.02) << name << " has " << count;
  }
}

TEST(Models, ClosedFormEqualsBuiltModelForSmallFamilies) {
  for (const char* family : {"mlp@", "transformer@"}) {
    for (const auto& size : kBuildableSizes) {
      const auto name = std::string(family) + size;
      EXPECT_EQ(built_parameter_count(name), describe_model(name, {}).parameters) << name;
    }
  }
}

TEST(Models, TransformerFamilyShapesAreWellFormed) {
  for (const auto& [text, target] : kFamilySizes) {
    const auto s = transformer_for_size(static_cast<int64_t>(target));
    EXPECT_EQ(s.d_model % s.heads, 0) << text;
    EXPECT_GE(s.ff, s.d_model) << text;
    EXPECT_GE(s.layers, 1) << text;
  }
  // Deterministic: the same size always gives the same shape.
  const auto a = transformer_for_size(100'000'000), b = transformer_for_size(100'000'000);
  EXPECT_EQ(std::make_tuple(a.d_model, a.heads, a.ff, a.layers), std::make_tuple(b.d_model, b.heads, b.ff, b.layers));
}

TEST(Models, ParsesSizesWithSuffixesAndPlainNumbers) {
  EXPECT_EQ(parse_parameter_count("250K"), 250000);
  EXPECT_EQ(parse_parameter_count("250k"), 250000);
  EXPECT_EQ(parse_parameter_count("250000"), 250000);
  EXPECT_EQ(parse_parameter_count("0.25M"), 250000);
  EXPECT_EQ(parse_parameter_count("10m"), 10000000);
  EXPECT_EQ(parse_parameter_count("1.5B"), 1500000000);
  EXPECT_EQ(describe_model("mlp@10000000", {}).parameters, describe_model("mlp@10M", {}).parameters);
  for (const char* bad : {"", "M", "10X", "10 M", "-5M", "0", "1e30"})
    EXPECT_THROW(parse_parameter_count(bad), std::invalid_argument) << bad;
}

TEST(Models, ParametersRegisterInDataFlowOrderOnEveryBuild) {
  for (const auto& name : builtin_model_names()) EXPECT_EQ(parameter_names(name), parameter_names(name)) << name;
  const auto mlp = parameter_names("mlp-medium");
  EXPECT_EQ(mlp.front(), "fc1.weight");
  EXPECT_EQ(mlp.back(), "fc4.bias");
  const auto transformer = parameter_names("transformer");
  EXPECT_EQ(transformer.front(), "tokens.weight");
  EXPECT_EQ(transformer.back(), "head.bias");
}

TEST(Models, ForwardShapes) {
  for (const auto& name : builtin_model_names()) {
    auto model = build_model(name, {});
    const int64_t classes = describe_model(name, {}).family == "mlp" ? (name == "mlp-medium" ? 192 : 768) : 10;
    const auto batch = make_synthetic_batch(name, {}, 3, 7, torch::kCPU);
    const auto logits = model->forward(batch.inputs);
    ASSERT_EQ(logits.dim(), 2) << name;
    EXPECT_EQ(logits.size(0), 3) << name;
    EXPECT_EQ(logits.size(1), classes) << name;
    EXPECT_TRUE(std::isfinite(model_loss(logits, batch.labels).item<float>())) << name;
  }
}

TEST(Models, SyntheticBatchesMatchTheModels) {
  const auto mlp = make_synthetic_batch("mlp-large", {}, 5, 1, torch::kCPU);
  EXPECT_EQ(mlp.inputs.sizes(), (std::vector<int64_t>{5, 4608}));
  EXPECT_EQ(mlp.inputs.scalar_type(), torch::kFloat);
  const auto lstm = make_synthetic_batch("gru", {}, 5, 1, torch::kCPU);
  EXPECT_EQ(lstm.inputs.sizes(), (std::vector<int64_t>{5, 64, 32}));
  ModelOptions options;
  options.vocab = 50;
  options.classes = 4;
  const auto tokens = make_synthetic_batch("transformer", options, 64, 1, torch::kCPU);
  EXPECT_EQ(tokens.inputs.sizes(), (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(tokens.inputs.scalar_type(), torch::kLong);
  EXPECT_GE(tokens.inputs.min().item<int64_t>(), 0);
  EXPECT_LT(tokens.inputs.max().item<int64_t>(), 50);
  EXPECT_EQ(tokens.labels.sizes(), (std::vector<int64_t>{64}));
  EXPECT_EQ(tokens.labels.scalar_type(), torch::kLong);
  EXPECT_GE(tokens.labels.min().item<int64_t>(), 0);
  EXPECT_LT(tokens.labels.max().item<int64_t>(), 4);
}

TEST(Models, SyntheticDataFollowsTheSeed) {
  for (const auto& name : builtin_model_names()) {
    const auto a = make_synthetic_batch(name, {}, 16, 11, torch::kCPU);
    const auto b = make_synthetic_batch(name, {}, 16, 11, torch::kCPU);
    const auto c = make_synthetic_batch(name, {}, 16, 12, torch::kCPU);
    EXPECT_TRUE(torch::equal(a.inputs, b.inputs)) << name;
    EXPECT_TRUE(torch::equal(a.labels, b.labels)) << name;
    EXPECT_FALSE(torch::equal(a.inputs, c.inputs)) << name;
  }
}

TEST(Models, SyntheticDataIsTheSameOnTheGpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const auto cpu = make_synthetic_batch("transformer", {}, 8, 5, torch::kCPU);
  const auto gpu = make_synthetic_batch("transformer", {}, 8, 5, torch::Device(torch::kCUDA, 0));
  EXPECT_TRUE(gpu.inputs.is_cuda());
  EXPECT_TRUE(torch::equal(cpu.inputs, gpu.inputs.cpu()));
  EXPECT_TRUE(torch::equal(cpu.labels, gpu.labels.cpu()));
}

// A session keeps its batch in the layout the model reads (Model::in_reading_layout): the
// same shape and values; the recurrent models' batch stored time-major, so their forward reads
// it without a copy and computes exactly what it computes from the [batch, ...] contiguous one.
TEST(Models, EveryModelReadsItsLaidOutBatchAsItsBatch) {
  ModelOptions options;
  options.dropout = false;
  for (const auto& name : builtin_model_names()) {
    SCOPED_TRACE(name);
    auto model = build_model(name, options);
    const auto batch = make_synthetic_batch(name, options, 5, 3, torch::kCPU);
    const auto laid_out = model->in_reading_layout(batch.inputs);
    EXPECT_EQ(laid_out.sizes(), batch.inputs.sizes());
    EXPECT_TRUE(torch::equal(laid_out, batch.inputs));
    const auto family = describe_model(name, options).family;
    if (family == "lstm" || family == "gru") {
      EXPECT_TRUE(laid_out.transpose(0, 1).is_contiguous());
      EXPECT_TRUE(torch::equal(model->forward(laid_out), model->forward(batch.inputs)));
    } else {
      EXPECT_EQ(laid_out.data_ptr(), batch.inputs.data_ptr());  // as it is
    }
  }
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
  // And dropout on really drops, in each family.
  for (const char* name : {"mlp-medium", "lstm", "transformer"}) {
    auto noisy = build_model(name, {});
    noisy->train();
    const auto batch = make_synthetic_batch(name, {}, 2, 3, torch::kCPU);
    EXPECT_FALSE(torch::equal(noisy->forward(batch.inputs), noisy->forward(batch.inputs))) << name;
  }
}

TEST(Models, UnknownModelsAreNamedWithTheChoices) {
  try {
    describe_model("resnet50", {});
    FAIL();
  } catch (const UnknownModelError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'resnet50'"), std::string::npos) << message;
    for (const auto& name : builtin_model_names()) EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find("mlp@<size>"), std::string::npos) << message;
    EXPECT_NE(message.find("transformer@<size>"), std::string::npos) << message;
  }
  EXPECT_THROW(build_model("resnet50", {}), UnknownModelError);
  EXPECT_THROW(make_synthetic_batch("resnet50", {}, 1, 1, torch::kCPU), UnknownModelError);
  EXPECT_THROW(describe_model("mlp@10X", {}), UnknownModelError);
  EXPECT_THROW(describe_model("mlp@", {}), UnknownModelError);
}

TEST(Models, FamilySizesOutsideTheRangeAreRefusedClearly) {
  for (const char* name : {"mlp@50K", "transformer@3B", "mlp@99999"}) {
    try {
      describe_model(name, {});
      FAIL() << name;
    } catch (const UnknownModelError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(name), std::string::npos) << message;
      EXPECT_NE(message.find("100K to 2B"), std::string::npos) << message;
    }
  }
  EXPECT_NO_THROW(describe_model("mlp@100K", {}));
  EXPECT_NO_THROW(describe_model("transformer@2B", {}));
  // A vocabulary whose embedding alone outgrows the target cannot fit.
  ModelOptions huge_vocab;
  huge_vocab.vocab = 50000;
  EXPECT_THROW(describe_model("transformer@100K", huge_vocab), UnknownModelError);
}

// Independent reference: LibTorch's own nn::TransformerEncoderLayer (post-norm, ReLU), given
// the same weights by name. Our block must compute the same function and hold the same
// parameters under the same names; only the layout differs (it is batch first). The same
// function computed twice is an identity, so it is checked in float64: the two differ only
// by the order of sums of at most ff = 96 terms, ~1e-14 relative, far below 1e-10.
TEST(Models, EncoderBlockComputesWhatLibTorchsEncoderLayerComputes) {
  torch::manual_seed(7);
  const int64_t d = 48, heads = 4, ff = 96, batch = 3, sequence = 5;
  EncoderBlock ours(EncoderBlockShape{d, heads, ff, 0.0});
  torch::nn::TransformerEncoderLayer reference(
      torch::nn::TransformerEncoderLayerOptions(d, heads).dim_feedforward(ff).dropout(0.0));
  ours->to(torch::kDouble);
  reference->to(torch::kDouble);
  std::vector<std::string> our_names, reference_names;
  for (const auto& p : ours->named_parameters()) our_names.push_back(p.key());
  for (const auto& p : reference->named_parameters()) reference_names.push_back(p.key());
  ASSERT_EQ(our_names, reference_names);
  {
    torch::NoGradGuard no_grad;
    auto reference_parameters = reference->named_parameters();
    for (auto& p : ours->named_parameters()) {
      // Our zero-initialised biases must not make the comparison trivial.
      p.value().copy_(torch::randn_like(p.value()) * 0.3);
      reference_parameters[p.key()].copy_(p.value());
    }
  }
  const auto x = torch::randn({batch, sequence, d}, torch::kDouble);
  const auto expected = reference->forward(x.transpose(0, 1)).transpose(0, 1);
  const auto actual = ours->forward(x);
  ASSERT_EQ(actual.sizes(), expected.sizes());
  EXPECT_LT((actual - expected).abs().max().item<double>(), 1e-10);
  // And the gradients agree, which is what the DDP engine buckets.
  actual.pow(2).sum().backward();
  expected.pow(2).sum().backward();
  auto reference_parameters = reference->named_parameters();
  for (const auto& p : ours->named_parameters())
    EXPECT_LT((p.value().grad() - reference_parameters[p.key()].grad()).abs().max().item<double>(), 1e-10) << p.key();
}

// Independent reference: LibTorch's nn::LSTM / nn::GRU with batch_first, given the same
// weights by name, and the head on the output's last time step, as PyTorch users write it.
// Ours feeds the layers time-major with a kept zero state, which must compute the same
// function and gradients. Checked in float64, at two batch sizes in turn, so the zero state
// is made again when the batch changes.
TEST(Models, RecurrentModelsComputeWhatBatchFirstLayersCompute) {
  ModelOptions options;
  options.dropout = false;
  for (const char* name : {"lstm", "gru"}) {
    SCOPED_TRACE(name);
    torch::manual_seed(5);
    auto ours = build_model(name, options);
    ours->to(torch::kDouble);
    const bool lstm = std::string(name) == "lstm";
    auto layer_options = [](auto o) { return o.num_layers(2).batch_first(true); };
    torch::nn::LSTM reference_lstm{nullptr};
    torch::nn::GRU reference_gru{nullptr};
    torch::nn::Module* reference_layers = nullptr;
    if (lstm) {
      reference_lstm = torch::nn::LSTM(layer_options(torch::nn::LSTMOptions(32, 160)));
      reference_layers = reference_lstm.get();
    } else {
      reference_gru = torch::nn::GRU(layer_options(torch::nn::GRUOptions(32, 160)));
      reference_layers = reference_gru.get();
    }
    torch::nn::Linear reference_head(160, 10);
    reference_layers->to(torch::kDouble);
    reference_head->to(torch::kDouble);
    auto ours_by_name = ours->named_parameters();
    {
      torch::NoGradGuard no_grad;
      for (auto& p : reference_layers->named_parameters()) p.value().copy_(ours_by_name[std::string(name) + "." + p.key()]);
      for (auto& p : reference_head->named_parameters()) p.value().copy_(ours_by_name["head." + p.key()]);
    }
    ASSERT_EQ(reference_layers->parameters().size() + 2, ours->parameters().size());
    for (const int64_t batch : {3, 5, 3}) {
      ours->zero_grad();
      reference_layers->zero_grad();
      reference_head->zero_grad();
      const auto x = torch::randn({batch, 64, 32}, torch::kDouble);
      const auto sequence = lstm ? std::get<0>(reference_lstm->forward(x)) : std::get<0>(reference_gru->forward(x));
      const auto expected = reference_head->forward(sequence.select(1, 63));
      const auto actual = ours->forward(x);
      ASSERT_EQ(actual.sizes(), expected.sizes());
      EXPECT_LT((actual - expected).abs().max().item<double>(), 1e-12) << batch;
      actual.pow(2).sum().backward();
      expected.pow(2).sum().backward();
      for (auto& p : reference_layers->named_parameters())
        EXPECT_LT((ours_by_name[std::string(name) + "." + p.key()].grad() - p.value().grad()).abs().max().item<double>(), 1e-12)
            << p.key();
      for (auto& p : reference_head->named_parameters())
        EXPECT_LT((ours_by_name["head." + p.key()].grad() - p.value().grad()).abs().max().item<double>(), 1e-12) << p.key();
    }
  }
}

// On the CPU relu_dropout is torch::relu then torch::dropout (the one-kernel backward is CUDA
// only; its GPU test is ReluDropout.OutputsAndGradientsAreLibTorchsBitForBit): the same output and
// gradient from the same seed, and in eval mode ReLU alone.
TEST(Models, ReluDropoutOnTheCpuIsReluThenDropout) {
  const auto x = torch::randn({9, 31}, torch::kDouble);
  EXPECT_FALSE(relu_dropout_is_fused(x, 0.3));
  auto ours_input = x.clone().requires_grad_(true), reference_input = x.clone().requires_grad_(true);
  torch::manual_seed(4);
  const auto ours = relu_dropout(ours_input, 0.3, /*training=*/true);
  torch::manual_seed(4);
  const auto reference = torch::dropout(torch::relu(reference_input), 0.3, /*training=*/true);
  EXPECT_TRUE(torch::equal(ours, reference));
  ours.sum().backward();
  reference.sum().backward();
  EXPECT_TRUE(torch::equal(ours_input.grad(), reference_input.grad()));
  EXPECT_GT((ours == 0).sum().item<int64_t>(), (torch::relu(x) == 0).sum().item<int64_t>());  // it dropped
  EXPECT_TRUE(torch::equal(relu_dropout(x, 0.3, /*training=*/false), torch::relu(x)));
}

TEST(Models, EncoderBlockDropoutOnlyActsWhileTraining) {
  torch::manual_seed(3);
  EncoderBlock block(EncoderBlockShape{16, 2, 32, 0.5});
  const auto x = torch::randn({2, 4, 16});
  block->eval();
  EXPECT_TRUE(torch::equal(block->forward(x), block->forward(x)));
  block->train();
  EXPECT_FALSE(torch::equal(block->forward(x), block->forward(x)));
}

}  // namespace
}  // namespace ddpscale
