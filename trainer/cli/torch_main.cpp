// ddpscale-torch: the ddpscale commands that load LibTorch (train, sweep, study, models,
// commbench, info, import-pytorch), started by `ddpscale` with the user's arguments; it runs
// report, compare and predict too, as `study` ends with its report. main.cpp says why there
// are two programs.
#include <cstdio>  // first: it defines __GLIBC__
#include <cstring>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <map>
#include <string>

#include "trainer/cli/command_list.hpp"
#include "trainer/cli/commands.hpp"
#include "trainer/process/system_report.hpp"

namespace {

// command_list.cpp names each command; a command it gives no LibTorch-free run is one of these.
ddpscale::CommandRun libtorch_command(const char* name, char**) {
  static const std::map<std::string, ddpscale::CommandRun> runs = {
      {"info", ddpscale::run_info_command},     {"commbench", ddpscale::run_commbench_command},
      {"models", ddpscale::run_models_command}, {"train", ddpscale::run_train_command},
      {"sweep", ddpscale::run_sweep_command},   {"study", ddpscale::run_study_command},
      {"import-pytorch", ddpscale::run_import_pytorch_command},
  };
  return runs.at(name);
}

// glibc's malloc starts by serving blocks of 128 KiB and up with mmap and returning freed
// heap tops to the kernel, and raises both thresholds as it sees larger blocks freed. Until
// it has, a training step's tensors are mapped, faulted in and handed back on every step:
// on 2 CPU ranks the first run of each process spent 5.6x as long per step (mlp-medium b32,
// 11.2 against 2.0 ms, hundreds of brk calls a second, 40% system time) and the runs after
// it did not. Fixed thresholds give every run the steady state at once, so no run measures
// the allocator learning. Glibc only; elsewhere nothing changes.
void keep_the_heap_steady() {
#if defined(__GLIBC__)
  constexpr int kMmapThreshold = 32 * 1024 * 1024;  // glibc's largest for a 64-bit heap
  constexpr int kTrimThreshold = 512 * 1024 * 1024;
  if (mallopt(M_MMAP_THRESHOLD, kMmapThreshold) != 1 || mallopt(M_TRIM_THRESHOLD, kTrimThreshold) != 1)
    std::fprintf(stderr, "ddpscale: warning: mallopt could not fix malloc's thresholds\n");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  ddpscale::prepare_process();
  keep_the_heap_steady();
  if (argc >= 2 && !std::strcmp(argv[1], "--version")) {
    std::printf("ddpscale %s (commit %s)\n", ddpscale::build_version().c_str(), ddpscale::build_git_commit().c_str());
    return 0;
  }
  return ddpscale::run_command_line(argc, argv, libtorch_command);
}
