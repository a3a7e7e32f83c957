#include "models/torchscript_model.hpp"

#include <openssl/evp.h>
#include <sys/stat.h>
#include <torch/csrc/jit/passes/autocast.h>
#include <torch/version.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace ddpscale {
namespace {

constexpr int64_t kProbeBatch = 3;  // not 1 or 2: an output without a batch axis is unlikely to be 3 long

std::string shape_text(c10::IntArrayRef sizes) {
  std::ostringstream text;
  text << "[";
  for (size_t i = 0; i < sizes.size(); ++i) text << (i ? ", " : "") << sizes[i];
  text << "]";
  return text.str();
}

// What a TorchScript error says, without its traceback: the last non-empty line
// ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (3x5 and 16x8)").
std::string error_line(const std::exception& error) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&error);  // its what() ends in a C++ backtrace
  const std::string message = c10_error ? c10_error->what_without_backtrace() : error.what();
  std::istringstream in(message);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t") != std::string::npos) last = line.substr(line.find_first_not_of(" \t"));
  return last.empty() ? message : last;
}

// Identifies a file's version without reading it: the caches below hold per version.
std::string file_version(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return path + "|missing";
  return path + "|" + std::to_string(info.st_size) + "|" + std::to_string(info.st_mtim.tv_sec) + "." +
         std::to_string(info.st_mtim.tv_nsec);
}

void mirror(const torch::jit::Module& jit, torch::nn::Module& nn) {
  for (const auto& p : jit.named_parameters(/*recurse=*/false)) nn.register_parameter(p.name, p.value, p.value.requires_grad());
  for (const auto& b : jit.named_buffers(/*recurse=*/false)) nn.register_buffer(b.name, b.value);
  for (const auto& child : jit.named_children()) {
    auto holder = std::make_shared<torch::nn::Module>(child.name);
    mirror(child.value, *holder);
    nn.register_module(child.name, holder);
  }
}

torch::Tensor as_tensor(const c10::IValue& value, const std::string& path, const char* method) {
  if (!value.isTensor())
    throw TorchScriptError(path + ": " + method + " returned " + value.tagKind() + ", not a tensor (the contract: " +
                           method + " returns one tensor)");
  return value.toTensor();
}

TorchScriptInput probe_input(const ModelOptions& options, const std::string& path) {
  if (options.input.empty())
    throw TorchScriptError(path + ": say what its forward takes: --input-shape 3x224x224 (float inputs) or --input "
                           "tokens:VOCAB:SEQ (int64 token ids)");
  try {
    return parse_torchscript_input(options.input);
  } catch (const std::invalid_argument& e) {
    throw TorchScriptError(path + ": " + e.what());
  }
}

torch::Tensor synthetic_inputs(const TorchScriptInput& input, int64_t batch, at::Generator& generator) {
  std::vector<int64_t> sizes{batch};
  sizes.insert(sizes.end(), input.shape.begin(), input.shape.end());
  if (input.vocab > 0) return torch::randint(0, input.vocab, sizes, generator, torch::kLong);
  return torch::randn(sizes, generator, torch::kFloat);
}

torch::Tensor synthetic_labels(const TorchScriptProbe& probe, int64_t batch, at::Generator& generator) {
  std::vector<int64_t> sizes{batch};
  sizes.insert(sizes.end(), probe.label_shape.begin(), probe.label_shape.end());
  return torch::randint(0, probe.classes, sizes, generator, torch::kLong);
}

