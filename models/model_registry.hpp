// The models a study trains: the seed study's MLPs (exact parameter counts), its LSTM, GRU
// and transformer, and size families (mlp@10M, transformer@100M) for the parameter-
// threshold study. describe_model() counts parameters in closed form, without building.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpscale {

// 0 means "the model's own default"; one number cannot serve every model (the seed MLPs
// need 799 and 4608 inputs, the recurrent models 32 features). Defaults (models/README.md):
//   seq_len   lstm, gru, transformer, transformer@: 64          (unused by MLPs)
//   features  mlp-medium 799, mlp-large 4608, mlp@ 512, lstm/gru 32  (unused by transformers)
//   vocab     transformer, transformer@: 1000                   (unused otherwise)
//   classes   mlp-medium 192, mlp-large 768, mlp@ 100, lstm/gru/transformer(@) 10
// Changing features, classes or vocab changes a fixed model's parameter count (the seed's
// exact counts hold at the defaults); size families are refitted so they keep their size.
struct ModelOptions {
  int64_t seq_len = 0;
  int64_t features = 0;
  int64_t vocab = 0;
  int64_t classes = 0;
  bool dropout = true;  // false: every dropout off (deterministic models for the tests)
  // torchscript:PATH only (torchscript_model.hpp): what forward takes per sample, "3x224x224"
  // (float) or "tokens:VOCAB:SEQ" (int64 ids); classes 0 = the output's last axis.
  std::string input;
};

struct ModelDescription {
  std::string name;
  std::string family;  // mlp | lstm | gru | transformer
  int64_t parameters = 0;
  std::string layers;  // one-line summary
  int64_t weight_bytes_fp32 = 0;
  int64_t adam_state_bytes_fp32 = 0;  // two moments per parameter
};

class UnknownModelError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class Model : public torch::nn::Module {
 public:
  // inputs as make_synthetic_batch makes them: float [batch, features] (MLPs), float
  // [batch, seq_len, features] (lstm, gru), int64 token ids [batch, seq_len] (transformers).
  // Returns logits [batch, classes].
  virtual torch::Tensor forward(const torch::Tensor& inputs) = 0;
  // The loss a training step minimises: model_loss(forward(inputs), labels), unless the
  // model brings its own (a TorchScript module's loss(input, target) method).
  virtual torch::Tensor training_loss(const torch::Tensor& inputs, const torch::Tensor& labels);
  // The same batch (shape and values) in the memory layout forward reads without a copy. A
  // session lays the batch it keeps on the device out this way once, outside every step.
  // Default: as it is.
  virtual torch::Tensor in_reading_layout(const torch::Tensor& inputs) const { return inputs; }
};

struct SyntheticBatch {
  torch::Tensor inputs, labels;
};

// mlp-medium, mlp-large, lstm, gru, transformer (the size families are not listed), and any
// "torchscript:PATH" (torchscript_model.hpp: it loads the file, so describe_model does too).
std::vector<std::string> builtin_model_names();
// Closed form, allocates nothing: cheap for transformer@2B. Throws UnknownModelError for an
// unknown name, a malformed size, or a size outside [100K, 2B].
ModelDescription describe_model(const std::string& name, const ModelOptions& options);
// Parameters are registered in data-flow order (input layer first); the DDP engine relies on
// that order being the same on every rank. Initialised from torch's global generator.
std::shared_ptr<Model> build_model(const std::string& name, const ModelOptions& options);
// The batch is generated on the CPU from `seed` (identical on every rank and machine) and
// moved to `device` once: data generation never runs inside a measured step.
SyntheticBatch make_synthetic_batch(const std::string& name, const ModelOptions& options, int64_t batch,
                                    uint64_t seed, torch::Device device);
// Mean cross-entropy of logits [batch, classes] against int64 labels [batch]; logits
// [batch, ..., classes] against labels [batch, ...]: the mean over every position.
torch::Tensor model_loss(const torch::Tensor& logits, const torch::Tensor& labels);

}  // namespace ddpscale
