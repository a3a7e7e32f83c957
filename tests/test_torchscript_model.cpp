// torchscript:PATH models (models/torchscript_model.hpp): SHA-256 against FIPS 180-4's
// vectors, the jit module and the nn::Module sharing tensors through to(), the input
// contract, the module's own loss, the errors that name the file and the cause, and the
// configuration record that makes --resume refuse a changed file.
#include "models/torchscript_model.hpp"
#include "results/store/run_store.hpp"
#include "tests/temp_dir.hpp"
#include "tests/torchscript_fixtures.hpp"
#include "trainer/command_line/cli_util.hpp"
#include "trainer/study/sweep_spec.hpp"
#include "trainer/study/train_options.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace ddpscale {
namespace {

using testing_fixtures::MlpFile;
using testing_fixtures::write_mlp;

ModelOptions input_of(const std::string& input, int64_t classes = 0) {
  ModelOptions o;
  o.input = input;
  o.classes = classes;
  return o;
}

// The message of what `f` throws (empty when it does not throw).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// FIPS 180-2 / NIST's examples (csrc.nist.gov, SHA256.pdf) and the empty message, through
// OpenSSL as ddpscale calls it.
TEST(Sha256, StandardTestVectorsAbcAndEmptyString) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, FileEqualsBytes) {
  TempDir dir;
  const std::string path = dir / "f.bin";
  std::ofstream(path, std::ios::binary) << std::string(3000000, 'x') << "abc";
  EXPECT_EQ(sha256_file_hex(path), sha256_hex(std::string(3000000, 'x') + "abc"));
}

TEST(TorchScriptModel, NamesAndTensorsAreTheJitModulesAndStaySharedThroughTo) {
  TempDir dir;
  const std::string path = dir / "mlp.pt";
  write_mlp(path, testing_fixtures::mlp_with(&MlpFile::step_counter, true));
  auto model = load_torchscript_model(path);
  std::vector<std::string> names;
  for (const auto& item : model->named_parameters()) names.push_back(item.key());
  EXPECT_EQ(names, (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}));
  ASSERT_EQ(model->buffers().size(), 1u);
  for (const auto& p : model->parameters()) EXPECT_TRUE(p.requires_grad());

  auto same_tensors = [&] {
    const auto jit = model->module().parameters();
    const auto nn = model->parameters();
    size_t i = 0;
    for (const auto& t : jit) {
      if (i >= nn.size() || !t.is_same(nn[i]) || t.data_ptr() != nn[i].data_ptr()) return false;
      ++i;
    }
    return i == nn.size();
  };
  EXPECT_TRUE(same_tensors());
  model->to(torch::kDouble);
  EXPECT_TRUE(same_tensors());
  for (const auto& p : model->module().parameters()) EXPECT_EQ(p.scalar_type(), torch::kDouble);
  EXPECT_EQ(model->buffers()[0].scalar_type(), torch::kLong);  // integer buffers keep their type
  EXPECT_TRUE(model->buffers()[0].is_same(*model->module().buffers().begin()));
  model->to(torch::Device(torch::kCPU));
  EXPECT_TRUE(same_tensors());

  // In place on the nn side (as an optimizer steps) shows on the jit side's forward.
  const auto x = torch::randn({2, 16}, torch::kDouble);
  const auto before = model->forward(x);
  {
    torch::NoGradGuard no_grad;
    model->named_parameters()["fc2.bias"].add_(1.0);
  }
  EXPECT_TRUE(torch::allclose(model->forward(x), before + 1.0));
  // Gradients land on the registered tensors.
  model->training_loss(x, torch::tensor({0, 3})).backward();
  for (const auto& p : model->parameters()) EXPECT_TRUE(p.grad().defined());

  model->eval();
  EXPECT_FALSE(model->module().is_training());
  model->train();
  EXPECT_TRUE(model->module().is_training());
}

