// Your own model named and described (`--model torchscript:PATH`, docs/own-models.md): the
// name's parts, what forward is fed, the probe's findings and the file's SHA-256. Declared
// without LibTorch, so the code that only plans, validates or reports a study compiles
// without it; torchscript_model.hpp trains the module.
#pragma once
#include "models/model_catalog.hpp"

#include <cstdint>
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

// For the registry: the description of "torchscript:PATH" (it loads the file to count).
ModelDescription describe_torchscript_model(const std::string& name, const ModelOptions& options);

}  // namespace ddpscale
