// `ddpscale compare A B`: two studies, configuration by configuration (results/report/study_comparison.hpp).
// Needs no MPI and no GPU.
#include "results/report/study_comparison.hpp"
#include "trainer/cli/commands.hpp"
#include "trainer/command_line/help_option.hpp"
#include "trainer/command_line/cli_util.hpp"

#include <cxxopts.hpp>

#include <iostream>

namespace ddpscale {

int run_compare_command(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Compares two studies (ddpscale sweep --out folders) configuration by configuration: the throughput ratio "
      "B/A with a bootstrap 95% interval and Welch's p, and for N-GPU configurations the speedup in A and in B and "
      "whether their intervals overlap. For reproducibility (same machine, two days), regressions between builds, "
      "two machines, or two NCCL profiles run as separate launches (--ignore nccl_profile). Writes compare.md, "
      "compare.html, compare.csv and compare.json.");
  options.add_options()
      ("study-a", "study A (the reference)", cxxopts::value<std::string>())
      ("study-b", "study B", cxxopts::value<std::string>())
      ("o,out", "output folder (created; files in it are replaced)", cxxopts::value<std::string>()->default_value("compare"))
      ("ignore", "configuration fields to leave out of the match, e.g. nccl_profile (repeatable or comma-separated)",
       cxxopts::value<std::vector<std::string>>())
      ("skip-bad", "compare the readable files and list the unreadable ones instead of stopping")
      ("h,help", "show this help");
  options.parse_positional({"study-a", "study-b"});
  options.positional_help("STUDY_A STUDY_B");
  CompareOptions compare;
  std::string a, b, out;
  try {
    const auto args = options.parse(argc, argv);
    if (printed_help(options, args, "ddpscale compare studies/monday studies/tuesday --out compare")) return 0;
    if (!args.count("study-a") || !args.count("study-b")) {
      std::cerr << "ddpscale compare: give two studies: ddpscale compare STUDY_A STUDY_B --out DIR" << std::endl;
      return 2;
    }
    a = args["study-a"].as<std::string>();
    b = args["study-b"].as<std::string>();
    out = args["out"].as<std::string>();
    require_output_folder("--out", out);
    if (args.count("ignore")) compare.ignore_fields = args["ignore"].as<std::vector<std::string>>();
    compare.load.skip_bad = args.count("skip-bad") > 0;
  } catch (const std::exception& e) {
    std::cerr << "ddpscale compare: " << e.what() << " (see ddpscale compare --help)" << std::endl;
    return 2;
  }
  try {
    const ComparisonResult result = compare_studies(a, b, compare);
    const auto files = write_comparison(result, out);
    std::cout << result.summary_line << std::endl;
    std::cout << "comparison: " << files.front() << " (" << files.size() << " files in " << out << ")" << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "ddpscale compare: " << e.what() << std::endl;
    return 2;
  }
  return 0;
}

}  // namespace ddpscale