TEST(TorchScriptModel, DescribeBuildAndSyntheticBatch) {
  TempDir dir;
  const std::string path = dir / "my_mlp.pt";
  write_mlp(path);
  const std::string name = "torchscript:" + path;
  const ModelDescription d = describe_model(name, input_of("16"));
  EXPECT_EQ(d.name, "my_mlp");
  EXPECT_EQ(d.family, "torchscript");
  EXPECT_EQ(d.parameters, 16 * 8 + 8 + 8 * 4 + 4);
  EXPECT_NE(d.layers.find("output [3, 4]"), std::string::npos) << d.layers;
  EXPECT_EQ(d.weight_bytes_fp32, d.parameters * 4);

  const auto a = make_synthetic_batch(name, input_of("16"), 5, 11, torch::kCPU);
  const auto b = make_synthetic_batch(name, input_of("16"), 5, 11, torch::kCPU);
  const auto c = make_synthetic_batch(name, input_of("16"), 5, 12, torch::kCPU);
  EXPECT_EQ(a.inputs.sizes(), (std::vector<int64_t>{5, 16}));
  EXPECT_EQ(a.labels.sizes(), (std::vector<int64_t>{5}));
  EXPECT_EQ(a.labels.scalar_type(), torch::kLong);
  EXPECT_TRUE(torch::equal(a.inputs, b.inputs) && torch::equal(a.labels, b.labels));
  EXPECT_FALSE(torch::equal(a.inputs, c.inputs));
  EXPECT_LT(a.labels.max().item<int64_t>(), 4);
  // --classes 2: labels drawn from [0, 2)
  const auto two = make_synthetic_batch(name, input_of("16", 2), 64, 1, torch::kCPU);
  EXPECT_LT(two.labels.max().item<int64_t>(), 2);

  auto model = build_model(name, input_of("16"));
  EXPECT_TRUE(std::isfinite(model->training_loss(a.inputs, a.labels).item<float>()));
}

TEST(TorchScriptModel, TokenInputsWithASequenceAxisGetALabelPerPosition) {
  TempDir dir;
  const std::string path = dir / "tokens.pt";
  testing_fixtures::write_token_model(path, 50, 6, 5);
  const std::string name = "torchscript:" + path;
  const auto batch = make_synthetic_batch(name, input_of("tokens:50:7"), 4, 1, torch::kCPU);
  EXPECT_EQ(batch.inputs.scalar_type(), torch::kLong);
  EXPECT_EQ(batch.inputs.sizes(), (std::vector<int64_t>{4, 7}));
  EXPECT_LT(batch.inputs.max().item<int64_t>(), 50);
  EXPECT_EQ(batch.labels.sizes(), (std::vector<int64_t>{4, 7}));
  auto model = build_model(name, input_of("tokens:50:7"));
  const auto logits = model->forward(batch.inputs);
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{4, 7, 5}));
  const auto expected = torch::nn::functional::cross_entropy(logits.reshape({-1, 5}), batch.labels.reshape({-1}));
  EXPECT_TRUE(torch::allclose(model->training_loss(batch.inputs, batch.labels), expected));
}

TEST(TorchScriptModel, AModuleWithALossMethodTrainsOnIt) {
  TempDir dir;
  const std::string path = dir / "own_loss.pt";
  write_mlp(path, testing_fixtures::mlp_with(&MlpFile::own_loss, true));
  auto model = build_model("torchscript:" + path, input_of("16"));
  const auto x = torch::randn({3, 16});
  const auto labels = torch::tensor({0, 1, 2});
  const auto own = model->training_loss(x, labels);
  EXPECT_TRUE(torch::allclose(own, (model->forward(x) * model->forward(x)).sum()));
  EXPECT_FALSE(torch::allclose(own, model_loss(model->forward(x), labels)));
  EXPECT_NE(describe_model("torchscript:" + path, input_of("16")).layers.find("own loss()"), std::string::npos);
}

