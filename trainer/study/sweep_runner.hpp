// `ddpscale sweep`: a whole study in one launch. World sizes are sub-groups of the
// launched ranks (a world-1 configuration runs on rank 0 while the others wait), each
// configuration's runs are written by rank 0 to their own HDF5 file, renamed into place
// only when complete, so an interrupted study resumes where it stopped.
#pragma once
#include "trainer/study/sweep_spec.hpp"

#include <string>
#include <vector>

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
  bool dry_run = false;      // list the configurations and exit: nothing measured or written
  // --dry-run with no run stored in --out: at most this long timing steps for its estimate (0: none).
  double probe_seconds = 30;
  bool memory_check = true;  // refuse configurations that cannot fit before the first run (--no-memory-check: false)
  std::string command_line;
  // Which launch this process measures (0-based; --launch counts from 1), -1: every launch,
  // driving them as nested jobs where the study has more than one (study/launch_driver.hpp).
  int launch = -1;
  // The driver of the study started this launch and starts the later ones after it, so the
  // progress estimate counts their runs too.
  bool later_launches_follow = false;
  // How a launch is started (--launcher): the launcher and its options before -np.
  std::string launcher = "mpirun --bind-to none";
  // The options each launch is given as they were given here (--device, --comm-timeout, ...).
  std::vector<std::string> launch_args;
};

// Exit codes: 0 all configurations done (failed runs are recorded, not fatal), 1 a file
// could not be written (the message names it), 2 bad input, 3 done but some configuration
// has no successful run at all (recorded, listed by the report), 130 interrupted: on SIGINT or
// SIGTERM every rank leaves at once (rank 0 first finishes a file it is writing), the
// configuration under way is abandoned, finished ones stay, --resume continues. Under
// mpirun, signalling mpirun itself makes it exit 1 whatever the ranks return; signalling the
// ranks (as srun and SLURM pre-emption do) gives 130 (study/stop_signals.hpp; docs/reliability.md has
// the details).
int run_sweep(const MpiContext& mpi, const DeviceChoice& device, const SweepSpec& spec, const SweepOptions& options);

}  // namespace ddpscale
