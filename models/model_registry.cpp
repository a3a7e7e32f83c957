#include "models/model_registry.hpp"

#include "models/catalog/builtin_models.hpp"
#include "models/encoder_block.hpp"
#include "models/relu_dropout.hpp"
#include "models/torchscript_model.hpp"

namespace ddpscale {
namespace {

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

}  // namespace

ModelDescription describe_model(const std::string& name, const ModelOptions& options) {
  return is_torchscript_model(name) ? describe_torchscript_model(name, options) : describe_builtin_model(name, options);
}

std::shared_ptr<Model> build_model(const std::string& name, const ModelOptions& options) {
  if (is_torchscript_model(name)) {
    probe_torchscript(torchscript_path(name), options);  // the model is known to train before any run
    return load_torchscript_model(torchscript_path(name));
  }
  const BuiltinModel m = resolve_builtin_model(name, options);
  switch (m.family) {
    case ModelFamily::mlp: return std::make_shared<MlpModel>(m.mlp, options.dropout);
    case ModelFamily::lstm:
    case ModelFamily::gru: return std::make_shared<RecurrentModel>(m.recurrent, options.dropout);
    case ModelFamily::transformer: return std::make_shared<TransformerModel>(m.transformer, options.dropout);
  }
  return nullptr;
}

SyntheticBatch make_synthetic_batch(const std::string& name, const ModelOptions& options, int64_t batch,
                                    uint64_t seed, torch::Device device) {
  if (is_torchscript_model(name)) return make_torchscript_batch(name, options, batch, seed, device);
  const BuiltinModel m = resolve_builtin_model(name, options);
  auto generator = at::detail::createCPUGenerator(seed);
  SyntheticBatch b;
  int64_t classes = 0;
  switch (m.family) {
    case ModelFamily::mlp:
      b.inputs = torch::randn({batch, m.mlp.widths.front()}, generator, torch::kFloat);
      classes = m.mlp.widths.back();
      break;
    case ModelFamily::lstm:
    case ModelFamily::gru:
      b.inputs = torch::randn({batch, m.recurrent.seq_len, m.recurrent.features}, generator, torch::kFloat);
      classes = m.recurrent.classes;
      break;
    case ModelFamily::transformer:
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
