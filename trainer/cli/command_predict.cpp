// `ddpscale predict`: a study (or a report folder) in, predicted scaling out: N GPUs in one
// node, or K nodes of G GPUs, with 95% prediction intervals and the predictor's self-check
// against the study's own N-GPU measurements. Needs no MPI and no GPU.
#include <cxxopts.hpp>
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/help_option.hpp"
#include "launch/cli_util.hpp"
#include "prediction_inputs.hpp"
#include "prediction_report.hpp"

namespace ddpscale {
namespace {

// "4,8" -> {4, 8}; every entry a whole number of at least `minimum`.
std::vector<int> positive_list(const std::string& option, const std::string& text, int minimum) {
  std::vector<int> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    int value = 0;
    try {
      value = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || value < minimum)
      throw UsageError("--" + option + " '" + text + "': give whole numbers of at least " + std::to_string(minimum) +
                       ", separated by commas");
    values.push_back(value);
  }
  if (values.empty()) throw UsageError("--" + option + " is empty");
  return values;
}

}  // namespace

int run_predict_command(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Predicts the step time, throughput, speedup and efficiency of every 1-GPU configuration of a study on more "
      "GPUs (--gpus) or more nodes (--nodes, --gpus-per-node, --network), with 95% prediction intervals, from the "
      "study's own phase times and allreduce curve; and checks itself on the study's measured N-GPU configurations, "
      "each predicted without its own runs. Input: a study folder (ddpscale sweep --out) or a report folder "
      "(summary.csv with commbench.csv). docs/methodology.md, \"Predicted scaling\", states the model.");
  options.add_options()
      ("study", "study folder or report folder", cxxopts::value<std::string>())
      ("gpus", "GPU counts in one node to predict, e.g. 4,8", cxxopts::value<std::string>())
      ("nodes", "node counts to predict, e.g. 2,4 (with --gpus-per-node and --network)", cxxopts::value<std::string>())
      ("gpus-per-node", "GPUs in each node for --nodes", cxxopts::value<int>()->default_value("8"))
      ("network", "link between nodes, per GPU: bandwidth,latency, e.g. \"400Gb/s,3us\"", cxxopts::value<std::string>())
      ("o,out", "output folder (predict.md, predict.csv, validation.csv, predict.json)",
       cxxopts::value<std::string>()->default_value("predict"))
      ("draws", "Monte Carlo draws per prediction", cxxopts::value<int>()->default_value("4000"))
      ("h,help", "show this help");
  options.parse_positional({"study"});
  options.positional_help("STUDY_OR_REPORT_DIR");
  PredictOptions predict;
  std::string input, out;
  try {
    const auto args = options.parse(argc, argv);
    if (printed_help(options, args)) return 0;
    if (!args.count("study")) throw UsageError("no study given: ddpscale predict STUDY_DIR --gpus 4,8 --out DIR");
    input = args["study"].as<std::string>();
    out = args["out"].as<std::string>();
    predict.draws = args["draws"].as<int>();
    if (predict.draws < 100) throw UsageError("--draws must be at least 100");
    const bool per_node = args.count("nodes") > 0;
    if (args.count("gpus") || !per_node)
      for (int gpus : positive_list("gpus", args.count("gpus") ? args["gpus"].as<std::string>() : "4,8", 2))
        predict.targets.push_back({1, gpus});
    if (per_node) {
      const int gpus_per_node = args["gpus-per-node"].as<int>();
      if (gpus_per_node < 1) throw UsageError("--gpus-per-node must be at least 1");
      for (int nodes : positive_list("nodes", args["nodes"].as<std::string>(), 1))
        predict.targets.push_back({nodes, gpus_per_node});
      const bool several_nodes =
          std::any_of(predict.targets.begin(), predict.targets.end(), [](const Topology& t) { return t.nodes > 1; });
      if (several_nodes && !args.count("network"))
        throw UsageError("--nodes above 1 needs --network, the link between nodes, e.g. --network \"400Gb/s,3us\"");
    }
    if (args.count("network")) predict.network = parse_network_profile(args["network"].as<std::string>());
  } catch (const std::exception& e) {
    std::cerr << "ddpscale predict: " << e.what() << " (see ddpscale predict --help)" << std::endl;
    return 2;
  }

  try {
    const StudyDigest study = load_study_digest(input);
    if (study.commbench_ranks < 2)
      throw std::runtime_error(input + " has no allreduce curve (the sweep ran with --no-commbench, or the report "
                                       "folder has no commbench.csv): nothing to predict the communication from");
    std::cerr << "ddpscale predict: " << study.configs.size() << " configurations, allreduce curve of "
              << study.commbench_bytes.size() << " sizes on " << study.commbench_ranks << " ranks; predicting..."
              << std::endl;
    const ScalingPrediction result = predict_scaling(study, predict);
    write_prediction(result, predict, input, out);
    const ValidationSummary& s = result.summary;
    std::cout << std::fixed << std::setprecision(1) << "self-check on " << s.configurations
              << " measured N-GPU configurations: model only " << 100 * s.model_only_median_abs_error
              << "% median |error|, " << 100 * s.model_only_coverage << "% inside the 95% interval; calibrated "
              << 100 * s.calibrated_median_abs_error << "%, " << 100 * s.calibrated_coverage << "%" << std::endl;
    std::cout << "predictions: " << result.predictions.size() << " rows in " << out << "/predict.md" << std::endl;
    for (const std::string& note : result.notes) std::cerr << "ddpscale predict: note: " << note << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "ddpscale predict: " << e.what() << std::endl;
    return 2;
  }
  return 0;
}

}  // namespace ddpscale
