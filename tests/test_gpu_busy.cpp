// The kernel-time floor counts the time the GPU was busy, once however many streams were
// busy at the same moment: the length of the union of the activity intervals.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/gpu_busy.hpp"

namespace ddpscale {
namespace {

TEST(GpuBusy, UnionCountsOverlappingKernelsOnce) {
  // Compute kernels [0,100) and [150,250); an NCCL kernel on its own stream [80,200)
  // overlaps both: busy [0,250) = 250. Then [300,310) inside nothing, [305,320) overlapping
  // it: [300,320) = 20. Total 270 (the gap [250,300) is idle).
  EXPECT_EQ(busy_union_ns({{150, 250}, {0, 100}, {80, 200}, {305, 320}, {300, 310}}), 270);
}

TEST(GpuBusy, TouchingAndNestedIntervalsAndEmptyInput) {
  EXPECT_EQ(busy_union_ns({}), 0);
  EXPECT_EQ(busy_union_ns({{0, 10}, {10, 20}}), 20);              // back to back: no gap
  EXPECT_EQ(busy_union_ns({{0, 100}, {20, 30}, {40, 50}}), 100);  // nested inside one kernel
  EXPECT_EQ(busy_union_ns({{5, 5}, {7, 3}}), 0);                  // empty or reversed: nothing
}

TEST(GpuBusy, KernelTimesSumPerNameLargestFirst) {
  // Two steps: gemm 30 + 50 ns, adam 40 + 40 ns, an NCCL kernel once for 70 ns.
  const std::vector<DeviceActivity> activities = {
      {"gemm", {0, 30}}, {"adam", {30, 70}}, {"nccl", {10, 80}}, {"gemm", {100, 150}}, {"adam", {150, 190}}};
  const std::vector<KernelTime> kernels = kernel_times(activities);
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[0].name, "adam");  // 80 ns, tied with gemm: the name decides
  EXPECT_EQ(kernels[0].calls, 2);
  EXPECT_EQ(kernels[0].total_ns, 80);
  EXPECT_EQ(kernels[1].name, "gemm");
  EXPECT_EQ(kernels[1].total_ns, 80);
  EXPECT_EQ(kernels[2].name, "nccl");
  EXPECT_EQ(kernels[2].calls, 1);
  EXPECT_EQ(kernels[2].total_ns, 70);
}

TEST(GpuBusy, KernelTableIsCsvPerStepWithQuotedNames) {
  const std::string path = ::testing::TempDir() + "kernels.rank0.csv";
  // Over 2 steps of 100 us busy each: a templated kernel whose name holds a comma and a quote.
  write_kernel_table(path, {{"void gemm<float, 128>(\"x\")", 4, 120000}, {"adam", 2, 50000}}, 2, 100.0);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "kernel,calls_per_step,us_per_step,share_of_busy\n"
            "\"void gemm<float, 128>(\"\"x\"\")\",2,60,0.6\n"
            "\"adam\",1,25,0.25\n");
  std::remove(path.c_str());
  EXPECT_THROW(write_kernel_table("/nonexistent-folder/k.csv", {}, 1, 1.0), std::runtime_error);
}

}  // namespace
}  // namespace ddpscale
