#include "models/model_registry.hpp"

#include "models/encoder_block.hpp"
#include "models/model_shapes.hpp"
#include "models/relu_dropout.hpp"
#include "models/torchscript_model.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace ddpscale {
namespace {

constexpr int64_t kMinFamilySize = 100'000;
constexpr int64_t kMaxFamilySize = 2'000'000'000;

int64_t or_default(int64_t value, int64_t fallback) { return value > 0 ? value : fallback; }

// ---------------------------------------------------------------------------------------
// Modules. Parameters are registered in the order the data flows, which is the order the
// DDP engine buckets in reverse.

class MlpModel final : public Model {
 public:
  explicit MlpModel(const MlpShape& shape, bool dropout) : dropout_(dropout ? shape.dropout : 0.0) {
    for (size_t i = 0; i + 1 < shape.widths.size(); ++i)
      layers_.push_back(register_module("fc" + std::to_string(i + 1),
                                        torch::nn::Linear(shape.widths[i], shape.widths[i + 1])));
  }
  torch::Tensor forward(const torch::Tensor& inputs) override {
    torch::Tensor x = inputs;
    for (size_t i = 0; i < layers_.size(); ++i) {
      x = layers_[i]->forward(x);
      if (i + 1 == layers_.size()) break;  // the output layer has no activation
      x = relu_dropout(x, dropout_, is_training());
    }
    return x;
  }

 private:
  std::vector<torch::nn::Linear> layers_;
  double dropout_;
};

// The recurrent layers run time-major ([sequence, batch, features]), the layout cuDNN works in:
// with batch_first LibTorch transposes the output back, and the backward pass then copies the
// gradient of the whole output sequence into cuDNN's layout, one copy per step that
// time-major saves. The initial state is a zero tensor kept between steps rather than a new
// one filled each forward (one fill per step for GRU, two for LSTM). Both compute exactly
// what nn::LSTM/GRU with batch_first compute (Models.RecurrentModelsComputeWhatBatchFirstLayersCompute).
class RecurrentModel final : public Model {
 public:
  RecurrentModel(const RecurrentShape& s, bool dropout)
      : is_lstm_(s.cell == "lstm"), layers_(s.layers), hidden_(s.hidden) {
    // Dropout between stacked recurrent layers, as Keras' recurrent_dropout stand-in.
    const double p = dropout ? 0.2 : 0.0;
    if (is_lstm_)
      lstm_ = register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(s.features, s.hidden)
                                                          .num_layers(s.layers).batch_first(false).dropout(p)));
    else
      gru_ = register_module("gru", torch::nn::GRU(torch::nn::GRUOptions(s.features, s.hidden)
                                                       .num_layers(s.layers).batch_first(false).dropout(p)));
    head_ = register_module("head", torch::nn::Linear(s.hidden, s.classes));
  }
  // inputs [batch, sequence, features], as every model takes its batch.
  torch::Tensor forward(const torch::Tensor& inputs) override {
    const torch::Tensor time_major = inputs.transpose(0, 1);
    const torch::Tensor& zeros = zero_state(inputs);
    const torch::Tensor sequence = is_lstm_ ? std::get<0>(lstm_->forward(time_major, std::make_tuple(zeros, zeros)))
                                            : std::get<0>(gru_->forward(time_major, zeros));
    return head_->forward(sequence.select(0, sequence.size(0) - 1));  // last time step
  }
  // Stored time-major, so the transpose in forward is already cuDNN's contiguous input. From
  // a [batch, ...] contiguous batch, LibTorch's cuDNN path made that copy three times a step,
  // forward and backward (measured on an H100).
  torch::Tensor in_reading_layout(const torch::Tensor& inputs) const override {
    return inputs.transpose(0, 1).contiguous().transpose(0, 1);
  }

 private:
  // [layers, batch, hidden] zeros in the inputs' dtype and device, made again only when one of
  // these changes. Never written: the layers only read their initial state.
  const torch::Tensor& zero_state(const torch::Tensor& inputs) {
    const std::vector<int64_t> shape{layers_, inputs.size(0), hidden_};
    if (!zeros_.defined() || zeros_.sizes() != shape || zeros_.dtype() != inputs.dtype() ||
        zeros_.device() != inputs.device())
      zeros_ = torch::zeros(shape, inputs.options());
    return zeros_;
  }

  bool is_lstm_;
  int64_t layers_, hidden_;
  torch::nn::LSTM lstm_{nullptr};
  torch::nn::GRU gru_{nullptr};
  torch::nn::Linear head_{nullptr};
  torch::Tensor zeros_;
};

