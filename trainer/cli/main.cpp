// ddpscale: does data-parallel training on N GPUs beat one, for this model and batch
// size, and why not? This program links no LibTorch: it runs the commands that only read
// studies (report, compare, predict) itself, and hands every other command to ddpscale-torch
// beside it, which loads LibTorch (about a second of CPU time per process, which a report
// has no use for and a test suite pays hundreds of times).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "trainer/cli/command_list.hpp"
#include "trainer/cli/commands.hpp"
#include "trainer/command_line/invocation.hpp"

namespace {

constexpr const char* kLibTorchProgram = "ddpscale-torch";

// The folder this executable was started from, however it was named on the command line.
std::string own_folder() {
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0) return ".";
  const std::string self(path, static_cast<size_t>(length));
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? "." : self.substr(0, slash);
}

// exec, not a child: the process keeps its PID, its arguments (argv[0] as typed, which a
// study records and relaunches with), its signals and, under mpirun, its place in the job.
[[noreturn]] void run_in_libtorch_program(char** argv) {
  const std::string program = own_folder() + "/" + kLibTorchProgram;
  execv(program.c_str(), argv);
  const int error = errno;
  std::fprintf(stderr,
               "ddpscale: cannot start %s, which runs `ddpscale %s` (the commands that load LibTorch): %s; it is "
               "built beside ddpscale: cmake --build BUILD_DIR --target ddpscale\n",
               program.c_str(), argv[1], std::strerror(error));
  std::exit(127);
}

int (*command_run_here(const char* name))(int, char**) {
  if (!std::strcmp(name, "report")) return ddpscale::run_report_command;
  if (!std::strcmp(name, "compare")) return ddpscale::run_compare_command;
  if (!std::strcmp(name, "predict")) return ddpscale::run_predict_command;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  ddpscale::prepare_process();
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    ddpscale::print_usage(stdout);
    return argc < 2 ? 2 : 0;
  }
  const ddpscale::CommandEntry* command = ddpscale::find_command(argv[1]);
  if (!std::strcmp(argv[1], "--version") || (command && command->loads_libtorch)) run_in_libtorch_program(argv);
  if (!command) {
    std::fprintf(stderr, "ddpscale: unknown command '%s'\n\n", argv[1]);
    ddpscale::print_usage(stderr);
    return 2;
  }
  ddpscale::remember_program_path(argv[0]);
  return ddpscale::run_subcommand(command_run_here(command->name), command->name, argc, argv);
}
