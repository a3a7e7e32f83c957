#include "trainer/study/config_runner.hpp"

#include "comm/check.hpp"
#include "comm/mpi_context.hpp"
#include "devices/device_sampler.hpp"
#include "devices/host_probe.hpp"
#include "results/store/run_store.hpp"
#include "trainer/engine/initial_model.hpp"
#include "trainer/engine/training_session.hpp"
#include "trainer/process/device_choice.hpp"
#include "trainer/study/fault_injection.hpp"
#include "trainer/study/host_calibration.hpp"
#include "trainer/study/timing_exchange.hpp"

#include <ATen/Parallel.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <sstream>
#ifdef DDPSCALE_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace ddpscale {
namespace {

void reset_peak_memory(const DeviceChoice& device) {
#ifdef DDPSCALE_CUDA
  if (!device.cuda) return;
  // The caching allocator knows a device only after its first allocation there.
  torch::empty({1}, torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device.device_index)));
  c10::cuda::CUDACachingAllocator::resetPeakStats(device.device_index);
#else
  (void)device;
#endif
}

int64_t peak_memory_bytes(const DeviceChoice& device) {
#ifdef DDPSCALE_CUDA
  if (device.cuda) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.device_index);
    return stats.allocated_bytes[0].peak;  // index 0: aggregate over pool types
  }
#else
  (void)device;
#endif
  return 0;
}

// The first measured step whose loss is not finite, or -1.
int first_non_finite(const std::vector<float>& losses) {
  for (size_t i = 0; i < losses.size(); ++i)
    if (!std::isfinite(losses[i])) return static_cast<int>(i);
  return -1;
}

// Replicas must be bit-identical after a run; anything else is a broken reduction.
// Returns "" when every rank's checksum is finite and equals rank 0's, else what is wrong
// and on which ranks (the same text on every rank).
std::string replicas_disagree(const MpiGroup& group, std::pair<double, double> checksum) {
  const double mine[2] = {checksum.first, checksum.second};
  std::vector<double> all(static_cast<size_t>(group.size()) * 2);
  MPI_Request request = MPI_REQUEST_NULL;
  DDPSCALE_MPI_CHECK(MPI_Iallgather(mine, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, group.handle(), &request));
  wait_within_comm_timeout(request, "comparing the replicas' parameter checksums", WaitPolling::spin);
  std::string not_finite, differing;
  for (int r = 0; r < group.size(); ++r) {
    const double* theirs = &all[static_cast<size_t>(r) * 2];
    if (!std::isfinite(theirs[0]) || !std::isfinite(theirs[1]))
      not_finite += (not_finite.empty() ? "" : ", ") + std::to_string(r);
    else if (r > 0 && std::memcmp(theirs, &all[0], 2 * sizeof(double)) != 0)
      differing += (differing.empty() ? "" : ", ") + std::to_string(r);
  }
  if (!not_finite.empty()) return "parameters not finite after the run on rank(s) " + not_finite;
  if (differing.empty()) return "";
  char sums[96];
  std::snprintf(sums, sizeof(sums), " (parameter sum %.17g on rank 0)", all[0]);
  return "replicas diverged: the parameter checksum of rank(s) " + differing + " differs from rank 0's after the run" +
         sums;
}

// Fault injection for the reliability tests (docs/reliability.md), read here and nowhere
// else: DDPSCALE_FAULT_PERTURB_RANK=R adds 1 to one parameter of group rank R after the
// first run's steps, before the checksum, as a broken reduction would leave it. Unset in
// every real measurement; a set value is announced on stderr so it cannot go unnoticed.
int fault_perturb_rank() {
  static const int rank =
      fault_injection_rank("DDPSCALE_FAULT_PERTURB_RANK", "perturbs that rank's parameters after run 0");
  return rank;
}

void perturb_parameters(TrainingSession& session) {
  torch::NoGradGuard no_grad;
  auto parameters = session.parameters();
  if (!parameters.empty()) parameters.front().view(-1)[0].add_(1.0);
}

