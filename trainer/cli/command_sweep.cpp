#include "comm/mpi_context.hpp"
#include "results/store/text_io.hpp"
#include "trainer/cli/commands.hpp"
#include "trainer/command_line/help_option.hpp"
#include "trainer/command_line/cli_util.hpp"
#include "trainer/command_line/invocation.hpp"
#include "trainer/process/launch_prologue.hpp"
#include "trainer/study/launch_driver.hpp"
#include "trainer/study/sweep_runner.hpp"
#include "trainer/study/sweep_spec.hpp"

#include <cxxopts.hpp>

#include <cstdlib>

namespace ddpscale {

// The options every launch of a study of several launches is given as they were given here.
static std::vector<std::string> launch_args_as_given(const cxxopts::ParseResult& args) {
  std::vector<std::string> given;
  for (const char* flag : {"no-commbench", "no-memory-check", "allow-shared-gpu"})
    if (args.count(flag)) given.push_back(std::string("--") + flag);
  for (const char* valued : {"nccl-profile", "device"})
    if (args.count(valued)) given.insert(given.end(), {std::string("--") + valued, args[valued].as<std::string>()});
  if (args.count("launches")) given.insert(given.end(), {"--launches", std::to_string(args["launches"].as<int>())});
  if (args.count("comm-timeout")) given.insert(given.end(), {"--comm-timeout", std::to_string(args["comm-timeout"].as<int>())});
  return given;
}

static cxxopts::Options sweep_command_options(const char* program) {
  cxxopts::Options options(program, "Runs a whole study (models x batch sizes x world sizes x ...) from a YAML spec, "
                                    "over the spec's launches of fresh processes (launches:), one HDF5 file per "
                                    "configuration and launch.");
  options.add_options()
      ("spec", "the sweep spec (YAML; keys in experiments/README.md)", cxxopts::value<std::string>())
      ("o,out", "study folder (created; with --resume or --overwrite when it holds a study)",
       cxxopts::value<std::string>()->default_value("study"))
      ("resume", "continue a study in --out: skip configurations already complete with the same settings")
      ("overwrite", "measure every configuration again, replacing what --out holds")
      ("nccl-profile", "which of the spec's NCCL profiles this launch runs", cxxopts::value<std::string>()->default_value(""))
      ("no-commbench", "do not store an allreduce bandwidth sweep with the study")
      ("launches",
       "launches of fresh processes that share each configuration's runs (replaces the spec's launches:; with its "
       "target_half_width, the most the study runs)",
       cxxopts::value<int>())
      ("launch", "measure only this launch (1..launches) in the processes started; without it, a study of several "
                 "launches starts each as fresh processes itself", cxxopts::value<int>())
      ("launcher", "how each launch of a study of several launches is started: the launcher and its options before -np",
       cxxopts::value<std::string>()->default_value("mpirun --bind-to none"))
      ("dry-run", "list the configurations in run order and the steps they will train, with an estimate of the time "
                  "they take from the runs a study in --out measured, or where it holds none from 2 steps of each model "
                  "and batch timed on this process alone (a floor for N ranks), then exit (trains no run: needs no "
                  "mpirun)")
      ("probe-seconds", "with --dry-run and nothing stored in --out: the most seconds spent timing steps for the "
                        "estimate, cheapest first (0: no estimate)",
       cxxopts::value<double>()->default_value("30"))
      ("no-memory-check", "skip the memory pre-flight, which refuses the spec before the first run when a "
                          "configuration's estimated training memory (weights, gradients, optimizer state, gradient "
                          "buckets, activations) exceeds the free memory (also: memory_check: false in the spec)");
  add_launch_options(options, "", "auto, cpu or cuda");
  options.add_options()("h,help", "show this help");
  options.parse_positional({"spec"});
  options.positional_help("SPEC.yaml");
  return options;
}

// The sweep's options from the parsed command line, and the spec they name (read and
// checked); throws UsageError or SpecError on what is wrong.
static void read_sweep_args(const cxxopts::ParseResult& args, int argc, char** argv, SweepOptions& sweep,
                            SweepSpec& spec, LaunchOptions& launch) {
  sweep.dry_run = args.count("dry-run") > 0;
  sweep.probe_seconds = args["probe-seconds"].as<double>();
  if (!(sweep.probe_seconds >= 0))
    throw UsageError("--probe-seconds must be 0 or more (0: no estimate), got " +
                     round_trip_text(sweep.probe_seconds));
  sweep.memory_check = args.count("no-memory-check") == 0;
  sweep.spec_path = args["spec"].as<std::string>();
  sweep.out_dir = args["out"].as<std::string>();
  require_output_folder("--out", sweep.out_dir);
  sweep.resume = args.count("resume") > 0;
  sweep.overwrite = args.count("overwrite") > 0;
  sweep.nccl_profile = args["nccl-profile"].as<std::string>();
  sweep.commbench = args.count("no-commbench") == 0;
  sweep.command_line = typed_command_line(argc, argv);
  // A launch started by the driver of a study records the command the user typed.
  if (const char* study_command = std::getenv(kStudyCommandVariable); study_command && args.count("launch")) {
    sweep.command_line = study_command;
    sweep.later_launches_follow = true;
  }
  if (args.count("launch")) {
    const int launch_number = args["launch"].as<int>();
    if (launch_number < 1) throw UsageError("--launch counts from 1, got " + std::to_string(launch_number));
    sweep.launch = launch_number - 1;
  }
  sweep.launcher = args["launcher"].as<std::string>();
  if (sweep.launcher.find_first_not_of(" \t") == std::string::npos)
    throw UsageError("--launcher is empty; give the launcher, e.g. --launcher \"mpirun --bind-to none\"");
  sweep.launch_args = launch_args_as_given(args);
  launch = launch_options_from(args);
  spec = load_sweep_spec(sweep.spec_path);
  if (args.count("launches")) {
    spec.launches = args["launches"].as<int>();
    if (spec.launches < 1) throw UsageError("--launches must be 1 or more, got " + std::to_string(spec.launches));
  }
}

int run_sweep_command(int argc, char** argv) {
  cxxopts::Options options = sweep_command_options(argv[0]);
  SweepOptions sweep;
  SweepSpec spec;
  LaunchOptions launch;
  cxxopts::ParseResult args;
  const std::string program = argv[0];
  // Every rank reads and validates the spec itself; the ranks agree on the verdict before
  // any other collective (any_rank_has_usage_error): a bad spec stops all ranks alike, a
  // spec missing on one node names that rank, and no rank waits for one that left.
  std::string usage_error;
  try {
    args = options.parse(argc, argv);
    if (printed_help(options, args, "mpirun -np 2 ddpscale sweep experiments/quick.yaml --out studies/quick")) return 0;
    if (!args.count("spec")) throw UsageError("give the sweep spec: ddpscale sweep SPEC.yaml --out DIR");
    read_sweep_args(args, argc, argv, sweep, spec, launch);
  } catch (const std::exception& e) {
    usage_error = usage_error_text(e, argc, argv, program);
  }
  MpiContext mpi(&argc, &argv);
  // With the launcher in front, so that the report's "Commands" section runs as printed.
  sweep.command_line = launch_command_line(sweep.command_line, mpi.size());
  const auto device = agree_on_device(mpi, program, launch, usage_error);
  if (!device) return 2;
  return run_sweep(mpi, *device, spec, sweep);
}

}  // namespace ddpscale
