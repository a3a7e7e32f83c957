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
#include <exception>
#include <string>

#include "trainer/cli/command_list.hpp"
#include "trainer/command_line/invocation.hpp"

namespace {

constexpr const char* kLibTorchProgram = "ddpscale-torch";

// exec, not a child: the process keeps its PID, its arguments (argv[0] as typed, which a
// study records and relaunches with), its signals and, under mpirun, its place in the job.
[[noreturn]] ddpscale::CommandRun run_in_libtorch_program(const char* name, char** argv) {
  std::string program = kLibTorchProgram;
  std::string cause;
  try {
    const std::string self = ddpscale::this_executable();
    program = self.substr(0, self.rfind('/') + 1) + kLibTorchProgram;
    execv(program.c_str(), argv);
    cause = std::strerror(errno);
  } catch (const std::exception& e) {
    cause = e.what();
  }
  std::fprintf(stderr,
               "ddpscale: cannot start %s, which runs `ddpscale %s` (the commands that load LibTorch): %s; it is "
               "built beside ddpscale: cmake --build BUILD_DIR --target ddpscale\n",
               program.c_str(), name, cause.c_str());
  std::exit(127);
}

}  // namespace

int main(int argc, char** argv) {
  ddpscale::prepare_process();
  if (argc >= 2 && !std::strcmp(argv[1], "--version")) run_in_libtorch_program(argv[1], argv);
  return ddpscale::run_command_line(argc, argv, run_in_libtorch_program);
}
