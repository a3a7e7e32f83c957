// busbw definitions from nccl-tests' doc/PERFORMANCE.md: for allreduce,
// busbw = algbw * 2(n-1)/n, algbw = S / t.
#include "comm/commbench.hpp"

#include <gtest/gtest.h>

namespace ddpscale {
namespace {

TEST(CommbenchFormula, AlgbwIsBytesOverTime) {
  // 1 GB in 1 s is 1 GB/s (nccl-tests uses 1e9, not 2^30).
  EXPECT_DOUBLE_EQ(algbw_gbs(1000000000, 1e6), 1.0);
  EXPECT_DOUBLE_EQ(algbw_gbs(134217728, 469.0), 134217728.0 / 469e3);
}

TEST(CommbenchFormula, BusbwFactorForAllreduce) {
  EXPECT_DOUBLE_EQ(busbw_gbs(100.0, 2), 100.0);  // 2*1/2
  EXPECT_DOUBLE_EQ(busbw_gbs(100.0, 4), 150.0);  // 2*3/4
  EXPECT_DOUBLE_EQ(busbw_gbs(100.0, 8), 175.0);  // 2*7/8
  EXPECT_DOUBLE_EQ(busbw_gbs(100.0, 1), 0.0);
}

TEST(CommbenchFormula, ReferenceRowFromDeviceReadme) {
  // nccl-tests on the H200 pair: 128 MiB in 469 us -> 286 GB/s busbw with 2 ranks.
  EXPECT_NEAR(busbw_gbs(algbw_gbs(size_t(128) << 20, 469.0), 2), 286.2, 0.1);
}

TEST(CommbenchFormula, SizesGrowByFactorUpToMax) {
  CommBenchOptions options;
  options.min_bytes = 8;
  options.max_bytes = 2048;
  options.factor = 4;
  EXPECT_EQ(commbench_sizes(options), (std::vector<size_t>{8, 32, 128, 512, 2048}));
  options.min_bytes = 3;  // rounded up to one float32 element
  options.max_bytes = 3;
  EXPECT_EQ(commbench_sizes(options), (std::vector<size_t>{4}));
  options.factor = 1;
  EXPECT_THROW(commbench_sizes(options), std::invalid_argument);
}

}  // namespace
}  // namespace ddpscale