// The host's side of the run (devices/host_probe.hpp), from counters read just before and
// just after it: outside the measured steps, so reading them changes nothing they time.
void record_host_instruments(const HostCounters& before, const HostCounters& after, RankTimings& timings) {
  const std::vector<int> cores = cores_of_this_process();
  auto& instruments = timings.instruments;
  instruments["cpu_cores"].assign(cores.begin(), cores.end());
  if (const double mhz = mean_core_mhz(cores); std::isfinite(mhz)) instruments["cpu_mhz"] = {static_cast<float>(mhz)};
  instruments["context_switches"] = {static_cast<float>(after.voluntary_switches - before.voluntary_switches),
                                     static_cast<float>(after.involuntary_switches - before.involuntary_switches)};
  if (std::isfinite(after.steal_ms) && std::isfinite(before.steal_ms))
    instruments["host_steal_ms"] = {static_cast<float>(after.steal_ms - before.steal_ms)};
  // Whether the ranks had cores of their own or shared them (the report says which).
  const std::vector<int> mask = cores_in(cpu_mask_of_this_process());
  instruments["cpu_mask"].assign(mask.begin(), mask.end());
  instruments["intra_op_threads"] = {static_cast<float>(at::get_num_threads())};
}

void record_calibration(const CalibrationReading& reading, RankTimings& timings) {
  if (std::isfinite(reading.host_us)) timings.calibration_host_us = {static_cast<float>(reading.host_us)};
  if (std::isfinite(reading.device_us)) timings.calibration_device_us = {static_cast<float>(reading.device_us)};
}

// The line of an error worth storing. c10 errors carry a backtrace after their first line;
// the TorchScript interpreter's first line only says an operation failed, and its last line
// that names an exception ("RuntimeError: expected scalar type ...") says why.
std::string failure_headline(const std::string& what) {
  std::istringstream lines(what);
  std::string first, line, cause;
  std::getline(lines, first);
  if (first.find("failed in the TorchScript interpreter") == std::string::npos) return first;
  while (std::getline(lines, line)) {
    const auto colon = line.find("Error: ");
    if (colon != std::string::npos && line.find(' ') > colon) cause = line;
  }
  return cause.empty() ? first : first + " " + cause;
}

// A run that ran out of memory says which batch did it, so the study's record shows the
// limit (the configuration's record carries the rest of its settings).
std::string describe_failure(std::string what, const TrainOptions& options, int world) {
  what = failure_headline(what);
  const bool out_of_memory = what.find("out of memory") != std::string::npos ||
                             what.find("not enough memory") != std::string::npos ||
                             what.find("can't allocate memory") != std::string::npos ||
                             what.find("std::bad_alloc") != std::string::npos;
  if (out_of_memory)
    what = "out of memory at batch " + std::to_string(batch_per_rank(options, world)) + " per rank (global " +
           std::to_string(global_batch(options, world)) + "): " + what;
  return what;
}

}  // namespace

torch::Device torch_device_of(const DeviceChoice& device) {
  return device.cuda ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device.device_index))
                     : torch::Device(torch::kCPU);
}

std::shared_ptr<InitialModel> make_initial_model(const TrainOptions& options, const DeviceChoice& device) {
  return std::make_shared<InitialModel>(options.model, model_options_from(options), options.seed,
                                        torch_device_of(device));
}

// Every 100 ms: NVML's utilisation and power are averages over its own sample period (1/6 s
// to 1 s), so 10 ms readings repeated each other, and each reading inside the measured loop
// cost a graph step on an H200 about 40 us (0.36% of 100 replays of mlp-medium b8). Start and stop readings bracket every run regardless.
ConfigurationRuns::ConfigurationRuns(const TrainOptions& options, const MpiGroup& group, Communicator* comm,
                                     const DeviceChoice& device, std::shared_ptr<InitialModel> model, int first_run,
                                     int end_run)
    : options_(options),
      group_(group),
      comm_(comm),
      device_(device),
      model_(model ? std::move(model) : make_initial_model(options, device)),
      sampler_(std::make_unique<DeviceSampler>(device.cuda ? nvml_probe(device.device_index) : SampleProbe{},
                                               std::chrono::milliseconds(100))) {
  record_.params = config_params(options, group.size(),
                                 describe_model(options.model, model_options_from(options)).parameters, device.cuda);
  record_.id = config_id(record_.params);
  first_run_ = next_ = first_run;
  end_ = end_run < 0 ? options.runs : end_run;
  if (device.cuda)
    for (int core : nvml_cpu_affinity(device.device_index)) gpu_cpu_affinity_.push_back(static_cast<float>(core));
}

