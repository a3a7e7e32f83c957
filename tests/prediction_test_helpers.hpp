// Hand-made measured configurations for the prediction tests.
#pragma once
#include "prediction/scaling_prediction.hpp"
#include "results/statistics/statistics.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ddpscale {

inline PhaseStats stats_of(const std::vector<double>& values) {
  PhaseStats s;
  s.n = values.size();
  s.mean = mean(values);
  s.sd = sample_sd(values);
  return s;
}

// A configuration whose runs took these steps and backward passes (run means, us); the
// throughput of each run follows from its step.
inline MeasuredConfig measured_config(const std::string& model, int64_t parameters, int64_t batch_per_rank,
                                      int world_size, const std::vector<double>& steps,
                                      const std::vector<double>& backwards) {
  MeasuredConfig c;
  c.params.model = model;
  c.params.parameters = parameters;
  c.params.batch_per_rank = batch_per_rank;
  c.params.global_batch = batch_per_rank * world_size;
  c.params.world_size = world_size;
  c.params.bucket_mb = 25;
  c.params.overlap = true;
  c.id = model + "_w" + std::to_string(world_size);
  std::vector<double> throughputs;
  for (double step : steps) throughputs.push_back(static_cast<double>(c.params.global_batch) * 1e6 / step);
  c.step_us = stats_of(steps);
  c.backward_us = stats_of(backwards);
  c.throughput = stats_of(throughputs);
  return c;
}

}  // namespace ddpscale
