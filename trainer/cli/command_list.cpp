#include "trainer/cli/command_list.hpp"

#include "trainer/cli/commands.hpp"
#include "trainer/command_line/invocation.hpp"

#include <csignal>
#include <cstring>
#include <string>
#include <vector>

// HDF5 is linked through the run store (results/); only this one switch is needed here.
extern "C" int H5dont_atexit(void);

namespace ddpscale {
namespace {

const std::vector<CommandEntry>& commands() {
  static const std::vector<CommandEntry> all = {
      {"info", "JSON: hosts, ranks, library versions, GPUs and their links", nullptr},
      {"commbench", "allreduce bandwidth sweep (nccl-tests' all_reduce_perf)", nullptr},
      {"models", "the models: parameter counts, layers, memory", nullptr},
      {"train", "train one configuration data-parallel, timing every phase", nullptr},
      {"sweep", "run a whole study from a YAML spec into HDF5 files (resumable)", nullptr},
      {"study", "one model on 1 vs N ranks at some batch sizes: spec, study and report", nullptr},
      {"report", "study folders -> report (md, html, plots, csv, json); no MPI, no GPU", run_report_command},
      {"compare", "two studies, configuration by configuration: changed? agree?", run_compare_command},
      {"predict", "predicted scaling to more GPUs and nodes, with intervals", run_predict_command},
      {"import-pytorch", "PyTorch DDP's runs (scripts/gpu/pytorch_ddp_reference.py) into a study, beside ddpscale's", nullptr},
  };
  return all;
}

const CommandEntry* find_command(const char* name) {
  for (const CommandEntry& c : commands())
    if (std::strcmp(name, c.name) == 0) return &c;
  return nullptr;
}

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "ddpscale: measures whether data-parallel training on N GPUs beats one, and why not.\n\n"
               "Usage: [mpirun -np N] ddpscale <command> [options]   (ddpscale <command> --help for its options)\n"
               "       ddpscale --version\n\n"
               "Commands:\n");
  for (const CommandEntry& c : commands()) std::fprintf(out, "  %-14s %s\n", c.name, c.summary);
  std::fprintf(out, "\nDocs: README.md and docs/ in the source tree.\n");
}

}  // namespace

void prepare_process() {
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
}

int run_command_line(int argc, char** argv, CommandRun (*libtorch_command)(const char* name, char** argv)) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_usage(stdout);
    return argc < 2 ? 2 : 0;
  }
  const CommandEntry* command = find_command(argv[1]);
  if (!command) {
    std::fprintf(stderr, "ddpscale: unknown command '%s'\n\n", argv[1]);
    print_usage(stderr);
    return 2;
  }
  remember_program_path(argv[0]);
  const CommandRun run = command->run_without_libtorch ? command->run_without_libtorch : libtorch_command(command->name, argv);
  std::string program = std::string("ddpscale ") + command->name;
  std::vector<char*> args(argv + 1, argv + argc);
  args[0] = program.data();
  // argv[argc] must be NULL: started without mpirun, OpenMPI's MPI_Init walks argv to the
  // NULL to build the singleton's command line, and without it read past the end (SIGSEGV).
  args.push_back(nullptr);
  return run(static_cast<int>(args.size()) - 1, args.data());
}

}  // namespace ddpscale