class TransformerModel final : public Model {
 public:
  TransformerModel(const TransformerShape& s, bool dropout) {
    tokens_ = register_module("tokens", torch::nn::Embedding(s.vocab, s.d_model));
    positions_ = register_module("positions", torch::nn::Embedding(s.seq_len, s.d_model));
    for (int64_t i = 0; i < s.layers; ++i)
      blocks_.push_back(register_module(
          "block" + std::to_string(i), EncoderBlock(EncoderBlockShape{s.d_model, s.heads, s.ff, dropout ? s.dropout : 0.0})));
    head_ = register_module("head", torch::nn::Linear(s.d_model, s.classes));
  }
  torch::Tensor forward(const torch::Tensor& inputs) override {
    const auto positions = torch::arange(inputs.size(1), inputs.options().dtype(torch::kLong));
    torch::Tensor x = tokens_->forward(inputs) + positions_->forward(positions);  // [batch, sequence, d]
    for (auto& block : blocks_) x = block->forward(x);
    return head_->forward(x.mean(1));
  }

 private:
  torch::nn::Embedding tokens_{nullptr}, positions_{nullptr};
  std::vector<EncoderBlock> blocks_;
  torch::nn::Linear head_{nullptr};
};

// ---------------------------------------------------------------------------------------
// The registry: every name resolves to one shape.

enum class Family { mlp, lstm, gru, transformer };

struct ResolvedModel {
  Family family;
  MlpShape mlp;
  RecurrentShape recurrent;
  TransformerShape transformer;
};

std::string valid_names_text() {
  std::string text;
  for (const auto& n : builtin_model_names()) text += (text.empty() ? "" : ", ") + n;
  return text + ", a size family mlp@<size> / transformer@<size> (e.g. mlp@10M, transformer@100M; 100K to 2B), or "
                "torchscript:PATH (your own model)";
}

// Levenshtein distance: how many one-letter edits turn `a` into `b`.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// A name with a path or a TorchScript file's ending is the user's own model without its
// "torchscript:" prefix, not a misspelt built-in one.
bool looks_like_model_file(const std::string& name) {
  for (const char* ending : {".pt", ".pth", ".ts", ".jit", ".zip"})
    if (name.size() > std::strlen(ending) && name.compare(name.size() - std::strlen(ending), std::string::npos, ending) == 0)
      return true;
  return name.find('/') != std::string::npos || std::filesystem::is_regular_file(name);
}

std::string unknown_model_message(const std::string& name) {
  if (looks_like_model_file(name))
    return "unknown model '" + name + "': your own model is named torchscript:PATH, e.g. --model torchscript:" + name +
           " (with --input-shape or --input; docs/own-models.md)";
  std::string closest;
  size_t closest_distance = std::max<size_t>(2, name.size() / 4) + 1;  // a typo, not another word
  for (const std::string& known : builtin_model_names()) {
    const size_t distance = edit_distance(name, known);
    if (distance < closest_distance) closest = known, closest_distance = distance;
  }
  return "unknown model '" + name + "'" + (closest.empty() ? "" : " (did you mean " + closest + "?)") + "; choose " +
         valid_names_text();
}

