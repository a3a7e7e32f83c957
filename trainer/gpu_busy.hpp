// The kernel-time floor of a step (--gpu-busy-steps): how long the GPU was busy per step,
// from LibTorch's Kineto profiler (CUPTI activity records of kernels, copies and memsets).
// A step can be no faster than this however cheaply it is launched, so step / busy says
// how far an execution mode is from the hardware. Overlapping activities (a compute kernel
// beside an NCCL kernel on another stream) count once: busy time is the length of the
// union of the intervals, not their sum.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace ddpscale {

struct BusyInterval {
  int64_t start_ns = 0, end_ns = 0;
};

// Length of the union of the intervals, in ns.
int64_t busy_union_ns(std::vector<BusyInterval> intervals);

// Runs one_step() `steps` times under the profiler, then wait_for_device(), and returns the
// GPU busy microseconds per step on device `device_index`. NaN when the profiler saw no
// device activity or could not run (the reason is printed once to stderr): the floor is
// then unknown, which the report says, rather than a failed run.
// started() runs once the profiler is on, before the first step: with N ranks a barrier, so
// no rank's first collective spins (busy) while a peer is still starting its profiler.
double profile_gpu_busy_us(int steps, int device_index, const std::function<void()>& one_step,
                           const std::function<void()>& wait_for_device, const std::function<void()>& started);

}  // namespace ddpscale
