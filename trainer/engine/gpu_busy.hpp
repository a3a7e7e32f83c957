// The kernel-time floor of a step (--gpu-busy-steps): how long the GPU was busy per step,
// from LibTorch's Kineto profiler (CUPTI activity records of kernels, copies and memsets).
// A step can be no faster than this however cheaply it is launched, so step / busy says
// how far an execution mode is from the hardware. Overlapping activities (a compute kernel
// beside an NCCL kernel on another stream) count once: busy time is the length of the
// union of the intervals, not their sum.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ddpscale {

struct BusyInterval {
  int64_t start_ns = 0, end_ns = 0;
};

// Length of the union of the intervals, in ns.
int64_t busy_union_ns(std::vector<BusyInterval> intervals);

// One kernel, copy or memset the profiler saw on the GPU.
struct DeviceActivity {
  std::string name;
  BusyInterval interval;
};

// What one kernel name cost over the profiled steps: it says which kernels make up the floor.
// concurrent_ns is the part of total_ns during which some other activity ran on the same GPU:
// a kernel that wants the whole GPU (cuDNN's persistent RNN kernels keep a block on every SM)
// runs slower beside other work, and the sums alone cannot say whether it had any.
struct KernelTime {
  std::string name;
  int64_t calls = 0;
  int64_t total_ns = 0;
  int64_t concurrent_ns = 0;
};

// For each activity, in order, how long at least one other activity ran at the same time.
// Intervals that only touch (one ends where the next starts) do not overlap.
std::vector<int64_t> concurrent_ns_each(const std::vector<DeviceActivity>& activities);

// Calls, summed duration and summed concurrent time per name, largest total first (ties by
// name, so the order is reproducible).
std::vector<KernelTime> kernel_times(const std::vector<DeviceActivity>& activities);

// Writes the table as CSV (kernel, calls_per_step, us_per_step, share_of_busy,
// concurrent_us_per_step), largest first. share_of_busy is the kernel's time over the busy
// union: overlapping kernels (NCCL beside backward) make the shares add up to more than 1.
// Throws std::runtime_error naming the file when it cannot be written.
void write_kernel_table(const std::string& path, const std::vector<KernelTime>& kernels, int steps,
                        double busy_us_per_step);

struct GpuBusyProfile {
  double busy_us_per_step;          // NaN: unknown (see profile_gpu_busy)
  std::vector<KernelTime> kernels;  // over all profiled steps, largest first
};

// Runs one_step() `steps` times under the profiler, then wait_for_device(), and returns the
// GPU busy microseconds per step on device `device_index`, with the kernels that filled it.
// NaN when the profiler saw no device activity or could not run (the reason is printed once
// to stderr): the floor is then unknown, which the report says, rather than a failed run.
// started() runs once the profiler is on, before the first step: with N ranks a barrier, so
// no rank's first collective spins (busy) while a peer is still starting its profiler.
// A non-empty trace_path also gets the profiled steps as a Chrome trace (Kineto's JSON, which
// Perfetto opens): each kernel with its grid, block, registers and shared memory, which the
// table's sums cannot show. Throws std::runtime_error naming the file when it is not written.
GpuBusyProfile profile_gpu_busy(int steps, int device_index, const std::function<void()>& one_step,
                                const std::function<void()>& wait_for_device, const std::function<void()>& started,
                                const std::string& trace_path = "");

}  // namespace ddpscale
