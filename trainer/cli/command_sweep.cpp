#include <cxxopts.hpp>

#include "launch/cli_util.hpp"
#include "launch/invocation.hpp"
#include "cli/commands.hpp"
#include "cli/help_option.hpp"
#include "launch/launch_prologue.hpp"
#include "mpi_context.hpp"
#include "study/sweep_runner.hpp"
#include "study/sweep_spec.hpp"

namespace ddpscale {

int run_sweep_command(int argc, char** argv) {
  cxxopts::Options options(argv[0], "Runs a whole study (models x batch sizes x world sizes x ...) from a YAML spec "
                                    "in one launch, one HDF5 file per configuration.");
  options.add_options()
      ("spec", "the sweep spec (YAML; keys in experiments/README.md)", cxxopts::value<std::string>())
      ("o,out", "study folder (created; with --resume or --overwrite when it holds a study)",
       cxxopts::value<std::string>()->default_value("study"))
      ("resume", "continue a study in --out: skip configurations already complete with the same settings")
      ("overwrite", "measure every configuration again, replacing what --out holds")
      ("nccl-profile", "which of the spec's NCCL profiles this launch runs", cxxopts::value<std::string>()->default_value(""))
      ("no-commbench", "do not store an allreduce bandwidth sweep with the study")
      ("dry-run", "list the configurations in run order and the steps they will train, then exit (measures nothing: "
                  "needs no mpirun and no --out)")
      ("no-memory-check", "skip the memory pre-flight, which refuses the spec before the first run when a "
                          "configuration's estimated training memory (weights, gradients, optimizer state, gradient "
                          "buckets, activations) exceeds the free memory (also: memory_check: false in the spec)");
  add_launch_options(options, "", "auto, cpu or cuda");
  options.add_options()("h,help", "show this help");
  options.parse_positional({"spec"});
  options.positional_help("SPEC.yaml");
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
    sweep.dry_run = args.count("dry-run") > 0;
    sweep.memory_check = args.count("no-memory-check") == 0;
    sweep.spec_path = args["spec"].as<std::string>();
    sweep.out_dir = args["out"].as<std::string>();
    sweep.resume = args.count("resume") > 0;
    sweep.overwrite = args.count("overwrite") > 0;
    sweep.nccl_profile = args["nccl-profile"].as<std::string>();
    sweep.commbench = args.count("no-commbench") == 0;
    sweep.command_line = typed_command_line(argc, argv);
    launch = launch_options_from(args);
    spec = load_sweep_spec(sweep.spec_path);
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
