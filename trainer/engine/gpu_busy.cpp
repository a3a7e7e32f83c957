#include "trainer/engine/gpu_busy.hpp"

#include "results/store/csv_text.hpp"

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace ddpscale {

int64_t busy_union_ns(std::vector<BusyInterval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const BusyInterval& a, const BusyInterval& b) { return a.start_ns < b.start_ns; });
  int64_t total = 0;
  bool open = false;
  BusyInterval current;
  for (const BusyInterval& next : intervals) {
    if (next.end_ns <= next.start_ns) continue;
    if (open && next.start_ns <= current.end_ns) {
      current.end_ns = std::max(current.end_ns, next.end_ns);
      continue;
    }
    if (open) total += current.end_ns - current.start_ns;
    current = next;
    open = true;
  }
  if (open) total += current.end_ns - current.start_ns;
  return total;
}

std::vector<int64_t> concurrent_ns_each(const std::vector<DeviceActivity>& activities) {
  // A sweep over the starts and ends: between two consecutive event times the set of running
  // activities is fixed, and when it holds two or more, that stretch counts for each of them.
  struct Edge {
    int64_t at_ns;
    bool starts;
    size_t activity;
  };
  std::vector<Edge> edges;
  for (size_t i = 0; i < activities.size(); ++i) {
    const BusyInterval& t = activities[i].interval;
    if (t.end_ns <= t.start_ns) continue;
    edges.push_back({t.start_ns, true, i});
    edges.push_back({t.end_ns, false, i});
  }
  // Ends before starts at the same instant, so back-to-back activities do not overlap.
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    return a.at_ns != b.at_ns ? a.at_ns < b.at_ns : (!a.starts && b.starts);
  });
  std::vector<int64_t> concurrent(activities.size(), 0);
  std::set<size_t> running;
  int64_t previous_ns = 0;
  for (const Edge& e : edges) {
    if (running.size() >= 2)
      for (size_t i : running) concurrent[i] += e.at_ns - previous_ns;
    previous_ns = e.at_ns;
    if (e.starts)
      running.insert(e.activity);
    else
      running.erase(e.activity);
  }
  return concurrent;
}

std::vector<KernelTime> kernel_times(const std::vector<DeviceActivity>& activities) {
  const std::vector<int64_t> concurrent = concurrent_ns_each(activities);
  std::map<std::string, KernelTime> by_name;
  for (size_t i = 0; i < activities.size(); ++i) {
    const DeviceActivity& a = activities[i];
    KernelTime& k = by_name[a.name];
    k.name = a.name;
    k.calls += 1;
    k.total_ns += std::max<int64_t>(0, a.interval.end_ns - a.interval.start_ns);
    k.concurrent_ns += concurrent[i];
  }
  std::vector<KernelTime> kernels;
  for (auto& entry : by_name) kernels.push_back(std::move(entry.second));
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const KernelTime& a, const KernelTime& b) { return a.total_ns > b.total_ns; });
  return kernels;
}

void write_kernel_table(const std::string& path, const std::vector<KernelTime>& kernels, int steps,
                        double busy_us_per_step) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write the kernel table " + path + ": is its folder there and writable?");
  out << "kernel,calls_per_step,us_per_step,share_of_busy,concurrent_us_per_step\n";
  for (const KernelTime& k : kernels) {
    const double us_per_step = static_cast<double>(k.total_ns) / 1000.0 / steps;
    // Every name quoted: kernel names are C++ signatures, and a line's name ends at its
    // closing quote for readers that do not parse CSV (the GPU tests' grep of a kernel).
    out << csv_field(k.name, CsvQuoting::always) << ',' << static_cast<double>(k.calls) / steps << ',' << us_per_step << ','
        << us_per_step / busy_us_per_step << ',' << static_cast<double>(k.concurrent_ns) / 1000.0 / steps << '\n';
  }
  if (!out.flush()) throw std::runtime_error("writing the kernel table " + path + " failed (disk full?)");
}

