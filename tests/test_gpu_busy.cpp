// The kernel-time floor counts the time the GPU was busy, once however many streams were
// busy at the same moment: the length of the union of the activity intervals.
#include "trainer/engine/gpu_busy.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

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
  // Beside other work: the first gemm [0,30) shares [10,30) with nccl (20), the first adam
  // [30,70) lies inside nccl (40), nccl [10,80) has gemm then adam beside it for [10,70) (60);
  // the second step runs alone (adam starts where gemm ends: touching is not overlapping).
  EXPECT_EQ(kernels[0].concurrent_ns, 40);
  EXPECT_EQ(kernels[1].concurrent_ns, 20);
  EXPECT_EQ(kernels[2].concurrent_ns, 60);
}

TEST(GpuBusy, ConcurrentTimeIsEachActivitysOverlapWithAllOthers) {
  // a [0,100) has b [20,60) and c [40,80) beside it over [20,80): 60, counted once where b
  // and c both run. b and c each lie inside a: 40 each. d [200,210) is alone; the empty
  // e [90,90) and the reversed f [95,91) are nothing and overlap nothing.
  const std::vector<DeviceActivity> activities = {{"a", {0, 100}},   {"b", {20, 60}}, {"c", {40, 80}},
                                                  {"d", {200, 210}}, {"e", {90, 90}}, {"f", {95, 91}}};
  EXPECT_EQ(concurrent_ns_each(activities), (std::vector<int64_t>{60, 40, 40, 0, 0, 0}));
  EXPECT_TRUE(concurrent_ns_each({}).empty());
  // Identical intervals overlap each other fully.
  EXPECT_EQ(concurrent_ns_each({{"x", {5, 15}}, {"y", {5, 15}}}), (std::vector<int64_t>{10, 10}));
}

TEST(GpuBusy, KernelTableIsCsvPerStepWithQuotedNames) {
  const std::string path = ::testing::TempDir() + "kernels.rank0.csv";
  // Over 2 steps of 100 us busy each: a templated kernel whose name holds a comma and a quote.
  // The gemm had other work beside it for 30 us in all (15 a step); adam for none.
  write_kernel_table(path, {{"void gemm<float, 128>(\"x\")", 4, 120000, 30000}, {"adam", 2, 50000}}, 2, 100.0);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "kernel,calls_per_step,us_per_step,share_of_busy,concurrent_us_per_step\n"
            "\"void gemm<float, 128>(\"\"x\"\")\",2,60,0.6,15\n"
            "\"adam\",1,25,0.25,0\n");
  std::remove(path.c_str());
  EXPECT_THROW(write_kernel_table("/nonexistent-folder/k.csv", {}, 1, 1.0), std::runtime_error);
}

}  // namespace
}  // namespace ddpscale
