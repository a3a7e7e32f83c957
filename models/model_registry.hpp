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

// 0 means "the model's own default" (models/README.md lists them). Changing a width
// changes the parameter count: the seed's exact counts hold at the defaults.
struct ModelOptions {
  int64_t seq_len = 0;   // lstm, gru, transformer: 64
  int64_t features = 0;  // mlp-medium 799, mlp-large 4608, mlp@ 512, lstm/gru 32
  int64_t vocab = 0;     // transformer: 1000
  int64_t classes = 0;   // mlp-medium 192, mlp-large 768, mlp@ 100, others 10
  bool dropout = true;   // false: every dropout off (deterministic models for the tests)
};

struct ModelDescription {
  std::string name;
  std::string family;        // mlp | lstm | gru | transformer
  int64_t parameters = 0;
  std::string layers;        // one-line summary
  int64_t weight_bytes_fp32 = 0;
  int64_t adam_state_bytes_fp32 = 0;  // two moments per parameter
};

class UnknownModelError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class Model : public torch::nn::Module {
 public:
  // inputs from make_synthetic_batch; returns logits [batch, classes].
  virtual torch::Tensor forward(const torch::Tensor& inputs) = 0;
};

struct SyntheticBatch {
  torch::Tensor inputs, labels;
};

std::vector<std::string> builtin_model_names();
ModelDescription describe_model(const std::string& name, const ModelOptions& options);
std::shared_ptr<Model> build_model(const std::string& name, const ModelOptions& options);
// The batch is generated on the CPU from `seed` (identical on every rank and machine) and
// moved to `device` once: data generation never runs inside a measured step.
SyntheticBatch make_synthetic_batch(const std::string& name, const ModelOptions& options, int64_t batch,
                                    uint64_t seed, torch::Device device);
torch::Tensor model_loss(const torch::Tensor& logits, const torch::Tensor& labels);

}  // namespace ddpscale
