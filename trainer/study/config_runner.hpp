// Runs the runs of one configuration on a group of ranks and assembles its record:
// rank 0 ends up with all ranks' timings; failures (an exception on any rank, a
// non-finite loss, replicas that diverged) mark that run failed instead of ending the study.
#pragma once
#include "comm/communicator.hpp"
#include "results/store/run_record.hpp"
#include "trainer/process/device_choice.hpp"
#include "trainer/study/train_options.hpp"

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>

namespace ddpscale {

class DeviceSampler;
class InitialModel;
class MpiGroup;

using RunDoneCallback = std::function<void(const RunRecord&)>;

// The runs of one configuration, one at a time, so a sweep can interleave the runs of a
// 1-rank configuration and its N-rank twin. Collective over `group` (the configuration's
// ranks); comm is null for world size 1. `model` may be shared by twins (same model, options
// and seed, so the same initial parameters); null: the configuration builds its own.
// options.process_shift_mib is recorded with each run; the caller holds that memory (the
// process's first allocation, `ddpscale train` and each sweep launch do it).
// It runs runs first_run to end_run - 1 (-1: options.runs): a launch's share of them.
class ConfigurationRuns {
 public:
  ConfigurationRuns(const TrainOptions& options, const MpiGroup& group, Communicator* comm,
                    const DeviceChoice& device, std::shared_ptr<InitialModel> model = nullptr, int first_run = 0,
                    int end_run = -1);
  ~ConfigurationRuns();
  ConfigurationRuns(const ConfigurationRuns&) = delete;
  ConfigurationRuns& operator=(const ConfigurationRuns&) = delete;

  void run_next(const RunDoneCallback& on_run_done);  // collective over the group
  void run_remaining(const RunDoneCallback& on_run_done) {
    while (!done()) run_next(on_run_done);
  }
  bool done() const { return next_ >= end_; }
  // Complete on the group's rank 0 once done().
  ConfigRecord take_record() { return std::move(record_); }

 private:
  TrainOptions options_;
  const MpiGroup& group_;
  Communicator* comm_;
  DeviceChoice device_;
  std::shared_ptr<InitialModel> model_;
  std::unique_ptr<DeviceSampler> sampler_;
  ConfigRecord record_;
  std::vector<float> gpu_cpu_affinity_;  // NVML's cores close to this rank's GPU, read once
  int first_run_ = 0;  // the run that also times the gradients (SessionSetup::gradient_timing)
  int next_ = 0;
  int end_ = 0;
};

// The torch device of a rank's DeviceChoice.
torch::Device torch_device_of(const DeviceChoice& device);

// The model a configuration's runs start from (trainer/engine/initial_model.hpp).
std::shared_ptr<InitialModel> make_initial_model(const TrainOptions& options, const DeviceChoice& device);

}  // namespace ddpscale
