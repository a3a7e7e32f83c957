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

TEST(CommbenchFormula, FixedCountsWithoutABudget) {
  CommBenchOptions options;  // nccl-tests' 5 warm-up + 20 timed, however slow an op is
  const CommBenchCounts counts = commbench_counts(options, 2e6);
  EXPECT_EQ(counts.warmup, 5);
  EXPECT_EQ(counts.timed, 20);
}

TEST(CommbenchFormula, BudgetCutsOnlySlowSizes) {
  CommBenchOptions options;
  options.seconds_per_size = 0.25;
  // A fast op (10 us): 25,000 fit in the budget, so the full 5 + 20.
  CommBenchCounts counts = commbench_counts(options, 10.0);
  EXPECT_EQ(counts.warmup, 5);
  EXPECT_EQ(counts.timed, 20);
  // 25 ms an op: 10 fit; warm-up 1 + 4 (half the budget's worth, capped at 5 in all).
  counts = commbench_counts(options, 25e3);
  EXPECT_EQ(counts.warmup, 5);
  EXPECT_EQ(counts.timed, 10);
  // 60 ms: 4 fit (4.17 rounded down); warm-up 1 + 2.
  counts = commbench_counts(options, 60e3);
  EXPECT_EQ(counts.warmup, 3);
  EXPECT_EQ(counts.timed, 4);
  // 0.9 s an op: fewer than one fits, yet the mean is never of fewer than kMinTimedIters.
  counts = commbench_counts(options, 9e5);
  EXPECT_EQ(counts.warmup, 1);
  EXPECT_EQ(counts.timed, kMinTimedIters);
  // Never more timed ops than asked for, nor fewer than asked for when that is below the floor.
  options.iters = 2;
  EXPECT_EQ(commbench_counts(options, 9e5).timed, 2);
}

}  // namespace
}  // namespace ddpscale
