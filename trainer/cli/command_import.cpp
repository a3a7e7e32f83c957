// `ddpscale import-pytorch STUDY FILE`: PyTorch DDP's runs (scripts/gpu/pytorch_ddp_reference.py's
// output) stored beside ddpscale's in a study folder (results/store/pytorch_import.hpp). Needs no MPI
// and no GPU.
#include "results/store/pytorch_import.hpp"
#include "trainer/cli/commands.hpp"
#include "trainer/command_line/help_option.hpp"
#include "trainer/process/system_report.hpp"

#include <cxxopts.hpp>

#include <iostream>

namespace ddpscale {

int run_import_pytorch_command(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Stores PyTorch DistributedDataParallel's runs of the same models, as scripts/gpu/pytorch_ddp_reference.py "
      "prints them, in a study folder as configurations of the pytorch-ddp engine, each beside its ddpscale twin "
      "(same model file, batch per GPU, world size, dtype). `ddpscale report` then shows both engines' speedups "
      "side by side (docs/own-models.md, \"Beside PyTorch DDP\").");
  options.add_options()
      ("study", "the study folder (ddpscale sweep --out) that holds the ddpscale twins", cxxopts::value<std::string>())
      ("results", "the reference's output: one JSON line per configuration (other lines are passed over)",
       cxxopts::value<std::string>())
      ("launch", "these runs are launch K (1..launches) of the PyTorch side", cxxopts::value<int>()->default_value("1"))
      ("launches", "the PyTorch side's number of launches (one reference process set each)",
       cxxopts::value<int>()->default_value("1"))
      ("h,help", "show this help");
  options.parse_positional({"study", "results"});
  options.positional_help("STUDY RESULTS.jsonl");
  std::string study, results;
  ImportOptions import;
  try {
    const auto args = options.parse(argc, argv);
    if (printed_help(options, args,
                     "python3 scripts/gpu/pytorch_ddp_reference.py --model torchscript:models-out/resnet18.pt "
                     "--input-shape 3x224x224 --classes 1000 --batch 32 > pytorch.jsonl && "
                     "ddpscale import-pytorch studies/mine pytorch.jsonl"))
      return 0;
    if (!args.count("study") || !args.count("results")) {
      std::cerr << "ddpscale import-pytorch: give the study and the reference's output: ddpscale import-pytorch "
                   "STUDY RESULTS.jsonl"
                << std::endl;
      return 2;
    }
    study = args["study"].as<std::string>();
    results = args["results"].as<std::string>();
    import.launches = args["launches"].as<int>();
    import.launch = args["launch"].as<int>() - 1;
    if (import.launches < 1 || import.launch < 0 || import.launch >= import.launches)
      throw cxxopts::exceptions::exception("--launch " + std::to_string(import.launch + 1) + " is not in 1.." +
                                           std::to_string(import.launches) + " (--launches)");
  } catch (const std::exception& e) {
    std::cerr << "ddpscale import-pytorch: " << e.what() << " (see ddpscale import-pytorch --help)" << std::endl;
    return 2;
  }
  try {
    import.git_commit = build_git_commit();
    import.finished_utc = utc_now_iso8601();
    for (const ImportedConfig& c : import_pytorch_runs(study, results, import))
      std::cout << c.id << ": " << c.runs << " run(s) beside " << c.twin_id << " -> " << c.file << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "ddpscale import-pytorch: " << e.what() << std::endl;
    return 2;
  }
  return 0;
}

}  // namespace ddpscale
