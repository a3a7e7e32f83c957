#include "trainer/study/host_calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace ddpscale {
namespace {

using Clock = std::chrono::steady_clock;

// Enough work to be timed well above the clock's resolution (about 0.3 ms on a 3 GHz core),
// little enough that 5 repetitions before each run cost nothing a study would notice.
constexpr int kHostIterations = 200000;
constexpr int kHostRepetitions = 5;
// An eager step of a small model is this: many tiny kernels issued one by one. Timing the
// same on a one-element tensor measures the launch path (driver, host thread) alone.
constexpr int kDeviceLaunches = 32;
constexpr int kDeviceRepetitions = 3;

double upper_median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double microseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// The compiler must compute `value`: an empty asm statement claims to read it (Google
// Benchmark's DoNotOptimize), so a loop whose result is otherwise unused is not deleted, and
// nothing is stored or read back to say so.
template <typename T>
void keep_computed(const T& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}

// xorshift64: a chain of dependent integer operations the compiler cannot fold or vectorise,
// so its time is the core's speed and nothing else (no memory traffic, no branches to learn).
double time_host_loop() {
  const auto start = Clock::now();
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < kHostIterations; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  keep_computed(x);
  return microseconds_since(start);
}

// item() copies the value to the host, which waits for every kernel before it on the stream.
double time_device_launches(torch::Tensor& value) {
  const auto start = Clock::now();
  for (int i = 0; i < kDeviceLaunches; ++i) value.add_(1.0);
  (void)value.item<float>();
  return microseconds_since(start);
}

}  // namespace

CalibrationReading measure_calibration(const torch::Device& device) {
  CalibrationReading reading;
  std::vector<double> host;
  for (int i = 0; i < kHostRepetitions; ++i) host.push_back(time_host_loop());
  reading.host_us = upper_median_of(host);
  if (device.is_cuda()) {
    torch::NoGradGuard no_grad;
    torch::Tensor value = torch::zeros({1}, torch::TensorOptions().device(device));
    time_device_launches(value);  // the first launches load kernels; not part of the reading
    std::vector<double> times;
    for (int i = 0; i < kDeviceRepetitions; ++i) times.push_back(time_device_launches(value));
    reading.device_us = upper_median_of(times);
  }
  return reading;
}

}  // namespace ddpscale
