// Your own model: `--model torchscript:PATH` trains any module PyTorch exported with
// torch.jit.script or torch.jit.trace (docs/own-models.md). The contract: `forward` takes one
// tensor (float [batch, shape...] from --input-shape, or int64 token ids [batch, seq] from
// --input tokens:VOCAB:SEQ) and returns logits [batch, ..., classes]; the synthetic labels are
// int64 [batch, ...] in [0, classes) (one per sequence position when the output has one). A
// module with a method `loss(input, target)` returning a scalar trains on that instead of
// cross-entropy.
#pragma once
#include "models/model_registry.hpp"

#include <torch/script.h>
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpscale {

constexpr const char* kTorchScriptPrefix = "torchscript:";

bool is_torchscript_model(const std::string& name);
std::string torchscript_path(const std::string& name);  // what follows "torchscript:"
std::string torchscript_stem(const std::string& name);  // the file's stem: the model's name in reports

// What the module's forward is fed, per sample.
struct TorchScriptInput {
  std::vector<int64_t> shape;  // float inputs [batch, shape...]; tokens: {seq}
  int64_t vocab = 0;           // > 0: int64 token ids in [0, vocab)
  std::string text() const;    // "3x224x224" or "tokens:VOCAB:SEQ"
};
// "3x224x224" (float inputs) or "tokens:VOCAB:SEQ"; throws std::invalid_argument saying
// what was expected.
TorchScriptInput parse_torchscript_input(const std::string& text);

// Why a TorchScript model cannot be trained; the message names the file and the cause.
class TorchScriptError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// SHA-256 (FIPS 180-4) in lower-case hex, 64 characters, from OpenSSL's libcrypto: the
// TorchScript files a study trains are identified by it (ConfigParams::model_sha256).
std::string sha256_hex(const std::string& bytes);
// Reads the file in blocks; throws std::runtime_error naming the file when it cannot be read.
std::string sha256_file_hex(const std::string& path);

// What one probe (load, one forward on a batch of 3 in eval mode, the loss method if any)
// found. Cached per (file, size, modification time, input, classes).
struct TorchScriptProbe {
  std::string path, sha256;
  TorchScriptInput input;
  int64_t parameters = 0;          // every parameter, as PyTorch's sum(p.numel())
  int64_t trainable_parameters = 0;
  int64_t parameter_bytes = 0;     // as stored
  int64_t buffers = 0;
  std::vector<int64_t> output_shape;  // of the probe batch
  std::vector<int64_t> label_shape;   // per sample: the output's axes between batch and classes
  int64_t classes = 0;                // labels are drawn from [0, classes)
  bool has_loss = false;
};
// options.input must be set; options.classes 0 = the output's last axis. Throws
// TorchScriptError naming the file and the cause.
const TorchScriptProbe& probe_torchscript(const std::string& path, const ModelOptions& options);
// The file's SHA-256, cached per (file, size, modification time).
std::string torchscript_sha256(const std::string& path);

// A TorchScript module as a Model: its parameters and buffers are registered on the
// nn::Module side as the same tensors (submodules mirrored, so names read "fc1.weight"), and
// to() converts them in place (set_data), so both sides keep sharing them.
class TorchScriptModel final : public Model {
 public:
  TorchScriptModel(torch::jit::Module module, std::string path);
  torch::Tensor forward(const torch::Tensor& inputs) override;
  torch::Tensor training_loss(const torch::Tensor& inputs, const torch::Tensor& labels) override;
  bool has_custom_loss() const { return has_loss_; }
  void train(bool on = true) override;
  void to(torch::Device device, torch::Dtype dtype, bool non_blocking = false) override;
  void to(torch::Dtype dtype, bool non_blocking = false) override;
  void to(torch::Device device, bool non_blocking = false) override;
  torch::jit::Module& module() { return module_; }

 private:
  void convert(std::optional<torch::Device> device, std::optional<torch::Dtype> dtype, bool non_blocking);
  torch::jit::Module module_;
  std::string path_;
  bool has_loss_ = false;
};

// Loads the file (throws TorchScriptError naming it when it is not TorchScript).
std::shared_ptr<TorchScriptModel> load_torchscript_model(const std::string& path);

// For the registry: the description, the model and the synthetic batch of "torchscript:PATH".
ModelDescription describe_torchscript_model(const std::string& name, const ModelOptions& options);
SyntheticBatch make_torchscript_batch(const std::string& name, const ModelOptions& options, int64_t batch,
                                      uint64_t seed, torch::Device device);

}  // namespace ddpscale