int64_t family_size(const std::string& name, const std::string& size_text) {
  int64_t size = 0;
  try {
    size = parse_parameter_count(size_text);
  } catch (const std::invalid_argument& e) {
    throw UnknownModelError("model '" + name + "': " + e.what());
  }
  if (size < kMinFamilySize || size > kMaxFamilySize)
    throw UnknownModelError("model '" + name + "' asks for " + std::to_string(size) +
                            " parameters; size families go from 100K to 2B");
  return size;
}

// The fixed parts (inputs, classes, vocabulary) can outgrow a small target; a family
// member that misses its size by more than 2% would silently study the wrong model.
void check_family_fit(const std::string& name, int64_t target, int64_t parameters) {
  const double ratio = static_cast<double>(parameters) / static_cast<double>(target);
  if (ratio < 0.98 || ratio > 1.02)
    throw UnknownModelError("model '" + name + "': with these inputs, classes and vocabulary the nearest shape has " +
                            std::to_string(parameters) + " parameters, not within 2% of " + std::to_string(target));
}

RecurrentShape recurrent_shape(const std::string& cell, const ModelOptions& o) {
  RecurrentShape s;
  s.cell = cell;
  s.features = or_default(o.features, s.features);
  s.classes = or_default(o.classes, s.classes);
  s.seq_len = or_default(o.seq_len, s.seq_len);
  return s;
}

TransformerShape transformer_shape(const ModelOptions& o) {
  TransformerShape s;
  s.vocab = or_default(o.vocab, s.vocab);
  s.seq_len = or_default(o.seq_len, s.seq_len);
  s.classes = or_default(o.classes, s.classes);
  return s;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

ResolvedModel resolve(const std::string& name, const ModelOptions& o) {
  ResolvedModel m{};
  if (name == "mlp-medium") {
    // 799 -> 256 -> 128 -> 64 -> 192: exactly the seed's 258,432 parameters.
    m.family = Family::mlp;
    m.mlp = MlpShape{{or_default(o.features, 799), 256, 128, 64, or_default(o.classes, 192)}, 0.2};
  } else if (name == "mlp-large") {
    // 4608 -> 1024 -> 1024 -> 512 -> 512 -> 256 -> 768: exactly the seed's 6,885,376.
    m.family = Family::mlp;
    m.mlp = MlpShape{{or_default(o.features, 4608), 1024, 1024, 512, 512, 256, or_default(o.classes, 768)}, 0.3};
  } else if (name == "lstm") {
    m.family = Family::lstm;
    m.recurrent = recurrent_shape("lstm", o);
  } else if (name == "gru") {
    m.family = Family::gru;
    m.recurrent = recurrent_shape("gru", o);
  } else if (name == "transformer") {
    m.family = Family::transformer;
    m.transformer = transformer_shape(o);
  } else if (starts_with(name, "mlp@")) {
    const int64_t target = family_size(name, name.substr(4));
    m.family = Family::mlp;
    m.mlp = mlp_for_size(target, or_default(o.features, 512), or_default(o.classes, 100));
    check_family_fit(name, target, mlp_parameters(m.mlp));
  } else if (starts_with(name, "transformer@")) {
    const int64_t target = family_size(name, name.substr(12));
    const TransformerShape fixed = transformer_shape(o);
    m.family = Family::transformer;
    try {
      m.transformer = transformer_for_size(target, fixed.vocab, fixed.seq_len, fixed.classes);
    } catch (const std::invalid_argument& e) {
      throw UnknownModelError("model '" + name + "': " + e.what());
    }
    check_family_fit(name, target, transformer_parameters(m.transformer));
  } else {
    throw UnknownModelError(unknown_model_message(name));
  }
  return m;
}

std::string join_widths(const std::vector<int64_t>& widths) {
  std::string text;
  for (int64_t w : widths) text += (text.empty() ? "" : "-") + std::to_string(w);
  return text;
}

}  // namespace

std::vector<std::string> builtin_model_names() { return {"mlp-medium", "mlp-large", "lstm", "gru", "transformer"}; }

