// ddpscale: does data-parallel training on N GPUs beat one, for this model and batch
// size, and why not? This file only dispatches to the subcommands.
#include <csignal>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "trainer/cli/commands.hpp"
#include "trainer/process/invocation.hpp"
#include "trainer/process/system_report.hpp"

// HDF5 is linked through the run store (results/); only this one switch is needed here.
extern "C" int H5dont_atexit(void);

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

const std::vector<Command>& commands() {
  static const std::vector<Command> all = {
      {"info", ddpscale::run_info_command, "JSON: hosts, ranks, library versions, GPUs and their links"},
      {"commbench", ddpscale::run_commbench_command, "allreduce bandwidth sweep (nccl-tests' all_reduce_perf)"},
      {"models", ddpscale::run_models_command, "the models: parameter counts, layers, memory"},
      {"train", ddpscale::run_train_command, "train one configuration data-parallel, timing every phase"},
      {"sweep", ddpscale::run_sweep_command, "run a whole study from a YAML spec into HDF5 files (resumable)"},
      {"study", ddpscale::run_study_command, "one model on 1 vs N ranks at some batch sizes: spec, study and report"},
      {"report", ddpscale::run_report_command, "study folders -> report (md, html, plots, csv, json); no MPI, no GPU"},
      {"compare", ddpscale::run_compare_command, "two studies, configuration by configuration: changed? agree?"},
      {"predict", ddpscale::run_predict_command, "predicted scaling to more GPUs and nodes, with intervals"},
      {"import-pytorch", ddpscale::run_import_pytorch_command,
       "PyTorch DDP's runs (scripts/gpu/pytorch_ddp_reference.py) into a study, beside ddpscale's"},
  };
  return all;
}

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "ddpscale: measures whether data-parallel training on N GPUs beats one, and why not.\n\n"
               "Usage: [mpirun -np N] ddpscale <command> [options]   (ddpscale <command> --help for its options)\n"
               "       ddpscale --version\n\n"
               "Commands:\n");
  for (const auto& c : commands()) std::fprintf(out, "  %-14s %s\n", c.name, c.summary);
  std::fprintf(out, "\nDocs: README.md and docs/ in the source tree.\n");
}

}  // namespace

// glibc's malloc starts by serving blocks of 128 KiB and up with mmap and returning freed
// heap tops to the kernel, and raises both thresholds as it sees larger blocks freed. Until
// it has, a training step's tensors are mapped, faulted in and handed back on every step:
// on 2 CPU ranks the first run of each process spent 5.6x as long per step (mlp-medium b32,
// 11.2 against 2.0 ms, hundreds of brk calls a second, 40% system time) and the runs after
// it did not. Fixed thresholds give every run the steady state at once, so no run measures
// the allocator learning. Glibc only; elsewhere nothing changes.
namespace {
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
  // Past a file-size limit (ulimit -f, a batch system's quota) the kernel sends SIGXFSZ,
  // whose default action kills the process without a word. Ignored, the write fails with
  // EFBIG instead, and the run store reports the file it could not write (and removes its
  // temporary file), like any other write error.
  if (std::signal(SIGXFSZ, SIG_IGN) == SIG_ERR) std::perror("ddpscale: signal(SIGXFSZ, SIG_IGN)");
  // After a failed write (disk full, EFBIG) HDF5 1.10 keeps the file half-open when its
  // H5Fclose fails, and its own clean-up at exit then crashes on it (SIGSEGV in
  // H5F__close_cb), turning an error already reported with the file's name into a
  // segfault. The run store closes every file it opens itself, so HDF5's exit-time clean-up
  // has nothing left to do; it is switched off (this must come before any other HDF5 call).
  if (H5dont_atexit() < 0) std::fprintf(stderr, "ddpscale: warning: H5dont_atexit failed\n");
  keep_the_heap_steady();
  if (argc >= 2 && !std::strcmp(argv[1], "--version")) {
    std::printf("ddpscale %s (commit %s)\n", ddpscale::build_version().c_str(), ddpscale::build_git_commit().c_str());
    return 0;
  }
  ddpscale::remember_program_path(argv[0]);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_usage(stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const auto& c : commands()) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    std::string program = std::string("ddpscale ") + c.name;
    std::vector<char*> args(argv + 1, argv + argc);
    args[0] = program.data();
    // argv[argc] must be NULL: started without mpirun, OpenMPI's MPI_Init walks argv to the
    // NULL to build the singleton's command line, and without it read past the end (SIGSEGV).
    args.push_back(nullptr);
    return c.run(static_cast<int>(args.size()) - 1, args.data());
  }
  std::fprintf(stderr, "ddpscale: unknown command '%s'\n\n", argv[1]);
  print_usage(stderr);
  return 2;
}