TorchScriptProbe run_probe(const std::string& path, const ModelOptions& options) {
  TorchScriptProbe probe;
  probe.path = path;
  probe.input = probe_input(options, path);
  auto model = load_torchscript_model(path);
  probe.sha256 = torchscript_sha256(path);
  probe.has_loss = model->has_custom_loss();
  for (const auto& p : model->parameters()) {
    probe.parameters += p.numel();
    probe.parameter_bytes += p.numel() * static_cast<int64_t>(p.element_size());
    if (p.requires_grad()) probe.trainable_parameters += p.numel();
  }
  probe.buffers = static_cast<int64_t>(model->buffers().size());
  if (probe.trainable_parameters == 0)
    throw TorchScriptError(path + ": the module has no trainable parameters (none with requires_grad): there is "
                           "nothing for data parallelism to average");

  torch::NoGradGuard no_grad;
  model->eval();  // BatchNorm on a probe batch must not need batch statistics
  auto generator = at::detail::createCPUGenerator(1);
  const torch::Tensor inputs = synthetic_inputs(probe.input, kProbeBatch, generator);
  torch::Tensor output;
  try {
    output = model->forward(inputs);
  } catch (const TorchScriptError&) {
    throw;
  } catch (const std::exception& e) {
    throw TorchScriptError(path + ": forward failed on the declared input " +
                           std::string(inputs.is_floating_point() ? "float " : "int64 ") + shape_text(inputs.sizes()) +
                           " (batch " + std::to_string(kProbeBatch) + " + " + probe.input.text() +
                           "); fix --input-shape / --input. The module said: " + error_line(e));
  }
  probe.output_shape = output.sizes().vec();
  if (output.dim() == 0 || output.size(0) != kProbeBatch)
    throw TorchScriptError(path + ": the output " + shape_text(output.sizes()) + " for input " +
                           shape_text(inputs.sizes()) + " has no batch axis (its first axis must be the batch, " +
                           std::to_string(kProbeBatch) + ")");
  if (!probe.has_loss) {
    if (output.dim() < 2 || !output.is_floating_point())
      throw TorchScriptError(path + ": the output " + shape_text(output.sizes()) +
                             " is not logits [batch, ..., classes] (or define a method loss(input, target))");
    const int64_t logits = output.size(-1);
    probe.classes = options.classes > 0 ? options.classes : logits;
    if (probe.classes > logits)
      throw TorchScriptError(path + ": --classes " + std::to_string(probe.classes) + " but the output " +
                             shape_text(output.sizes()) + " has " + std::to_string(logits) + " logits per position");
    probe.label_shape.assign(probe.output_shape.begin() + 1, probe.output_shape.end() - 1);
  } else {
    probe.classes = options.classes > 0 ? options.classes : (output.dim() >= 2 ? output.size(-1) : 2);
    if (output.dim() >= 2) probe.label_shape.assign(probe.output_shape.begin() + 1, probe.output_shape.end() - 1);
    const torch::Tensor labels = synthetic_labels(probe, kProbeBatch, generator);
    torch::Tensor loss;
    try {
      loss = model->training_loss(inputs, labels);
    } catch (const std::exception& e) {
      throw TorchScriptError(path + ": loss(input, target) failed on input " + shape_text(inputs.sizes()) +
                             " and int64 target " + shape_text(labels.sizes()) + ". The module said: " +
                             error_line(e));
    }
    if (loss.numel() != 1 || !loss.is_floating_point())
      throw TorchScriptError(path + ": loss(input, target) returned " + shape_text(loss.sizes()) +
                             ", not a floating-point scalar");
  }
  return probe;
}

}  // namespace

bool is_torchscript_model(const std::string& name) { return name.rfind(kTorchScriptPrefix, 0) == 0; }

std::string torchscript_path(const std::string& name) {
  return is_torchscript_model(name) ? name.substr(std::string(kTorchScriptPrefix).size()) : name;
}

std::string torchscript_stem(const std::string& name) {
  return std::filesystem::path(torchscript_path(name)).stem().string();
}

std::string TorchScriptInput::text() const {
  std::string t;
  if (vocab > 0) return "tokens:" + std::to_string(vocab) + ":" + std::to_string(shape.empty() ? 0 : shape[0]);
  for (size_t i = 0; i < shape.size(); ++i) t += (i ? "x" : "") + std::to_string(shape[i]);
  return t;
}

