// dropout(relu(x)) as torch::relu and torch::dropout compute it, forward and backward, with
// the backward in one kernel on a CUDA tensor. The MLPs and the encoder block's feed-forward layer
// put it between their Linears.
#pragma once
#include <torch/torch.h>

namespace ddpscale {

// In training, with 0 < p < 1, on a CUDA tensor of float, double, half or bfloat16: forward is
// LibTorch's own relu and fused dropout kernels (the same random mask), and the backward is
// one kernel where autograd launches two, dropout's masked scale and then ReLU's threshold,
// with the same arithmetic, so the gradients are bit for bit LibTorch's. With p <= 0 it is
// torch::relu(x) alone; otherwise torch::dropout(torch::relu(x), p, training).
torch::Tensor relu_dropout(const torch::Tensor& x, double p, bool training);

// Whether relu_dropout(x, p, true) takes the one-kernel backward.
bool relu_dropout_is_fused(const torch::Tensor& x, double p);

}  // namespace ddpscale
