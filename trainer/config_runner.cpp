#include "config_runner.hpp"

#include <cmath>

#include "mpi_context.hpp"
#include "timing_exchange.hpp"
#include "training_session.hpp"
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
bool replicas_agree(const MpiGroup& group, std::pair<double, double> checksum) {
  double mine[2] = {checksum.first, checksum.second};
  double low[2] = {mine[0], mine[1]}, high[2] = {mine[0], mine[1]};
  MPI_Allreduce(MPI_IN_PLACE, low, 2, MPI_DOUBLE, MPI_MIN, group.handle());
  MPI_Allreduce(MPI_IN_PLACE, high, 2, MPI_DOUBLE, MPI_MAX, group.handle());
  return low[0] == high[0] && low[1] == high[1];
}

}  // namespace

ConfigRecord run_configuration(const TrainOptions& options, const MpiGroup& group, Communicator* comm,
                               const DeviceChoice& device, const RunDoneCallback& on_run_done) {
  const int world = group.size();
  const torch::Device torch_device = device.cuda ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device.device_index))
                                                 : torch::Device(torch::kCPU);
  ConfigRecord record;
  record.params = config_params(options, world, describe_model(options.model, model_options_from(options)).parameters,
                                device.cuda);
  record.id = config_id(record.params);

  for (int k = 0; k < options.runs; ++k) {
    RunRecord run;
    run.index = k;
    run.seed = options.seed + static_cast<uint64_t>(k);
    RankTimings timings;
    timings.rank = group.rank();
    std::string failure;
    std::pair<double, double> checksum{0, 0};
    reset_peak_memory(device);
    try {
      SessionSetup setup;
      setup.options = options;
      setup.run_index = k;
      setup.rank = group.rank();
      setup.world_size = world;
      setup.device = torch_device;
      setup.comm = comm;
      TrainingSession session(setup);
      session.run(timings, run.loss);
      checksum = session.parameter_checksum();
      const int bad = first_non_finite(run.loss);
      if (bad >= 0) failure = "non-finite loss (" + std::to_string(run.loss[static_cast<size_t>(bad)]) +
                              ") at measured step " + std::to_string(bad);
    } catch (const std::exception& e) {
      failure = e.what();
      const auto newline = failure.find('\n');  // c10 errors carry a backtrace after the first line
      if (newline != std::string::npos) failure.resize(newline);
    }
    timings.peak_memory_bytes = peak_memory_bytes(device);

    if (any_rank_failed(group, !failure.empty(), failure)) {
      run.status = RunStatus::failed;
      run.failure = failure;
    } else if (!replicas_agree(group, checksum)) {
      run.status = RunStatus::failed;
      run.failure = "replicas diverged: parameter checksums differ between ranks after the run";
    }
    auto all = gather_rank_timings(group, timings);
    const double slowest_wall = max_over_group(group, timings.wall_seconds);
    if (run.status == RunStatus::ok && slowest_wall > 0)
      run.samples_per_second = static_cast<double>(record.params.global_batch) * options.steps / slowest_wall;
    if (group.rank() == 0) {
      run.ranks = std::move(all);
      if (on_run_done) on_run_done(run);
      record.runs.push_back(std::move(run));
    }
  }
  return record;
}

}  // namespace ddpscale