static int64_t positive_number(const std::string& text, const std::string& whole, const char* expected) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || value <= 0)
    throw std::invalid_argument("'" + whole + "' is not " + expected);
  return value;
}

TorchScriptInput parse_torchscript_input(const std::string& text) {
  TorchScriptInput input;
  if (text.rfind("tokens:", 0) == 0) {
    const char* expected = "tokens:VOCAB:SEQ (two positive numbers, e.g. tokens:30522:128)";
    const std::string rest = text.substr(7);
    const size_t colon = rest.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("'" + text + "' is not " + expected);
    input.vocab = positive_number(rest.substr(0, colon), text, expected);
    input.shape = {positive_number(rest.substr(colon + 1), text, expected)};
    return input;
  }
  const char* expected = "a shape like 3x224x224 or 16 (positive sizes joined by x, the batch axis left out)";
  size_t start = 0;
  while (true) {
    const size_t x = text.find('x', start);
    input.shape.push_back(positive_number(text.substr(start, x - start), text, expected));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return input;
}

// ---- the model ----------------------------------------------------------------------------

TorchScriptModel::TorchScriptModel(torch::jit::Module module, std::string path)
    : module_(std::move(module)), path_(std::move(path)) {
  mirror(module_, *this);
  has_loss_ = module_.find_method("loss").has_value();
}

torch::Tensor TorchScriptModel::forward(const torch::Tensor& inputs) {
  return as_tensor(module_.forward({inputs}), path_, "forward");
}

torch::Tensor TorchScriptModel::training_loss(const torch::Tensor& inputs, const torch::Tensor& labels) {
  if (!has_loss_) return model_loss(forward(inputs), labels);
  return as_tensor(module_.get_method("loss")({inputs, labels}), path_, "loss");
}

void TorchScriptModel::train(bool on) {
  torch::nn::Module::train(on);
  module_.train(on);
}

// In place (set_data), as nn::Module::to does, so the jit module's attributes and the tensors
// registered here stay the same tensors; but only floating-point tensors change dtype
// (BatchNorm's num_batches_tracked stays int64).
void TorchScriptModel::convert(std::optional<torch::Device> device, std::optional<torch::Dtype> dtype,
                               bool non_blocking) {
  torch::NoGradGuard no_grad;
  auto move = [&](torch::Tensor t) {
    const auto target_dtype = dtype && t.is_floating_point() ? *dtype : t.scalar_type();
    t.set_data(t.to(device.value_or(t.device()), target_dtype, non_blocking));
  };
  for (const auto& p : module_.parameters(/*recurse=*/true)) move(p);
  for (const auto& b : module_.buffers(/*recurse=*/true)) move(b);
}

void TorchScriptModel::to(torch::Device device, torch::Dtype dtype, bool non_blocking) {
  convert(device, dtype, non_blocking);
}
void TorchScriptModel::to(torch::Dtype dtype, bool non_blocking) { convert(std::nullopt, dtype, non_blocking); }
void TorchScriptModel::to(torch::Device device, bool non_blocking) { convert(device, std::nullopt, non_blocking); }

std::shared_ptr<TorchScriptModel> load_torchscript_model(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw TorchScriptError(path + ": no such file (--model torchscript:PATH names a file written by torch.jit.save)");
  // bfloat16 autocast reaches a TorchScript model's operators through the dispatcher, as it
  // reaches eager ones. The JIT's own autocast rewrite of the graph is off: under LibTorch 2.11
  // it crashed (a null pointer in torch::jit::Autocast, inside its inlining) on the exported
  // real models (docs/own-models.md), and the dispatcher applies the same casts without it.
  torch::jit::setAutocastMode(false);
  torch::jit::Module module;
  try {
    module = torch::jit::load(path, torch::kCPU);
  } catch (const std::exception& e) {
    throw TorchScriptError(path + ": not a TorchScript file LibTorch " + std::string(TORCH_VERSION) +
                           " can load (write it with torch.jit.script(model).save(path), or torch.jit.trace; "
                           "docs/own-models.md says which versions load which). LibTorch said: " +
                           error_line(e));
  }
  return std::make_shared<TorchScriptModel>(std::move(module), path);
}

// ---- SHA-256 (OpenSSL's EVP interface) ------------------------------------------------------

namespace {

using DigestContext = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

DigestContext sha256_context() {
  DigestContext context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256: OpenSSL could not start a digest");
  return context;
}

void sha256_update(EVP_MD_CTX* context, const char* data, size_t size) {
  if (EVP_DigestUpdate(context, data, size) != 1) throw std::runtime_error("SHA-256: OpenSSL digest update failed");
}

std::string sha256_final_hex(EVP_MD_CTX* context) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context, digest, &length) != 1) throw std::runtime_error("SHA-256: OpenSSL digest failed");
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

}  // namespace

