// Model shapes as plain numbers: what every model is made of, its parameter count in
// closed form, and how size families pick their widths. No LibTorch here, so counting
// a 500M-parameter model costs nothing.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ddpscale {

struct MlpShape {
  std::vector<int64_t> widths;  // input, hidden..., output
  double dropout = 0.2;
};

struct RecurrentShape {
  std::string cell;  // lstm | gru
  int64_t features = 32, hidden = 160, layers = 2, classes = 10, seq_len = 64;
};

struct TransformerShape {
  int64_t vocab = 1000, seq_len = 64, d_model = 128, heads = 4, ff = 512, layers = 8, classes = 10;
  double dropout = 0.1;
};

int64_t mlp_parameters(const MlpShape& shape);
int64_t recurrent_parameters(const RecurrentShape& shape);
int64_t transformer_parameters(const TransformerShape& shape);

// Size families: widths and depths chosen deterministically to land within 2% of the
// target around the fixed parts (inputs, classes, vocabulary, sequence length), so
// mlp@10M stays 10M whatever the data looks like. The caller checks the 2%: a fixed part
// larger than the target (a 50K-token vocabulary in transformer@100K) cannot fit.
MlpShape mlp_for_size(int64_t target, int64_t inputs = 512, int64_t classes = 100);
TransformerShape transformer_for_size(int64_t target, int64_t vocab = 1000, int64_t seq_len = 64,
                                      int64_t classes = 10);

// "10M" -> 10000000; also "250K", "1.5B", "2e6", plain digits; K/M/B in either case.
// Throws std::invalid_argument for anything else, and for sizes beyond 1e15.
int64_t parse_parameter_count(const std::string& text);

}  // namespace ddpscale