ConfigurationRuns::~ConfigurationRuns() = default;

void ConfigurationRuns::run_next(const RunDoneCallback& on_run_done) {
  const int k = next_++;
  RunRecord run;
  run.index = k;
  run.seed = options_.seed + static_cast<uint64_t>(k);
  run.start_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  RankTimings timings;
  timings.rank = group_.rank();
  timings.process_id = getpid();
  std::string failure;
  std::pair<double, double> checksum{0, 0};
  GradientTiming gradient_timing;
  record_calibration(measure_calibration(torch_device_of(device_)), timings);
  reset_peak_memory(device_);
  const HostCounters before = read_host_counters();
  try {
    SessionSetup setup;
    setup.options = engine_options(options_, group_.size(), k);
    setup.run_index = k;
    setup.rank = group_.rank();
    setup.world_size = group_.size();
    setup.device = torch_device_of(device_);
    setup.comm = comm_;
    setup.sampler = options_.gpu_sampling && sampler_->enabled() ? sampler_.get() : nullptr;
    setup.initial_model = model_.get();
    // Once per configuration (and launch), on every rank alike: its steps are collective.
    if (k == first_run_) setup.gradient_timing = &gradient_timing;
    TrainingSession session(setup);
    session.run(timings, run.loss);
    run.loss_every = session.loss_every();
    if (k == 0 && fault_perturb_rank() == group_.rank()) perturb_parameters(session);
    checksum = session.parameter_checksum();
    const int bad = first_non_finite(run.loss);
    if (bad >= 0) {
      const float value = run.loss[static_cast<size_t>(bad)];
      const int step = run.step_of_loss(bad, options_.steps);
      failure = std::string("non-finite loss (") + (std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf") +
                ") at measured step " + std::to_string(step) +
                (run.loss_every > 1 ? " (graph mode keeps every " + std::to_string(run.loss_every) + "th step's loss)" : "");
    }
  } catch (const std::bad_alloc&) {
    failure = describe_failure("std::bad_alloc", options_, group_.size());
  } catch (const std::exception& e) {
    failure = describe_failure(e.what(), options_, group_.size());
  }
  timings.peak_memory_bytes = peak_memory_bytes(device_);
  record_host_instruments(before, read_host_counters(), timings);
  if (!gpu_cpu_affinity_.empty()) timings.instruments["gpu_cpu_affinity"] = gpu_cpu_affinity_;
  // Which layout the run drew (0: nothing held), so a report can set launches of one amount apart.
  if (device_.cuda) timings.instruments["process_shift_mib"] = {static_cast<float>(options_.process_shift_mib)};

  if (any_rank_failed(group_, !failure.empty(), failure)) {
    run.status = RunStatus::failed;
    run.failure = failure;
  } else if (const std::string diverged = replicas_disagree(group_, checksum); !diverged.empty()) {
    run.status = RunStatus::failed;
    run.failure = diverged;
  }
  auto all = gather_rank_timings(group_, timings);
  const double slowest_wall = max_over_group(group_, timings.wall_seconds);
  if (run.status == RunStatus::ok && slowest_wall > 0)
    run.samples_per_second = static_cast<double>(record_.params.global_batch) * options_.steps / slowest_wall;
  if (group_.rank() == 0) {
    if (gradient_timing.recorded()) record_.gradient_timing = std::move(gradient_timing);
    run.ranks = std::move(all);
    if (on_run_done) on_run_done(run);
    record_.runs.push_back(std::move(run));
  }
}

}  // namespace ddpscale