std::string sha256_hex(const std::string& bytes) {
  DigestContext context = sha256_context();
  sha256_update(context.get(), bytes.data(), bytes.size());
  return sha256_final_hex(context.get());
}

std::string sha256_file_hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  DigestContext context = sha256_context();
  std::vector<char> block(1 << 20);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    sha256_update(context.get(), block.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw std::runtime_error(path + ": read error");
  return sha256_final_hex(context.get());
}

// ---- probes and the registry's entry points -------------------------------------------------

std::string torchscript_sha256(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::string> cache;
  const std::string key = file_version(path);
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  std::string sha;
  try {
    sha = sha256_file_hex(path);
  } catch (const std::exception& e) {
    throw TorchScriptError(e.what());
  }
  return cache[key] = sha;
}

const TorchScriptProbe& probe_torchscript(const std::string& path, const ModelOptions& options) {
  static std::mutex mutex;
  static std::map<std::string, TorchScriptProbe> cache;
  const std::string key = file_version(path) + "|" + options.input + "|" + std::to_string(options.classes);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = cache.find(key);
    if (found != cache.end()) return found->second;
  }
  TorchScriptProbe probe = run_probe(path, options);
  std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(key, std::move(probe)).first->second;
}

ModelDescription describe_torchscript_model(const std::string& name, const ModelOptions& options) {
  const TorchScriptProbe& probe = probe_torchscript(torchscript_path(name), options);
  ModelDescription d;
  d.name = torchscript_stem(name);
  d.family = "torchscript";
  d.parameters = probe.parameters;
  std::ostringstream layers;
  layers << "TorchScript " << probe.path << " (sha256 " << probe.sha256.substr(0, 12) << "), input "
         << probe.input.text() << (probe.input.vocab > 0 ? " int64" : " float") << ", output "
         << shape_text(probe.output_shape) << " at batch " << kProbeBatch << ", " << probe.classes << " classes"
         << (probe.has_loss ? ", own loss()" : "") << (probe.buffers ? ", " + std::to_string(probe.buffers) + " buffer(s)" : "")
         << (probe.trainable_parameters != probe.parameters
                 ? ", " + std::to_string(probe.trainable_parameters) + " trainable"
                 : "");
  d.layers = layers.str();
  d.weight_bytes_fp32 = probe.parameters * 4;
  d.adam_state_bytes_fp32 = probe.trainable_parameters * 8;
  return d;
}

SyntheticBatch make_torchscript_batch(const std::string& name, const ModelOptions& options, int64_t batch,
                                      uint64_t seed, torch::Device device) {
  const TorchScriptProbe& probe = probe_torchscript(torchscript_path(name), options);
  auto generator = at::detail::createCPUGenerator(seed);
  SyntheticBatch b;
  b.inputs = synthetic_inputs(probe.input, batch, generator).to(device);
  b.labels = synthetic_labels(probe, batch, generator).to(device);
  return b;
}

}  // namespace ddpscale
