#include "trainer/study/step_probe.hpp"

#include "trainer/engine/training_session.hpp"

#include <set>

namespace ddpscale {

std::string probe_key(const TrainOptions& o) {
  return o.model + "|" + o.input_shape + "|" + o.input + "|" + std::to_string(batch_per_rank(o, o.world_size)) + "|" +
         o.dtype + "|" + o.optimizer + "|" + o.optimizer_impl;
}

double probe_step_seconds(const TrainOptions& options, const DeviceChoice& device, int steps) {
  EngineOptions e = engine_options(options, 1, 0);
  e.batch_per_rank = batch_per_rank(options, options.world_size);  // the per-rank work of its world size
  e.exec = "eager";  // a graph's capture would cost more than the steps it times
  e.warmup = 1;
  e.steps = steps;
  e.phase_timing = false;
  SessionSetup setup;
  setup.options = e;
  setup.device = device.cuda ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device.device_index))
                             : torch::Device(torch::kCPU);
  TrainingSession session(setup);
  RankTimings timings;
  std::vector<float> losses;
  session.run(timings, losses);
  return timings.wall_seconds / steps;
}

std::vector<MeasuredConfiguration> probed_run_times(const std::vector<PlannedConfiguration>& plan,
                                                    size_t configurations,
                                                    const std::function<double(size_t)>& step_seconds) {
  std::vector<MeasuredConfiguration> measured;
  std::set<std::string> seen;  // one entry per shape: every launch's share has the same run time
  for (size_t i = 0; i < plan.size(); ++i) {
    const PlannedConfiguration& p = plan[i];
    if (p.runs_left == 0 || !seen.insert(p.shape.id).second) continue;
    MeasuredConfiguration m;
    m.shape = p.shape;
    m.run_seconds = {step_seconds(i % configurations) * p.shape.steps_per_run};
    measured.push_back(m);
  }
  return measured;
}

}  // namespace ddpscale
