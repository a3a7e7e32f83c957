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
#include "trainer/command_line/invocation.hpp"
#include "trainer/process/system_report.hpp"

namespace {

using Run = int (*)(int, char**);

Run command_run(const std::string& name) {
  static const std::map<std::string, Run> runs = {
      {"info", ddpscale::run_info_command},       {"commbench", ddpscale::run_commbench_command},
      {"models", ddpscale::run_models_command},   {"train", ddpscale::run_train_command},
      {"sweep", ddpscale::run_sweep_command},     {"study", ddpscale::run_study_command},
      {"report", ddpscale::run_report_command},   {"compare", ddpscale::run_compare_command},
      {"predict", ddpscale::run_predict_command}, {"import-pytorch", ddpscale::run_import_pytorch_command},
  };
  const auto found = runs.find(name);
  return found == runs.end() ? nullptr : found->second;
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
  ddpscale::remember_program_path(argv[0]);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    ddpscale::print_usage(stdout);
    return argc < 2 ? 2 : 0;
  }
  const ddpscale::CommandEntry* command = ddpscale::find_command(argv[1]);
  if (!command) {
    std::fprintf(stderr, "ddpscale: unknown command '%s'\n\n", argv[1]);
    ddpscale::print_usage(stderr);
    return 2;
  }
  return ddpscale::run_subcommand(command_run(command->name), command->name, argc, argv);
}