ModelDescription describe_model(const std::string& name, const ModelOptions& options) {
  if (is_torchscript_model(name)) return describe_torchscript_model(name, options);
  const ResolvedModel m = resolve(name, options);
  ModelDescription d;
  d.name = name;
  std::ostringstream layers;
  switch (m.family) {
    case Family::mlp:
      d.family = "mlp";
      d.parameters = mlp_parameters(m.mlp);
      layers << "Linear " << join_widths(m.mlp.widths) << ", ReLU + Dropout(" << m.mlp.dropout << ") between";
      break;
    case Family::lstm:
    case Family::gru:
      d.family = m.recurrent.cell;
      d.parameters = recurrent_parameters(m.recurrent);
      layers << (m.family == Family::lstm ? "LSTM" : "GRU") << " " << m.recurrent.layers << "x" << m.recurrent.hidden
             << " on " << m.recurrent.seq_len << "x" << m.recurrent.features << " inputs, Linear head -> "
             << m.recurrent.classes;
      break;
    case Family::transformer:
      d.family = "transformer";
      d.parameters = transformer_parameters(m.transformer);
      layers << "Embedding " << m.transformer.vocab << "x" << m.transformer.d_model << " + positions "
             << m.transformer.seq_len << ", " << m.transformer.layers << " encoder blocks (d " << m.transformer.d_model
             << ", " << m.transformer.heads << " heads, ff " << m.transformer.ff << "), mean-pool, Linear -> "
             << m.transformer.classes;
      break;
  }
  d.layers = layers.str();
  d.weight_bytes_fp32 = d.parameters * 4;
  d.adam_state_bytes_fp32 = d.parameters * 8;
  return d;
}

std::shared_ptr<Model> build_model(const std::string& name, const ModelOptions& options) {
  if (is_torchscript_model(name)) {
    probe_torchscript(torchscript_path(name), options);  // the model is known to train before any run
    return load_torchscript_model(torchscript_path(name));
  }
  const ResolvedModel m = resolve(name, options);
  switch (m.family) {
    case Family::mlp: return std::make_shared<MlpModel>(m.mlp, options.dropout);
    case Family::lstm:
    case Family::gru: return std::make_shared<RecurrentModel>(m.recurrent, options.dropout);
    case Family::transformer: return std::make_shared<TransformerModel>(m.transformer, options.dropout);
  }
  return nullptr;
}

SyntheticBatch make_synthetic_batch(const std::string& name, const ModelOptions& options, int64_t batch,
                                    uint64_t seed, torch::Device device) {
  if (is_torchscript_model(name)) return make_torchscript_batch(name, options, batch, seed, device);
  const ResolvedModel m = resolve(name, options);
  auto generator = at::detail::createCPUGenerator(seed);
  SyntheticBatch b;
  int64_t classes = 0;
  switch (m.family) {
    case Family::mlp:
      b.inputs = torch::randn({batch, m.mlp.widths.front()}, generator, torch::kFloat);
      classes = m.mlp.widths.back();
      break;
    case Family::lstm:
    case Family::gru:
      b.inputs = torch::randn({batch, m.recurrent.seq_len, m.recurrent.features}, generator, torch::kFloat);
      classes = m.recurrent.classes;
      break;
    case Family::transformer:
      b.inputs = torch::randint(0, m.transformer.vocab, {batch, m.transformer.seq_len}, generator, torch::kLong);
      classes = m.transformer.classes;
      break;
  }
  b.labels = torch::randint(0, classes, {batch}, generator, torch::kLong);
  b.inputs = b.inputs.to(device);
  b.labels = b.labels.to(device);
  return b;
}

torch::Tensor model_loss(const torch::Tensor& logits, const torch::Tensor& labels) {
  if (logits.dim() > 2)  // a sequence (or spatial) axis: one label per position
    return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), labels.reshape({-1}));
  return torch::nn::functional::cross_entropy(logits, labels);
}

torch::Tensor Model::training_loss(const torch::Tensor& inputs, const torch::Tensor& labels) {
  return model_loss(forward(inputs), labels);
}

}  // namespace ddpscale
