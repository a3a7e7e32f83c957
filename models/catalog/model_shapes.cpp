#include "models/catalog/model_shapes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ddpscale {

int64_t mlp_parameters(const MlpShape& shape) {
  int64_t total = 0;
  for (size_t i = 0; i + 1 < shape.widths.size(); ++i)
    total += shape.widths[i] * shape.widths[i + 1] + shape.widths[i + 1];  // weights + bias
  return total;
}

int64_t recurrent_parameters(const RecurrentShape& s) {
  // Per layer and gate: input weights, hidden weights and LibTorch's two bias vectors.
  const int64_t gates = s.cell == "lstm" ? 4 : 3;
  int64_t total = 0;
  for (int64_t layer = 0; layer < s.layers; ++layer) {
    const int64_t in = layer == 0 ? s.features : s.hidden;
    total += gates * (s.hidden * in + s.hidden * s.hidden + 2 * s.hidden);
  }
  return total + s.hidden * s.classes + s.classes;
}

int64_t transformer_parameters(const TransformerShape& s) {
  const int64_t d = s.d_model;
  // Self-attention (in_proj 3d x d + 3d, out_proj d x d + d), MLP (d x ff + ff, ff x d + d),
  // two layer norms (2d each).
  const int64_t per_layer = (3 * d * d + 3 * d) + (d * d + d) + (d * s.ff + s.ff) + (s.ff * d + d) + 4 * d;
  const int64_t embeddings = s.vocab * d + s.seq_len * d;
  return embeddings + s.layers * per_layer + d * s.classes + s.classes;
}

int64_t parse_parameter_count(const std::string& text) {
  size_t used = 0;
  double number = 0;
  try {
    number = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("'" + text + "' is not a size (e.g. 250K, 10M, 1.5B)");
  }
  double multiplier = 1;
  const std::string suffix = text.substr(used);
  if (suffix == "K" || suffix == "k") multiplier = 1e3;
  else if (suffix == "M" || suffix == "m") multiplier = 1e6;
  else if (suffix == "B" || suffix == "b" || suffix == "G") multiplier = 1e9;
  else if (!suffix.empty()) throw std::invalid_argument("'" + text + "': unknown size suffix (use K, M or B)");
  if (!(number > 0) || !std::isfinite(number)) throw std::invalid_argument("'" + text + "' is not a positive size");
  // llround is undefined past int64; no model is anywhere near this anyway.
  if (number * multiplier > 1e15) throw std::invalid_argument("'" + text + "' is far too large a size");
  return static_cast<int64_t>(std::llround(number * multiplier));
}

// Family MLP: the inputs, three hidden layers of width w, a fourth of width w_last, the
// classes. w sets the size coarsely; w_last moves it in steps of (w + classes + 1)
// parameters, fine enough for 2% from 100K up.
MlpShape mlp_for_size(int64_t target, int64_t in, int64_t out) {
  auto shape_with = [&](int64_t w, int64_t w_last) { return MlpShape{{in, w, w, w, w_last, out}, 0.2}; };
  int64_t w = 1;
  while (mlp_parameters(shape_with(w + 1, w + 1)) <= target) ++w;
  const int64_t residual = target - mlp_parameters(shape_with(w, w));
  const double step = static_cast<double>(w + 1 + out);  // one more unit in the last hidden layer
  const int64_t w_last = w + static_cast<int64_t>(std::llround(static_cast<double>(residual) / step));
  return shape_with(w, std::max<int64_t>(1, w_last));
}

// Family transformer (defaults: vocabulary 1000, 64 tokens, 10 classes). Candidates: depths
// 1..64, widths d in multiples of 16 below 256 (4 heads) and of 64 from 256 (d/64 heads, so
// heads always divide d), d/L between 8 and 256. For each, the feed-forward width ff is
// solved for exactly, so every candidate lands within a fraction of a percent; among them
// take the most conventional shape: ff near 4d first, then d/L near 64 (GPT-2 small is
// 768/12). Without the second term the near-ties fall anywhere along the ff = 4d curve
// (22 layers of width 192 at 10M). ~3,000 candidates: cheap and plainly deterministic.
constexpr double kUsualAspect = 64;     // d_model / layers
constexpr double kAspectWeight = 0.25;  // relative to the log-distance of ff from 4d

TransformerShape transformer_for_size(int64_t target, int64_t vocab, int64_t seq_len, int64_t classes) {
  TransformerShape fixed;
  fixed.vocab = vocab;
  fixed.seq_len = seq_len;
  fixed.classes = classes;
  TransformerShape best = fixed;
  double best_score = std::numeric_limits<double>::max();
  for (int64_t layers = 1; layers <= 64; ++layers) {
    for (int64_t d = 16; d <= 8192; d += d < 256 ? 16 : 64) {
      const double ratio = static_cast<double>(d) / static_cast<double>(layers);
      if (ratio < 8 || ratio > 256) continue;
      TransformerShape s = fixed;
      s.d_model = d;
      s.heads = d < 256 ? 4 : d / 64;
      s.layers = layers;
      s.ff = 0;  // counts everything but the feed-forward's ff * (2d + 1) per layer
      const int64_t without_ff = transformer_parameters(s);
      const double per_ff = static_cast<double>(layers) * static_cast<double>(2 * d + 1);
      const double ff = static_cast<double>(target - without_ff) / per_ff;
      if (ff < static_cast<double>(d)) continue;
      s.ff = static_cast<int64_t>(std::llround(ff));
      const double score = std::fabs(std::log(ff / (4.0 * static_cast<double>(d)))) +
                           kAspectWeight * std::fabs(std::log(ratio / kUsualAspect));
      if (score < best_score) {
        best_score = score;
        best = s;
      }
    }
  }
  if (best_score == std::numeric_limits<double>::max())
    throw std::invalid_argument("no transformer shape fits " + std::to_string(target) + " parameters with vocabulary " +
                                std::to_string(vocab) + " and " + std::to_string(seq_len) + " positions");
  return best;
}

}  // namespace ddpscale