namespace {

namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

// libkineto's ActivityType values for work the GPU does (libkineto/include/ActivityType.h:
// GPU_MEMCPY = 3, GPU_MEMSET = 4, CONCURRENT_KERNEL = 5). Left out on purpose:
// GPU_USER_ANNOTATION (2), a range from the first to the last kernel of a CPU-side scope,
// which would count the gaps between kernels as busy.
bool is_device_work(uint8_t activity_type) { return activity_type >= 3 && activity_type <= 5; }

BusyInterval interval_of(const prof::KinetoEvent& event) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
  const auto start = static_cast<int64_t>(event.startNs());
  return {start, start + static_cast<int64_t>(event.durationNs())};
#else
  const auto start = static_cast<int64_t>(event.startUs()) * 1000;
  return {start, start + static_cast<int64_t>(event.durationUs()) * 1000};
#endif
}

// Kineto leaves CUPTI's callbacks installed after a trace unless TEARDOWN_CUPTI=1, and they
// tax every later CUDA call: on 2 H200s the eager runs after the first profiled one were 25%
// slower (run 0 of mlp-medium batch 8: 7,868 samples/s; runs 1-4: 4,874-6,129). A value the
// user set is kept. (Teardown broke CUDA graphs before CUDA 12.6; the GPU machine has 13.0.)
void ask_kineto_to_tear_down_cupti() { ::setenv("TEARDOWN_CUPTI", "1", /*overwrite=*/0); }

void warn_once(const std::string& why) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    std::fprintf(stderr, "warning: GPU busy time (--gpu-busy-steps) not measured: %s; the report shows n/a\n",
                 why.c_str());
}

// Kineto writes the file itself and says nothing when it cannot, so the file is checked after.
void save_trace(prof::ProfilerResult& result, const std::string& path) {
  result.save(path);
  std::ifstream written(path);
  if (!written || written.peek() == std::ifstream::traits_type::eof())
    throw std::runtime_error("the GPU trace " + path + " was not written: is its folder there and writable?");
}

}  // namespace

GpuBusyProfile profile_gpu_busy(int steps, int device_index, const std::function<void()>& one_step,
                                const std::function<void()>& wait_for_device, const std::function<void()>& started,
                                const std::string& trace_path) {
  const GpuBusyProfile kUnknown{std::numeric_limits<double>::quiet_NaN(), {}};
  if (steps <= 0) return kUnknown;
  const ProfilerConfig config(ProfilerState::KINETO);
  const std::set<ActivityType> profiled_kinds = {ActivityType::CUDA};
  ask_kineto_to_tear_down_cupti();
  bool profiling = true;
  try {
    prof::prepareProfiler(config, profiled_kinds);
    prof::enableProfiler(config, profiled_kinds);
  } catch (const std::exception& e) {
    warn_once(std::string("the profiler did not start: ") + e.what());
    profiling = false;  // the ranks still run the same steps, so their collectives pair up
  }
  try {
    started();
    for (int s = 0; s < steps; ++s) one_step();
    wait_for_device();
  } catch (...) {
    if (profiling) prof::disableProfiler();
    throw;  // a failed step fails the run, as it would without the profiler
  }
  if (!profiling) return kUnknown;
  const std::unique_ptr<prof::ProfilerResult> result = prof::disableProfiler();
  if (!trace_path.empty()) save_trace(*result, trace_path);
  std::vector<DeviceActivity> activities;
  for (const auto& event : result->events())
    if (event.deviceType() == c10::DeviceType::CUDA && static_cast<int>(event.deviceIndex()) == device_index &&
        is_device_work(event.activityType()))
      activities.push_back({event.name(), interval_of(event)});
  if (activities.empty()) {
    warn_once("the profiler recorded no kernels on GPU " + std::to_string(device_index) +
              " (is CUPTI available to this LibTorch?)");
    return kUnknown;
  }
  std::vector<BusyInterval> intervals;
  for (const DeviceActivity& a : activities) intervals.push_back(a.interval);
  return {static_cast<double>(busy_union_ns(std::move(intervals))) / 1000.0 / steps, kernel_times(activities)};
}

}  // namespace ddpscale
