// GPU utilisation, memory and power sampled on a background thread while the measured
// steps run. NVML answers from the driver without touching any CUDA stream, so sampling
// does not change what the step timings measure. The sampling loop is generic (a probe
// function), so it is tested on machines without a GPU.
#pragma once
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace ddpscale {

struct DeviceSample {
  float utilization_pct = 0;  // share of the last sample period (NVML: 1/6 s to 1 s) a kernel ran
  float memory_used_mib = 0;  // device memory in use, all processes
  float power_w = 0;          // board power draw
  // Clocks and why they are where they are: a GPU held below its boost clock by power,
  // heat or an idle-clock policy runs every kernel slower (docs/methodology.md, "Launches").
  float sm_clock_mhz = 0;
  float memory_clock_mhz = 0;
  uint64_t clock_event_reasons = 0;  // NVML's nvmlClocksEventReason* bits (0 where unreadable)
};

// One reading; nullopt when the device could not be read this time.
using SampleProbe = std::function<std::optional<DeviceSample>()>;

class DeviceSampler {
 public:
  // An empty probe makes a sampler that never samples (CPU ranks).
  DeviceSampler(SampleProbe probe, std::chrono::milliseconds interval);
  ~DeviceSampler();
  DeviceSampler(const DeviceSampler&) = delete;
  DeviceSampler& operator=(const DeviceSampler&) = delete;

  // Forgets earlier samples, reads once at once, then every interval until stop().
  void start();
  // Reads a last time (so even a window shorter than the interval has two readings) and
  // joins the thread. Harmless when not started.
  void stop();
  const std::vector<DeviceSample>& samples() const { return samples_; }
  bool enabled() const { return static_cast<bool>(probe_); }

 private:
  void take_sample();
  void loop();

  SampleProbe probe_;
  std::chrono::milliseconds interval_;
  std::vector<DeviceSample> samples_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

// A probe reading the CUDA device `cuda_device` through NVML (matched by PCI bus id, since
// NVML and CUDA number devices differently). Empty, after one line on stderr saying why,
// when NVML cannot be used; always empty in a build without CUDA.
SampleProbe nvml_probe(int cuda_device);

// The CPU cores NVML names as close to the CUDA device (its CPU affinity); empty where NVML
// cannot tell, and always in a build without CUDA.
std::vector<int> nvml_cpu_affinity(int cuda_device);

}  // namespace ddpscale
