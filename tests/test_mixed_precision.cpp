// --dtype bfloat16 is autocast: inside the scope LibTorch's autocast lists decide, and a
// matrix product of fp32 tensors comes out bf16; outside, and with the scope disabled,
// nothing changes. The reference is LibTorch's own autocast (at::autocast), the same
// mechanism torch.autocast uses in Python.
#include "trainer/engine/mixed_precision.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace ddpscale {
namespace {

TEST(MixedPrecision, MatrixProductsRunInBf16InsideTheScopeOnly) {
  const auto a = torch::randn({4, 8}), b = torch::randn({8, 3});
  {
    const AutocastScope scope(true, torch::kCPU);
    const auto product = torch::matmul(a, b);
    EXPECT_EQ(product.scalar_type(), torch::kBFloat16);
    // bf16 keeps 8 significant bits (unit roundoff u = 2^-9). a and b are rounded on the way
    // in (u each); LibTorch's CPU kernel may then accumulate the K = 8 products in bf16 too, so
    // the worst case is a dot product of K terms computed in precision u: each element is
    // within gamma_(K+2) ~ (K + 2) u of the exact product, relative to |a| |b| (the sum of the
    // magnitudes of its terms, which cancellation cannot shrink; Higham, Accuracy and Stability
    // of Numerical Algorithms, 2nd ed., eq. 3.5). Any element off by more is not bf16 rounding.
    const int64_t K = a.size(1);
    const auto a64 = a.to(torch::kDouble), b64 = b.to(torch::kDouble);
    const auto error = (product.to(torch::kDouble) - torch::matmul(a64, b64)).abs();
    const auto magnitude = torch::matmul(a64.abs(), b64.abs());
    EXPECT_GT(error.max().item<double>(), 0.0);  // close to float32's product, not equal
    EXPECT_TRUE((error <= static_cast<double>(K + 2) * std::ldexp(1.0, -9) * magnitude).all().item<bool>())
        << "largest error relative to |a||b|: " << (error / magnitude).max().item<double>();
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
