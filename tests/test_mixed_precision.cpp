// --dtype bfloat16 is autocast: inside the scope LibTorch's autocast lists decide, and a
// matrix product of fp32 tensors comes out bf16; outside, and with the scope disabled,
// nothing changes. The reference is LibTorch's own autocast (at::autocast), the same
// mechanism torch.autocast uses in Python.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "mixed_precision.hpp"

namespace ddpscale {
namespace {

TEST(MixedPrecision, MatrixProductsRunInBf16InsideTheScopeOnly) {
  const auto a = torch::randn({4, 8}), b = torch::randn({8, 3});
  {
    const AutocastScope scope(true, torch::kCPU);
    const auto product = torch::matmul(a, b);
    EXPECT_EQ(product.scalar_type(), torch::kBFloat16);
    // bf16 keeps 8 bits of mantissa: the product is close to fp32's, not equal.
    const auto exact = torch::matmul(a.to(torch::kDouble), b.to(torch::kDouble));
    const double error = (product.to(torch::kDouble) - exact).abs().max().item<double>();
    EXPECT_GT(error, 0.0);
    EXPECT_LT(error, 0.05 * exact.abs().max().item<double>());
    // Element-wise operations on fp32 tensors are left alone.
    EXPECT_EQ((a + a).scalar_type(), torch::kFloat);
  }
  EXPECT_EQ(torch::matmul(a, b).scalar_type(), torch::kFloat);
}

TEST(MixedPrecision, DisabledScopeChangesNothing) {
  const AutocastScope scope(false, torch::kCPU);
  EXPECT_EQ(torch::matmul(torch::randn({2, 2}), torch::randn({2, 2})).scalar_type(), torch::kFloat);
}

TEST(MixedPrecision, GradientsOfFp32WeightsStayFp32) {
  auto weight = torch::randn({3, 5}, torch::requires_grad());
  const auto input = torch::randn({4, 5});
  torch::Tensor loss;
  {
    const AutocastScope scope(true, torch::kCPU);
    loss = torch::nn::functional::linear(input, weight).to(torch::kFloat).pow(2).sum();
  }
  loss.backward();
  EXPECT_EQ(weight.scalar_type(), torch::kFloat);
  EXPECT_EQ(weight.grad().scalar_type(), torch::kFloat);
  EXPECT_GT(weight.grad().abs().sum().item<double>(), 0.0);
}

}  // namespace
}  // namespace ddpscale
