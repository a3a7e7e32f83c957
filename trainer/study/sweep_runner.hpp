// `ddpscale sweep`: a whole study in one launch. World sizes are sub-groups of the
// launched ranks (a world-1 configuration runs on rank 0 while the others wait), each
// configuration's runs are written by rank 0 to their own HDF5 file, renamed into place
// only when complete, so an interrupted study resumes where it stopped.
#pragma once
#include "trainer/study/sweep_options.hpp"
#include "trainer/study/sweep_spec.hpp"

namespace ddpscale {

class MpiContext;
struct DeviceChoice;

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