// Each bad input: the message names the file and the cause.
TEST(TorchScriptModel, BadInputsNameTheFileAndTheCause) {
  TempDir dir;
  const std::string text = dir / "notes.pt";
  std::ofstream(text) << "this is not a model\n";
  std::string e = error_of([&] { describe_model("torchscript:" + text, input_of("16")); });
  EXPECT_NE(e.find(text + ": not a TorchScript file"), std::string::npos) << e;

  const std::string missing = dir / "missing.pt";
  e = error_of([&] { describe_model("torchscript:" + missing, input_of("16")); });
  EXPECT_NE(e.find(missing + ": no such file"), std::string::npos) << e;

  const std::string mlp = dir / "mlp.pt";
  write_mlp(mlp);
  e = error_of([&] { describe_model("torchscript:" + mlp, input_of("5")); });
  EXPECT_NE(e.find(mlp + ": forward failed on the declared input float [3, 5]"), std::string::npos) << e;
  EXPECT_NE(e.find("The module said: "), std::string::npos) << e;
  e = error_of([&] { describe_model("torchscript:" + mlp, input_of("16", 9)); });
  EXPECT_NE(e.find(mlp + ": --classes 9 but the output [3, 4] has 4 logits"), std::string::npos) << e;
  e = error_of([&] { describe_model("torchscript:" + mlp, input_of("")); });
  EXPECT_NE(e.find(mlp + ": say what its forward takes"), std::string::npos) << e;

  const std::string scalar = dir / "scalar.pt";
  write_mlp(scalar, testing_fixtures::mlp_with(&MlpFile::no_batch_axis, true));
  e = error_of([&] { describe_model("torchscript:" + scalar, input_of("16")); });
  EXPECT_NE(e.find(scalar + ": the output [] for input [3, 16] has no batch axis"), std::string::npos) << e;

  const std::string frozen = dir / "frozen.pt";
  write_mlp(frozen, testing_fixtures::mlp_with(&MlpFile::frozen, true));
  e = error_of([&] { describe_model("torchscript:" + frozen, input_of("16")); });
  EXPECT_NE(e.find(frozen + ": the module has no trainable parameters"), std::string::npos) << e;
}

TEST(TorchScriptOptions, InputContractIsValidatedBeforeAnyCollective) {
  TempDir dir;
  const std::string path = dir / "mlp.pt";
  write_mlp(path);
  EngineOptions o;
  o.model = "torchscript:" + path;
  EXPECT_NE(error_of([&] { validate_model_input(o); }).find("give one of --input-shape"), std::string::npos);
  o.input_shape = "16x";
  EXPECT_NE(error_of([&] { validate_model_input(o); }).find("--input-shape '16x' is not a shape"), std::string::npos);
  o.input_shape = "16";
  EXPECT_EQ(error_of([&] { validate_model_input(o); }), "");
  o.input = "tokens:10:4";
  EXPECT_NE(error_of([&] { validate_model_input(o); }).find("not both"), std::string::npos);
  o.input_shape = "";
  o.input = "tokens:10";
  EXPECT_NE(error_of([&] { validate_model_input(o); }).find("is not tokens:VOCAB:SEQ"), std::string::npos);
  EngineOptions builtin;
  builtin.input_shape = "16";
  EXPECT_THROW(validate_model_input(builtin), UsageError);
  EXPECT_EQ(parse_torchscript_input("3x224x224").text(), "3x224x224");
  EXPECT_EQ(parse_torchscript_input("tokens:30522:128").text(), "tokens:30522:128");
  EXPECT_EQ(parse_torchscript_input("tokens:30522:128").shape, (std::vector<int64_t>{128}));
}

// The record names the model by the file's stem and holds its SHA-256 and input: --resume
// (same_params) refuses a file that changed, or the same file fed another input.
TEST(TorchScriptOptions, ResumeRefusesAChangedFile) {
  TempDir dir;
  const std::string path = dir / "resnet_like.pt";
  write_mlp(path);
  TrainOptions o;
  o.model = "torchscript:" + path;
  o.input_shape = "16";
  const auto params = [&] {
    return config_params(o, 2, describe_model(o.model, model_options_from(o)).parameters, false);
  };
  const ConfigParams before = params();
  EXPECT_EQ(before.model, "resnet_like");
  EXPECT_EQ(before.model_sha256, sha256_file_hex(path));
  EXPECT_EQ(before.model_input, "16");
  EXPECT_EQ(before.parameters, 172);
  EXPECT_TRUE(same_params(before, params()));
  EXPECT_EQ(config_id(before).rfind("resnet_like_b32_w2", 0), 0u) << config_id(before);

  write_mlp(path, testing_fixtures::mlp_with(&MlpFile::seed, uint64_t{8}));  // same architecture, other weights: same count
  const ConfigParams after = params();
  EXPECT_EQ(after.parameters, before.parameters);
  EXPECT_NE(after.model_sha256, before.model_sha256);
  EXPECT_FALSE(same_params(before, after));

  ConfigParams other_input = after;
  other_input.model_input = "32";
  EXPECT_FALSE(same_params(after, other_input));
  // Built-in models record neither.
  TrainOptions builtin;
  const ConfigParams mlp = config_params(builtin, 1, 258432, false);
  EXPECT_EQ(mlp.model_sha256, "");
  EXPECT_EQ(mlp.model_input, "");
}

