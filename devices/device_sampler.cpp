#include "devices/device_sampler.hpp"

#include <cstdio>

#ifdef DDPSCALE_CUDA
#include <cuda_runtime.h>
#include <nvml.h>
#endif

namespace ddpscale {

DeviceSampler::DeviceSampler(SampleProbe probe, std::chrono::milliseconds interval)
    : probe_(std::move(probe)), interval_(interval) {}

DeviceSampler::~DeviceSampler() { stop(); }

void DeviceSampler::start() {
  stop();
  samples_.clear();
  if (!probe_) return;
  stopping_ = false;
  take_sample();
  thread_ = std::thread([this] { loop(); });
}

void DeviceSampler::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  take_sample();
}

// Only called while no other thread samples: from start()/stop() with the thread not
// running, and from loop() while it runs.
void DeviceSampler::take_sample() {
  if (const auto sample = probe_()) samples_.push_back(*sample);
}

void DeviceSampler::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    take_sample();
    lock.lock();
  }
}

#ifdef DDPSCALE_CUDA
namespace {

// NVML stays initialised for the life of the process (its init is reference counted and
// cheap to keep); failing to initialise it is said once.
bool nvml_ready() {
  static const bool ready = [] {
    const nvmlReturn_t status = nvmlInit();
    if (status != NVML_SUCCESS)
      std::fprintf(stderr, "ddpscale: nvmlInit failed (%s): no GPU utilisation, memory or power samples\n",
                   nvmlErrorString(status));
    return status == NVML_SUCCESS;
  }();
  return ready;
}

// The NVML handle of a CUDA device, matched by PCI bus id; false after a line on stderr.
bool nvml_handle_of(int cuda_device, nvmlDevice_t& device) {
  if (!nvml_ready()) return false;
  char bus_id[64];
  const cudaError_t found = cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), cuda_device);
  if (found != cudaSuccess) {
    std::fprintf(stderr, "ddpscale: cudaDeviceGetPCIBusId(%d) failed (%s): no NVML samples for this GPU\n",
                 cuda_device, cudaGetErrorString(found));
    return false;
  }
  const nvmlReturn_t matched = nvmlDeviceGetHandleByPciBusId(bus_id, &device);
  if (matched != NVML_SUCCESS) {
    std::fprintf(stderr, "ddpscale: nvmlDeviceGetHandleByPciBusId(%s) failed (%s): no NVML samples for this GPU\n",
                 bus_id, nvmlErrorString(matched));
    return false;
  }
  return true;
}

}  // namespace

std::vector<int> nvml_cpu_affinity(int cuda_device) {
  nvmlDevice_t device;
  if (!nvml_handle_of(cuda_device, device)) return {};
  constexpr unsigned int kWords = 16;  // 1024 cores
  unsigned long set[kWords] = {};
  if (nvmlDeviceGetCpuAffinity(device, kWords, set) != NVML_SUCCESS) return {};
  std::vector<int> cores;
  const unsigned int bits = 8 * sizeof(unsigned long);
  for (unsigned int w = 0; w < kWords; ++w)
    for (unsigned int b = 0; b < bits; ++b)
      if (set[w] & (1UL << b)) cores.push_back(static_cast<int>(w * bits + b));
  return cores;
}

SampleProbe nvml_probe(int cuda_device) {
  nvmlDevice_t device;
  if (!nvml_handle_of(cuda_device, device)) return {};
  return [device]() -> std::optional<DeviceSample> {
    nvmlUtilization_t utilization;
    nvmlMemory_t memory;
    unsigned int milliwatts = 0;
    if (nvmlDeviceGetUtilizationRates(device, &utilization) != NVML_SUCCESS) return std::nullopt;
    if (nvmlDeviceGetMemoryInfo(device, &memory) != NVML_SUCCESS) return std::nullopt;
    if (nvmlDeviceGetPowerUsage(device, &milliwatts) != NVML_SUCCESS) return std::nullopt;
    DeviceSample sample;
    sample.utilization_pct = static_cast<float>(utilization.gpu);
    sample.memory_used_mib = static_cast<float>(static_cast<double>(memory.used) / (1024.0 * 1024.0));
    sample.power_w = static_cast<float>(milliwatts / 1000.0);
    unsigned int mhz = 0;
    if (nvmlDeviceGetClockInfo(device, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS) sample.sm_clock_mhz = static_cast<float>(mhz);
    if (nvmlDeviceGetClockInfo(device, NVML_CLOCK_MEM, &mhz) == NVML_SUCCESS)
      sample.memory_clock_mhz = static_cast<float>(mhz);
    unsigned long long reasons = 0;
    if (nvmlDeviceGetCurrentClocksEventReasons(device, &reasons) == NVML_SUCCESS) sample.clock_event_reasons = reasons;
    return sample;
  };
}
#else
SampleProbe nvml_probe(int) { return {}; }
std::vector<int> nvml_cpu_affinity(int) { return {}; }
#endif

}  // namespace ddpscale
