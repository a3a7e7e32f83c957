// dropout(relu(x)) as torch::relu and torch::dropout compute it, forward and backward, in one
// kernel each way on a CUDA tensor. The MLPs and the encoder block's feed-forward layer put it
// between their Linears.
#pragma once
#include <torch/torch.h>

namespace ddpscale {

// In training, with 0 < p < 1, on a contiguous CUDA tensor of float, double, half or bfloat16:
// - forward, one kernel where LibTorch launches two (ReLU, then its fused dropout), drawing
//   the mask as that dropout kernel draws it from the same generator state, so output and mask
//   are bit for bit LibTorch's; for double, a size LibTorch would not vectorize (float: not a
//   multiple of 4; half, bfloat16: of 8) or an input not 16-byte aligned, LibTorch's own two
//   kernels;
// - backward, one kernel where autograd launches two, dropout's masked scale and then ReLU's
//   threshold, with the same arithmetic, so the gradients are bit for bit LibTorch's.
// With p <= 0 it is torch::relu(x) alone; otherwise torch::dropout(torch::relu(x), p, training).
torch::Tensor relu_dropout(const torch::Tensor& x, double p, bool training);

// Whether relu_dropout(x, p, true) takes the one-kernel backward.
bool relu_dropout_is_fused(const torch::Tensor& x, double p);

}  // namespace ddpscale
