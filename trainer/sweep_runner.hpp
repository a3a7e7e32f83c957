// `ddpscale sweep`: a whole study in one launch. World sizes are sub-groups of the
// launched ranks (a world-1 configuration runs on rank 0 while the others wait), each
// configuration's runs are written by rank 0 to their own HDF5 file, renamed into place
// only when complete, so an interrupted study resumes where it stopped.
#pragma once
#include <string>

#include "sweep_spec.hpp"

namespace ddpscale {

class MpiContext;
struct DeviceChoice;

struct SweepOptions {
  std::string spec_path;
  std::string out_dir;
  bool resume = false;
  bool overwrite = false;
  std::string nccl_profile;  // which of the spec's profiles this launch runs ("" = the only one)
  bool commbench = true;     // store an allreduce sweep with the study
  std::string command_line;
};

// Exit codes: 0 all configurations done (failed runs are recorded, not fatal), 2 bad
// input, 130 interrupted (SIGINT/SIGTERM; --resume continues).
int run_sweep(const MpiContext& mpi, const DeviceChoice& device, const SweepSpec& spec, const SweepOptions& options);

}  // namespace ddpscale
