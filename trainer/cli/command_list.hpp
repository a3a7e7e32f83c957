// The subcommands of ddpscale as --help lists them, and which of the two programs runs each.
// `ddpscale` itself links no LibTorch: report, compare and predict, which only read studies,
// run in it and start in milliseconds; every other command loads LibTorch, so `ddpscale`
// hands it to `ddpscale-torch` beside it (exec, same process, same arguments).
#pragma once
#include <cstdio>

namespace ddpscale {

struct CommandEntry {
  const char* name;
  const char* summary;
  bool loads_libtorch;  // run by ddpscale-torch; the others by ddpscale itself
};

// In --help's order; null for an unknown name.
const CommandEntry* find_command(const char* name);
void print_usage(std::FILE* out);

// What every ddpscale process does before anything else (signals, HDF5's exit-time clean-up).
void prepare_process();

// Runs `run` on main's arguments after the command name, with argv[0] renamed "ddpscale
// <name>" (the help texts' program) and the NULL argv[argc] that OpenMPI's singleton start
// relies on.
int run_subcommand(int (*run)(int, char**), const char* name, int argc, char** argv);

}  // namespace ddpscale
