// One post-norm transformer encoder block (self-attention + ReLU MLP, dropout, two layer
// norms), with the parameters and arithmetic of LibTorch's nn::TransformerEncoderLayer.
//
// Why not use that layer: LibTorch's C++ multi-head attention decides whether it is
// self-attention with torch::equal(query, key) and torch::equal(key, value) on every call,
// and torch::equal returns a bool to the host, so each block forward synchronises with the
// GPU twice; a timing tool should not carry hidden synchronisations. (On 2x H200 they did
// not change the step time: see models/README.md.) This block is always self-attention.
#pragma once
#include <torch/torch.h>

namespace ddpscale {

struct EncoderBlockShape {
  int64_t d_model = 0;
  int64_t heads = 0;
  int64_t ff = 0;
  double dropout = 0.0;
};

class EncoderBlockImpl : public torch::nn::Module {
 public:
  explicit EncoderBlockImpl(const EncoderBlockShape& shape);
  // x: [batch, sequence, d_model] (batch first, unlike LibTorch's layer).
  torch::Tensor forward(const torch::Tensor& x);

 private:
  // rows: the block's input as [batch * sequence, d_model]; returns the same layout.
  torch::Tensor self_attention(const torch::Tensor& rows, int64_t batch, int64_t sequence);
  // Scaled dot-product attention over [batch, heads, sequence, head_dim], with dropout on
  // the attention weights while training.
  torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);
  torch::Tensor maybe_dropout(const torch::Tensor& x);

  EncoderBlockShape shape_;
  // Names as in nn::TransformerEncoderLayer, so the two are interchangeable by name.
  torch::Tensor in_proj_weight_, in_proj_bias_;
  torch::nn::Linear out_proj_{nullptr}, linear1_{nullptr}, linear2_{nullptr};
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
};
TORCH_MODULE(EncoderBlock);

}  // namespace ddpscale
