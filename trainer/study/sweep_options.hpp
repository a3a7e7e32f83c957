// What one `ddpscale sweep` command asks for beyond its spec: where results go, which launch
// and NCCL profile this process measures, and how a driver starts the later launches. Its own
// header, so that the units of a sweep (planning, estimate, launch driver) name it without
// depending on the runner.
#pragma once
#include <string>
#include <vector>

namespace ddpscale {

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

}  // namespace ddpscale