// A sweep spec's top-level input_shape / input apply to its TorchScript models only.
TEST(TorchScriptOptions, SweepSpecInputKeysReachTheTorchScriptModelsOnly) {
  TempDir dir;
  const std::string path = dir / "mlp.pt";
  write_mlp(path);
  const SweepSpec spec = parse_sweep_spec("models: [mlp-medium, \"torchscript:" + path +
                                              "\"]\nbatch_sizes: [4]\nworld_sizes: [1, 2]\ninput_shape: 16\n",
                                          "spec.yaml");
  const auto configs = expand_sweep(spec, "");
  ASSERT_EQ(configs.size(), 4u);
  for (const auto& c : configs) {
    const bool own = is_torchscript_model(c.options.model);
    EXPECT_EQ(c.options.input_shape, own ? "16" : "") << c.options.model;
    EXPECT_NO_THROW(validate_train_options(c.options, 2, false)) << c.options.model;
    EXPECT_EQ(describe_model(c.options.model, model_options_from(c.options)).parameters, own ? 172 : 258432);
  }
  EXPECT_THROW(parse_sweep_spec("models: [mlp-medium]\nbatch_sizes: [4]\nworld_sizes: [1]\ninput_shapes: 16\n",
                                "spec.yaml"),
               SpecError);
}

// A mapping in `models:` gives one TorchScript model its own input and classes.
TEST(TorchScriptOptions, SweepSpecModelMappingsGiveAModelItsOwnInput) {
  TempDir dir;
  write_mlp(dir / "mlp.pt");
  testing_fixtures::write_token_model(dir / "tokens.pt", 50, 6, 5);
  const std::string mlp = "torchscript:" + (dir / "mlp.pt"), tokens = "torchscript:" + (dir / "tokens.pt");
  const SweepSpec spec = parse_sweep_spec("models:\n  - \"" + mlp + "\"\n  - {model: \"" + tokens +
                                              "\", input: \"tokens:50:7\", classes: 3}\nbatch_sizes: [4]\n"
                                              "world_sizes: [1]\ninput_shape: 16\nclasses: 4\n",
                                          "spec.yaml");
  const auto configs = expand_sweep(spec, "");
  ASSERT_EQ(configs.size(), 2u);
  for (const auto& c : configs) {
    const bool is_tokens = c.options.model == tokens;
    EXPECT_EQ(c.options.input_shape, is_tokens ? "" : "16");
    EXPECT_EQ(c.options.input, is_tokens ? "tokens:50:7" : "");
    EXPECT_EQ(c.options.classes, is_tokens ? 3 : 4);
    EXPECT_NO_THROW(validate_train_options(c.options, 1, false));
    EXPECT_NO_THROW(describe_model(c.options.model, model_options_from(c.options)));
  }
  const std::string bad = "models:\n  - {model: mlp-medium, classes: 3}\nbatch_sizes: [4]\nworld_sizes: [1]\n";
  EXPECT_NE(error_of([&] { parse_sweep_spec(bad, "spec.yaml"); }).find("only torchscript:PATH models"), std::string::npos);
  const std::string unknown = "models:\n  - {model: \"" + mlp + "\", shape: 16}\nbatch_sizes: [4]\nworld_sizes: [1]\n";
  EXPECT_NE(error_of([&] { parse_sweep_spec(unknown, "spec.yaml"); }).find("models.shape"), std::string::npos);
}

}  // namespace
}  // namespace ddpscale
