// The built-in models by name, in closed form: the seed models and the size families
// (mlp@10M, transformer@100M), their options, shapes, parameter counts and one-line
// descriptions. Plain arithmetic, no LibTorch: a report names and sizes the models it shows
// without loading it. models/model_registry.hpp builds them; models/model_catalog.hpp
// describes any model, your own TorchScript files too.
#pragma once
#include "models/catalog/model_shapes.hpp"

#include <cstdint>
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

// mlp-medium, mlp-large, lstm, gru, transformer (the size families are not listed).
std::vector<std::string> builtin_model_names();

enum class ModelFamily { mlp, lstm, gru, transformer };

// A built-in name resolved to the one shape it stands for.
struct BuiltinModel {
  ModelFamily family = ModelFamily::mlp;
  MlpShape mlp;
  RecurrentShape recurrent;
  TransformerShape transformer;
};

// Throws UnknownModelError for an unknown name (naming the closest built-in one, or the
// torchscript: prefix for what looks like a file), a malformed size, a size outside
// [100K, 2B], or a size family these options cannot fit within 2%.
BuiltinModel resolve_builtin_model(const std::string& name, const ModelOptions& options);

// Closed form, allocates nothing: cheap for transformer@2B. Throws as resolve_builtin_model.
ModelDescription describe_builtin_model(const std::string& name, const ModelOptions& options);

}  // namespace ddpscale
