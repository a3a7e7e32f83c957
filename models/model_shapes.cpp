#include "model_shapes.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace ddpscale {

int64_t mlp_parameters(const MlpShape& shape) {
  int64_t total = 0;
  for (size_t i = 0; i + 1 < shape.widths.size(); ++i) total += shape.widths[i] * shape.widths[i + 1] + shape.widths[i + 1];
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
  return static_cast<int64_t>(std::llround(number * multiplier));
}

// Family MLP: 512 inputs, three hidden layers of width w, a fourth of width w_last, 100
// classes. w sets the size coarsely; w_last moves it in steps of ~(w + 101) parameters,
// fine enough for 2% from 100K up.
MlpShape mlp_for_size(int64_t target) {
  const int64_t in = 512, out = 100;
  auto shape_with = [&](int64_t w, int64_t w_last) { return MlpShape{{in, w, w, w, w_last, out}, 0.2}; };
  int64_t w = 1;
  while (mlp_parameters(shape_with(w + 1, w + 1)) <= target) ++w;
  const int64_t residual = target - mlp_parameters(shape_with(w, w));
  const int64_t w_last = w + static_cast<int64_t>(std::llround(static_cast<double>(residual) / static_cast<double>(w + 1 + out)));
  return shape_with(w, std::max<int64_t>(1, w_last));
}

// Family transformer: vocabulary 1000, 64 tokens, 10 classes. Among depths 1..64 and widths
// d (multiples of 16 below 256 with 4 heads, of 64 from 256 with d/64 heads), take the
// shape whose exactly-fitted feed-forward width is closest to the usual 4d, with d/L
// between 8 and 256 so models are neither needles nor pancakes. ff is solved for, so the
// count lands within a fraction of a percent.
TransformerShape transformer_for_size(int64_t target) {
  TransformerShape best;
  double best_score = std::numeric_limits<double>::max();
  for (int64_t layers = 1; layers <= 64; ++layers) {
    for (int64_t d = 16; d <= 8192; d += d < 256 ? 16 : 64) {
      const double ratio = static_cast<double>(d) / static_cast<double>(layers);
      if (ratio < 8 || ratio > 256) continue;
      TransformerShape s;
      s.d_model = d;
      s.heads = d < 256 ? 4 : d / 64;
      s.layers = layers;
      s.ff = 0;
      const int64_t without_ff = transformer_parameters(s);  // ff = 0 still counts the ff x d bias-free parts as 0
      const double per_ff = static_cast<double>(layers) * static_cast<double>(2 * d + 1);
      const double ff = static_cast<double>(target - without_ff) / per_ff;
      if (ff < static_cast<double>(d)) continue;
      s.ff = static_cast<int64_t>(std::llround(ff));
      const double score = std::fabs(std::log(ff / (4.0 * static_cast<double>(d))));
      if (score < best_score) {
        best_score = score;
        best = s;
      }
    }
  }
  if (best_score == std::numeric_limits<double>::max())
    throw std::invalid_argument("no transformer shape fits " + std::to_string(target) + " parameters");
  return best;
}

}  // namespace ddpscale
