// A study of several launches from one command. `mpirun -np N ddpscale sweep SPEC` with
// `launches: L > 1` does not measure in the processes mpirun started: they become the
// driver. Rank 0 starts each launch as a fresh job of the same shape (N ranks on the same
// hosts, the same launcher), `ddpscale sweep SPEC --launch k ...`, waits for it and goes on
// to the next; the other ranks wait beside it without spinning. Fresh processes, NCCL
// communicators and CUDA contexts are what makes a launch a launch (docs/methodology.md,
// "Launches"); nested jobs are the way a running MPI job gets them everywhere mpirun runs
// (MPI_Comm_spawn, the other way, hung on its third spawn under Open MPI 4.1).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace ddpscale {

class MpiContext;
struct SweepOptions;

// The runs of a configuration that launch `launch` (0-based) of `launches` takes, [first,
// end) of `runs`: runs split as evenly as they go, earlier launches taking one more where
// they do not divide.
struct LaunchShare {
  int first = 0;
  int end = 0;
};
LaunchShare launch_share(int runs, int launch, int launches);

// The launcher's words for a launch: `launcher` split on blanks (default: mpirun
// --bind-to none; an mpirun-style launcher that takes -np and --host), with
// --allow-run-as-root added for an MPI launcher run as root, then -np N and, when the ranks
// span several hosts, --host h1:n1,h2:n2 in rank order. Exposed for tests.
std::vector<std::string> launch_command(const std::string& launcher, const std::vector<std::string>& rank_hosts,
                                        const std::vector<std::string>& sweep_args);

// The environment for a nested launch: this process's, without the variables the running
// MPI job gave its ranks (Open MPI's OMPI_COMM_WORLD_*, its ORTE/PMIx contact points,
// SLURM's step ids), which would make the nested launcher think it runs inside a job;
// settings a user makes (OMPI_MCA_btl, OMPI_ALLOW_RUN_AS_ROOT, NCCL_*) stay. Exposed for tests.
std::vector<std::string> launch_environment(const std::vector<std::string>& environment);

// Runs `command` (its first word found as execvp finds it) with exactly `environment`
// (NAME=value each), its output the caller's, and waits for it. Returns its exit status,
// 128 + the signal that killed it, or 127 when it cannot be started (the reason on stderr).
// While it runs, the SIGINT or SIGTERM drive_launches' handler receives goes on to it; it
// dies with the calling process. Exposed for tests.
int run_launch(const std::vector<std::string>& command, const std::vector<std::string>& environment);

// The variable through which the driver gives each launch the command the user typed, so
// the study records that one instead of the nested launch's.
constexpr const char* kStudyCommandVariable = "DDPSCALE_STUDY_COMMAND";

// What rank 0 learns of launch k just before it would start it, from what the folder holds
// then: whether it has anything to measure, and why not.
struct LaunchOutlook {
  bool needed = true;
  // Nothing left for this launch or any later one: every comparison is already as precise
  // as the spec's target_half_width asks (the driver stops there).
  bool study_precise = false;
  std::string note;   // printed after "launch k of L: " (why not needed, or what it measures)
  std::string error;  // the folder cannot be read or written: the study stops with exit code 2
};
using LaunchPlanner = std::function<LaunchOutlook(int launch)>;

// Runs every launch of the study that `plan` says is needed, in order, and returns the
// sweep's exit code: 0, 3 when every launch ran but some configuration had no successful
// run, 2 when `plan` reports an error, or the first other failing launch's code (130 when
// stopped by SIGINT or SIGTERM, which reach the running launch). `plan` runs on rank 0
// only, each time right before its launch, so it sees what the launches before wrote.
// Collective over the launched ranks.
int drive_launches(const MpiContext& mpi, const SweepOptions& options, int launches, const LaunchPlanner& plan);

}  // namespace ddpscale
