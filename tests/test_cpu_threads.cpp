// CPU ranks size LibTorch's intra-op threads from the CPU mask they were given
// (process/device_choice.hpp), not from the machine's core count, with the mask injected.
// OpenBLAS takes the same count.
#include "trainer/process/device_choice.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <vector>

namespace ddpscale {
namespace {

cpu_set_t mask_of(std::initializer_list<int> cores) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int core : cores) CPU_SET(core, &mask);
  return mask;
}

TEST(CpuThreads, OneRankTakesEveryCoreOfItsMask) {
  EXPECT_EQ(intra_op_threads(mask_of({0, 1, 2, 3}), 1), 4);
  // taskset -c 0 (or mpirun --bind-to core) on a machine of any size: one core, one thread.
  EXPECT_EQ(intra_op_threads(mask_of({0}), 1), 1);
  // A mask of scattered cores counts its cores, not its highest index.
  EXPECT_EQ(intra_op_threads(mask_of({2, 7, 30}), 1), 3);
}

TEST(CpuThreads, RanksOfANodeDivideTheMask) {
  EXPECT_EQ(intra_op_threads(mask_of({0, 1}), 2), 1);
  EXPECT_EQ(intra_op_threads(mask_of({0, 1, 2, 3, 4, 5, 6, 7}), 2), 4);
  EXPECT_EQ(intra_op_threads(mask_of({0, 1, 2}), 2), 1);  // rounded down: never more threads than cores
}

// OpenBLAS (Debian's libtorch's BLAS) takes the count share_cpu_cores gives it. With its
// pthread build the default is a thread per core of the machine; the serial build has one.
TEST(CpuThreads, OpenBlasTakesTheThreadCountGiven) {
  if (blas_threads() < 0) GTEST_SKIP() << "LibTorch's BLAS here is not OpenBLAS";
  set_blas_threads(1);
  EXPECT_EQ(blas_threads(), 1);
}

TEST(CpuThreads, NeverFewerThanOne) {
  EXPECT_EQ(intra_op_threads(mask_of({0}), 2), 1);  // pinned ranks, one core each
  EXPECT_EQ(intra_op_threads(mask_of({0}), 0), 1);
}

TEST(CpuThreads, TheCoresOfAMaskInOrder) {
  EXPECT_EQ(cores_in(mask_of({5, 1, 3})), (std::vector<int>{1, 3, 5}));
  // This process's own mask holds at least one core, and each core once.
  const std::vector<int> own = cores_in(cpu_mask_of_this_process());
  ASSERT_FALSE(own.empty());
  EXPECT_TRUE(std::is_sorted(own.begin(), own.end()));
}

}  // namespace
}  // namespace ddpscale
