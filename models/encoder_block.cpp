#include "models/encoder_block.hpp"

#include "models/relu_dropout.hpp"

#include <torch/version.h>

#include <cmath>

namespace ddpscale {

EncoderBlockImpl::EncoderBlockImpl(const EncoderBlockShape& shape) : shape_(shape) {
  TORCH_CHECK(shape.heads > 0 && shape.d_model % shape.heads == 0, "d_model ", shape.d_model,
              " does not divide into ", shape.heads, " heads");
  const int64_t d = shape.d_model;
  // Registered in LibTorch's order (self_attn, linear1, linear2, norm1, norm2) and with its
  // initialisation: Xavier-uniform input projection, zero projection biases.
  auto attention = std::make_shared<torch::nn::Module>();
  in_proj_weight_ = attention->register_parameter("in_proj_weight", torch::empty({3 * d, d}));
  in_proj_bias_ = attention->register_parameter("in_proj_bias", torch::zeros({3 * d}));
  {
    torch::NoGradGuard no_grad;
    torch::nn::init::xavier_uniform_(in_proj_weight_);
  }
  out_proj_ = attention->register_module("out_proj", torch::nn::Linear(d, d));
  torch::nn::init::zeros_(out_proj_->bias);
  register_module("self_attn", attention);
  linear1_ = register_module("linear1", torch::nn::Linear(d, shape.ff));
  linear2_ = register_module("linear2", torch::nn::Linear(shape.ff, d));
  norm1_ = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
  norm2_ = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
}

torch::Tensor EncoderBlockImpl::self_attention(const torch::Tensor& rows, int64_t batch, int64_t sequence) {
  const int64_t d = shape_.d_model, heads = shape_.heads;
  // One projection, then views only: [batch * sequence, 3d] -> 3 x [batch, heads, sequence,
  // head_dim], each with its last dimension contiguous, as the fused attention kernels need.
  const auto qkv = torch::nn::functional::linear(rows, in_proj_weight_, in_proj_bias_)
                       .view({batch, sequence, 3, heads, d / heads})
                       .permute({2, 0, 3, 1, 4})
                       .unbind(0);
  const auto context = attention(qkv[0], qkv[1], qkv[2]);  // [batch, heads, sequence, head_dim]
  return out_proj_->forward(context.transpose(1, 2).reshape({batch * sequence, d}));
}

#if TORCH_VERSION_MAJOR >= 2
// softmax(q k^T / sqrt(head_dim)) v with dropout on the weights, in one fused kernel
// forward and one backward where the GPU has one (memory-efficient attention for float32).
// The written-out form below launched 14 more kernels per block, forward and backward (the
// seed transformer's step: 589 -> 477 on an H200), and its eager step is bound by the host
// issuing them.
torch::Tensor EncoderBlockImpl::attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, is_training() ? shape_.dropout : 0.0);
}
#else
// LibTorch 1.x has no public fused attention: the same function written out.
torch::Tensor EncoderBlockImpl::attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  auto weights = torch::softmax(torch::matmul(q * scale, k.transpose(-2, -1)), -1);
  return torch::matmul(maybe_dropout(weights), v);
}
#endif

// No dropout kernel at all when dropout is off: the small models are launch-bound.
torch::Tensor EncoderBlockImpl::maybe_dropout(const torch::Tensor& x) {
  return shape_.dropout > 0 ? torch::dropout(x, shape_.dropout, is_training()) : x;
}

// Every Linear and LayerNorm works on [batch * sequence, d] rows, so each Linear is one
// addmm, its bias added inside the GEMM; on [batch, sequence, d] LibTorch 2.11 launched a
// GEMM and a separate bias add per Linear (measured on an H200).
torch::Tensor EncoderBlockImpl::forward(const torch::Tensor& x) {
  const auto rows = x.reshape({-1, shape_.d_model});
  const auto h = norm1_->forward(rows + maybe_dropout(self_attention(rows, x.size(0), x.size(1))));
  const auto mlp = linear2_->forward(relu_dropout(linear1_->forward(h), shape_.dropout, is_training()));
  return norm2_->forward(h + maybe_dropout(mlp)).view(x.sizes());
}

}  // namespace ddpscale
