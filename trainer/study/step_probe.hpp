// `ddpscale sweep --dry-run`'s estimate where no run of the study is stored yet: a few steps
// of each configuration's model and per-rank batch, timed on this process alone (one rank,
// no communication), stand in for the runs the sweep will time. A probe cannot see the
// communication of N ranks nor ranks sharing cores, so the estimate it gives is a floor for
// those configurations, and the dry run says so (docs/methodology.md, "Progress and its
// estimate").
#pragma once
#include "trainer/process/device_choice.hpp"
#include "trainer/study/sweep_eta.hpp"
#include "trainer/study/train_options.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ddpscale {

// What a probe is keyed by: configurations of the same model, per-rank batch, dtype and
// optimizer train the same step on one rank, whatever their world size.
std::string probe_key(const TrainOptions& options);

// The seconds of one step of `options` at its per-rank batch on this process alone: one
// eager warm-up step, then `steps` timed (wall clock, the device synchronised at the end).
double probe_step_seconds(const TrainOptions& options, const DeviceChoice& device, int steps = 2);

// A run of each planned configuration, estimated as its steps (warm-up + measured) at the
// probed step time of its key: one MeasuredConfiguration per planned shape with runs left,
// for estimate_seconds_left. `step_seconds(i)` gives configuration i's probed step time
// (the caller probes each key once); configuration i of `plan` is options[i % options.size()]
// (the plan lists every launch's share of the same configurations).
std::vector<MeasuredConfiguration> probed_run_times(const std::vector<PlannedConfiguration>& plan,
                                                    size_t configurations,
                                                    const std::function<double(size_t)>& step_seconds);

}  // namespace ddpscale
