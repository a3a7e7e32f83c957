// What a study can name without building anything: the models' options, their closed-form
// descriptions (parameter counts, memory) and the names on offer. No LibTorch here, so the
// planning, reporting and CLI code that only names and sizes models compiles without it;
// models/model_registry.hpp builds them.
#pragma once
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

// mlp-medium, mlp-large, lstm, gru, transformer (the size families are not listed), and any
// "torchscript:PATH" (torchscript_model.hpp: it loads the file, so describe_model does too).
std::vector<std::string> builtin_model_names();
// Closed form, allocates nothing: cheap for transformer@2B. Throws UnknownModelError for an
// unknown name, a malformed size, or a size outside [100K, 2B].
ModelDescription describe_model(const std::string& name, const ModelOptions& options);

}  // namespace ddpscale
