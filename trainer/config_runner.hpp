// Runs every run of one configuration on a group of ranks and assembles its record:
// rank 0 ends up with all ranks' timings; failures (an exception on any rank, a
// non-finite loss, replicas that diverged) mark that run failed instead of ending the study.
#pragma once
#include <functional>

#include "communicator.hpp"
#include "device_choice.hpp"
#include "run_record.hpp"
#include "train_options.hpp"

namespace ddpscale {

class MpiGroup;

using RunDoneCallback = std::function<void(const RunRecord&)>;

// Collective over `group` (the configuration's ranks). comm is null for world size 1.
// The returned record is complete on the group's rank 0.
ConfigRecord run_configuration(const TrainOptions& options, const MpiGroup& group, Communicator* comm,
                               const DeviceChoice& device, const RunDoneCallback& on_run_done);

}  // namespace ddpscale
