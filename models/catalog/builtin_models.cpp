#include "models/catalog/builtin_models.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace ddpscale {
namespace {

constexpr int64_t kMinFamilySize = 100'000;
constexpr int64_t kMaxFamilySize = 2'000'000'000;

int64_t or_default(int64_t value, int64_t fallback) { return value > 0 ? value : fallback; }

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

std::string join_widths(const std::vector<int64_t>& widths) {
  std::string text;
  for (int64_t w : widths) text += (text.empty() ? "" : "-") + std::to_string(w);
  return text;
}

}  // namespace

BuiltinModel resolve_builtin_model(const std::string& name, const ModelOptions& o) {
  BuiltinModel m{};
  if (name == "mlp-medium") {
    // 799 -> 256 -> 128 -> 64 -> 192: exactly the seed's 258,432 parameters.
    m.family = ModelFamily::mlp;
    m.mlp = MlpShape{{or_default(o.features, 799), 256, 128, 64, or_default(o.classes, 192)}, 0.2};
  } else if (name == "mlp-large") {
    // 4608 -> 1024 -> 1024 -> 512 -> 512 -> 256 -> 768: exactly the seed's 6,885,376.
    m.family = ModelFamily::mlp;
    m.mlp = MlpShape{{or_default(o.features, 4608), 1024, 1024, 512, 512, 256, or_default(o.classes, 768)}, 0.3};
  } else if (name == "lstm") {
    m.family = ModelFamily::lstm;
    m.recurrent = recurrent_shape("lstm", o);
  } else if (name == "gru") {
    m.family = ModelFamily::gru;
    m.recurrent = recurrent_shape("gru", o);
  } else if (name == "transformer") {
    m.family = ModelFamily::transformer;
    m.transformer = transformer_shape(o);
  } else if (starts_with(name, "mlp@")) {
    const int64_t target = family_size(name, name.substr(4));
    m.family = ModelFamily::mlp;
    m.mlp = mlp_for_size(target, or_default(o.features, 512), or_default(o.classes, 100));
    check_family_fit(name, target, mlp_parameters(m.mlp));
  } else if (starts_with(name, "transformer@")) {
    const int64_t target = family_size(name, name.substr(12));
    const TransformerShape fixed = transformer_shape(o);
    m.family = ModelFamily::transformer;
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

std::vector<std::string> builtin_model_names() { return {"mlp-medium", "mlp-large", "lstm", "gru", "transformer"}; }

ModelDescription describe_builtin_model(const std::string& name, const ModelOptions& options) {
  const BuiltinModel m = resolve_builtin_model(name, options);
  ModelDescription d;
  d.name = name;
  std::ostringstream layers;
  switch (m.family) {
    case ModelFamily::mlp:
      d.family = "mlp";
      d.parameters = mlp_parameters(m.mlp);
      layers << "Linear " << join_widths(m.mlp.widths) << ", ReLU + Dropout(" << m.mlp.dropout << ") between";
      break;
    case ModelFamily::lstm:
    case ModelFamily::gru:
      d.family = m.recurrent.cell;
      d.parameters = recurrent_parameters(m.recurrent);
      layers << (m.family == ModelFamily::lstm ? "LSTM" : "GRU") << " " << m.recurrent.layers << "x" << m.recurrent.hidden
             << " on " << m.recurrent.seq_len << "x" << m.recurrent.features << " inputs, Linear head -> "
             << m.recurrent.classes;
      break;
    case ModelFamily::transformer:
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

}  // namespace ddpscale
