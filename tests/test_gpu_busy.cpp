// The kernel-time floor counts the time the GPU was busy, once however many streams were
// busy at the same moment: the length of the union of the activity intervals.
#include <gtest/gtest.h>

#include "gpu_busy.hpp"

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

}  // namespace
}  // namespace ddpscale
