// The host-drift calibration every run starts with (results/analysis/host_drift.hpp reads it): fixed
// work that never changes, timed, so that a change in its time is a change in the host (clock
// frequency, a neighbour's job, thermal limits), not in the model. Outside the measured
// steps: it adds about a millisecond before each run and nothing inside one.
#pragma once
#include <torch/torch.h>

namespace ddpscale {

struct CalibrationReading {
  double host_us = std::numeric_limits<double>::quiet_NaN();    // fixed host-only loop
  double device_us = std::numeric_limits<double>::quiet_NaN();  // fixed launch-bound sequence; NaN on CPU
};

// Medians of a few repetitions each, so one preempted repetition does not move the reading.
CalibrationReading measure_calibration(const torch::Device& device);

}  // namespace ddpscale
