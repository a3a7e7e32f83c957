// Bit patterns from IEEE 754-2008 binary16 and Google's bfloat16 definition (the
// examples in Wikipedia's "Half-precision floating-point format" and "bfloat16" pages).
#include "comm/half_precision.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ddpscale {
namespace {

TEST(HalfPrecision, Float16KnownEncodings) {
  EXPECT_EQ(float_to_f16(1.0f), 0x3C00);
  EXPECT_EQ(float_to_f16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_f16(65504.0f), 0x7BFF);             // largest normal
  EXPECT_EQ(float_to_f16(6.103515625e-05f), 0x0400);     // smallest normal, 2^-14
  EXPECT_EQ(float_to_f16(5.9604644775390625e-08f), 0x0001);  // smallest subnormal, 2^-24
  EXPECT_EQ(float_to_f16(0.333251953125f), 0x3555);      // nearest to 1/3
  EXPECT_EQ(float_to_f16(1e6f), 0x7C00);                 // overflow to +inf
  EXPECT_EQ(float_to_f16(1.0f + 1.0f / 2048), 0x3C00);   // halfway: ties to even (down)
  EXPECT_EQ(float_to_f16(1.0f + 3.0f / 2048), 0x3C02);   // halfway: ties to even (up)
}

TEST(HalfPrecision, Float16DecodesBack) {
  EXPECT_EQ(f16_to_float(0x3C00), 1.0f);
  EXPECT_EQ(f16_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(f16_to_float(0x0001), 5.9604644775390625e-08f);
  EXPECT_EQ(f16_to_float(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::isinf(f16_to_float(0x7C00)));
  EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(HalfPrecision, Bfloat16KnownEncodings) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(3.14159265f), 0x4049);  // pi rounds to 3.140625
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

}  // namespace
}  // namespace ddpscale
