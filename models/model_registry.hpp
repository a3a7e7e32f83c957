// The models a study trains, built: the seed study's MLPs (exact parameter counts), its LSTM,
// GRU and transformer, and size families (mlp@10M, transformer@100M) for the parameter-
// threshold study; their synthetic batches and loss. model_catalog.hpp names and sizes them
// without LibTorch.
#pragma once
#include "models/model_catalog.hpp"

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>

namespace ddpscale {

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
