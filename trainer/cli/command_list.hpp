// The subcommands of ddpscale as --help lists them, and which of the two programs runs each.
// `ddpscale` itself links no LibTorch: report, compare and predict, which only read studies,
// run in it and start in milliseconds; every other command loads LibTorch, so `ddpscale`
// hands it to `ddpscale-torch` beside it (exec, same process, same arguments).
#pragma once

namespace ddpscale {

using CommandRun = int (*)(int argc, char** argv);

struct CommandEntry {
  const char* name;
  const char* summary;
  // report, compare, predict: run by either program. Null: the command loads LibTorch and
  // runs in ddpscale-torch only.
  CommandRun run_without_libtorch;
};

// What every ddpscale process does before anything else (signals, HDF5's exit-time clean-up).
void prepare_process();

// main() of both programs after --version: the usage on --help (or no command), an unknown
// command refused, and the command argv[1] names run with argv[0] renamed "ddpscale <name>"
// (the help texts' program) and the NULL argv[argc] that OpenMPI's singleton start relies
// on. A command that loads LibTorch is run by `libtorch_command`, which returns its run
// function (ddpscale-torch) or does not return (ddpscale hands it over). Returns the exit code.
int run_command_line(int argc, char** argv, CommandRun (*libtorch_command)(const char* name, char** argv));

}  // namespace ddpscale
