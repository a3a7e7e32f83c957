#include "trainer/cli/predict_options.hpp"

#include "prediction/interconnect_curves.hpp"
#include "prediction/network_profiles.hpp"
#include "trainer/command_line/cli_util.hpp"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

namespace ddpscale {
namespace {

std::string option_name(const PredictTargetArgs& args, const std::string& key) {
  return args.from_report_spec ? "--predict " + key + "=" : "--" + key;
}

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
      throw UsageError(option + " '" + text + "': give whole numbers of at least " + std::to_string(minimum) +
                       ", separated by commas");
    values.push_back(value);
  }
  if (values.empty()) throw UsageError(option + " is empty");
  return values;
}

int whole_number(const std::string& option, const std::string& text) {
  const std::vector<int> values = positive_list(option, text, 0);
  if (values.size() != 1) throw UsageError(option + " '" + text + "': give one whole number");
  return values.front();
}

// A network's name needs the file that names it; checked here, where the option that gives
// the file is known (--networks for predict, networks= inside report's --predict).
void check_networks_file(const PredictTargetArgs& args) {
  if (!args.network || args.network->find(',') != std::string::npos || std::filesystem::exists(args.networks)) return;
  throw UsageError("network '" + *args.network + "' is a name, looked up in " + args.networks +
                   ", which does not exist; give the file with " + option_name(args, "networks") +
                   (args.from_report_spec ? "FILE" : " FILE") + " (the repository's experiments/networks.yaml), or "
                   "the link itself, e.g. " + option_name(args, "network") + (args.from_report_spec ? "" : " ") +
                   "\"400Gb/s,3us\"");
}

NetworkProfile network_of(const PredictTargetArgs& args) {
  if (args.network && args.network_commbench)
    throw UsageError("give " + option_name(args, "network") + " or " + option_name(args, "network-commbench") +
                     ", not both: a curve measured between nodes replaces the link's bandwidth and latency");
  check_networks_file(args);
  try {
    if (args.network_commbench) return network_from_commbench(*args.network_commbench);
    if (args.network) return network_by_profile_or_name(*args.network, args.networks);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  return {};
}

// --allreduce's curve and, for a name, its machine's cost of sharing a node (none given: empty).
NamedInterconnect interconnect_of(const PredictTargetArgs& args) {
  if (!args.allreduce) return {};
  try {
    return interconnect_by_name_or_file(*args.allreduce, args.interconnects);
  } catch (const std::exception& e) {
    throw UsageError(option_name(args, "allreduce") + (args.from_report_spec ? "" : " ") + *args.allreduce + ": " +
                     e.what());
  }
}

// Relative to the current folder first, so a copy edited there wins; else the source tree
// this binary was built from, so a name works from any folder.
std::string repository_file(const std::string& relative) {
  if (std::filesystem::exists(relative)) return relative;
  return std::string(DDPSCALE_SOURCE_DIR) + "/" + relative;
}

}  // namespace

std::string default_networks_file() { return repository_file("experiments/networks.yaml"); }
std::string default_interconnects_file() { return repository_file("experiments/interconnects.yaml"); }

void add_predict_target_options(cxxopts::Options& options) {
  options.add_options()
      ("gpus", "GPU counts in one node to predict, e.g. 4,8 (default 4,8 when --nodes is not given)",
       cxxopts::value<std::string>())
      ("nodes", "node counts to predict, e.g. 2,4 (with --gpus-per-node, and --network or --network-commbench)",
       cxxopts::value<std::string>())
      ("gpus-per-node", "GPUs in each node for --nodes", cxxopts::value<int>()->default_value("8"))
      ("network", "link between nodes, per GPU: bandwidth,latency, e.g. \"400Gb/s,3us\", or a name in --networks "
                  "(ib-ndr-400, ib-hdr-200, roce-200, eth-100, eth-25 in experiments/networks.yaml)",
       cxxopts::value<std::string>())
      ("networks", "YAML file of named networks for --network NAME",
       cxxopts::value<std::string>()->default_value(default_networks_file()))
      ("network-commbench", "commbench.csv measured between nodes, one rank per node (as `ddpscale report` writes "
                            "it): the network's cost curve instead of --network's bandwidth and latency",
       cxxopts::value<std::string>())
      ("allreduce", "the allreduce curve to predict from, instead of the study's own (a study of 1 GPU has none): a "
                    "name in --interconnects (h200-nvlink-2gpu, h200-nvlink-4gpu, h100-nvlink-2gpu: measured curves, each with its "
                    "machine and source), or FILE.csv, a commbench.csv measured anywhere (as `ddpscale report` writes "
                    "it beside report.md); carried to each N as a ring at the curve's bus bandwidth. A name also "
                    "brings the machine's measured cost of sharing a node, which calibrates a study of 1 GPU (a "
                    "study with N-GPU runs is calibrated by its own, and checked against the name's)",
       cxxopts::value<std::string>())
      ("interconnects", "YAML file of named allreduce curves for --allreduce NAME",
       cxxopts::value<std::string>()->default_value(default_interconnects_file()))
      ("draws", "Monte Carlo draws per prediction", cxxopts::value<int>()->default_value("4000"));
}

PredictTargetArgs predict_target_args(const cxxopts::ParseResult& args) {
  PredictTargetArgs out;
  if (args.count("gpus")) out.gpus = args["gpus"].as<std::string>();
  if (args.count("nodes")) out.nodes = args["nodes"].as<std::string>();
  if (args.count("network")) out.network = args["network"].as<std::string>();
  if (args.count("network-commbench")) out.network_commbench = args["network-commbench"].as<std::string>();
  if (args.count("allreduce")) out.allreduce = args["allreduce"].as<std::string>();
  out.networks = args["networks"].as<std::string>();
  out.interconnects = args["interconnects"].as<std::string>();
  out.gpus_per_node = args["gpus-per-node"].as<int>();
  out.draws = args["draws"].as<int>();
  return out;
}

PredictTargetArgs parse_predict_spec(const std::string& spec) {
  PredictTargetArgs out;
  out.from_report_spec = true;
  std::stringstream in(spec);
  std::string item;
  std::map<std::string, std::string> seen;
  while (std::getline(in, item, ';')) {
    if (item.empty()) continue;
    const auto equals = item.find('=');
    const std::string key = item.substr(0, equals);
    if (equals == std::string::npos || seen.count(key))
      throw UsageError("--predict '" + spec + "': give key=value pairs separated by ';', each key once, e.g. "
                       "\"gpus=4,8;nodes=2;gpus-per-node=8;network=400Gb/s,3us\"");
    const std::string value = item.substr(equals + 1);
    seen[key] = value;
    if (key == "gpus") out.gpus = value;
    else if (key == "nodes") out.nodes = value;
    else if (key == "network") out.network = value;
    else if (key == "network-commbench") out.network_commbench = value;
    else if (key == "networks") out.networks = value;
    else if (key == "allreduce") out.allreduce = value;
    else if (key == "interconnects") out.interconnects = value;
    else if (key == "gpus-per-node") out.gpus_per_node = whole_number(option_name(out, key), value);
    else if (key == "draws") out.draws = whole_number(option_name(out, key), value);
    else
      throw UsageError("--predict: unknown key '" + key +
                       "' (gpus, nodes, gpus-per-node, network, networks, network-commbench, allreduce, "
                       "interconnects, draws)");
  }
  return out;
}

PredictOptions predict_options_from(const PredictTargetArgs& args) {
  PredictOptions predict;
  predict.draws = args.draws;
  if (predict.draws < 100) throw UsageError(option_name(args, "draws") + " must be at least 100");
  if (args.gpus || !args.nodes)
    for (int gpus : positive_list(option_name(args, "gpus"), args.gpus.value_or("4,8"), 2))
      predict.targets.push_back({1, gpus});
  if (args.nodes) {
    if (args.gpus_per_node < 1) throw UsageError(option_name(args, "gpus-per-node") + " must be at least 1");
    for (int nodes : positive_list(option_name(args, "nodes"), *args.nodes, 1))
      predict.targets.push_back({nodes, args.gpus_per_node});
  }
  predict.network = network_of(args);
  const NamedInterconnect interconnect = interconnect_of(args);
  predict.allreduce = interconnect.curve;
  predict.allreduce_hardware = interconnect.about;
  predict.node_sharing = interconnect.node_sharing;
  const bool several_nodes =
      std::any_of(predict.targets.begin(), predict.targets.end(), [](const Topology& t) { return t.nodes > 1; });
  if (several_nodes && !predict.network.given())
    throw UsageError(option_name(args, "nodes") + " above 1 needs the network between nodes: " +
                     option_name(args, "network") + " \"400Gb/s,3us\" (or a name such as ib-ndr-400 from " +
                     args.networks + "), or " + option_name(args, "network-commbench") + " FILE.csv");
  return predict;
}

void require_allreduce_curve(const StudyDigest& study, const PredictOptions& predict, const PredictTargetArgs& args,
                             const std::string& input) {
  if (study.commbench_ranks >= 2 || predict.allreduce.given()) return;
  const std::string give = "give one with " + option_name(args, "allreduce") + (args.from_report_spec ? "" : " ") +
                           "NAME (in " + args.interconnects + ": " + interconnect_names(args.interconnects) + ") or " +
                           option_name(args, "allreduce") + (args.from_report_spec ? "" : " ") +
                           "FILE.csv (a commbench.csv measured on 2 or more GPUs, as `ddpscale report` writes it "
                           "beside report.md)";
  const bool several_ranks = std::any_of(study.configs.begin(), study.configs.end(),
                                         [](const MeasuredConfig& c) { return c.params.world_size > 1; });
  // A sweep measures the curve only when a configuration runs on more than one rank.
  if (!several_ranks)
    throw std::runtime_error(input + " measured 1 rank only, and a sweep measures the allreduce curve only on 2 or "
                                     "more ranks, so the study has none to predict the communication from: " + give +
                             "; or sweep 1 and N ranks (world_sizes: [1, 2] in the spec, under mpirun -np 2) and "
                             "predict from that study");
  const bool report_folder = std::filesystem::exists(std::filesystem::path(input) / "summary.csv");
  throw std::runtime_error(input + (report_folder ? " is a report folder without commbench.csv" : " has no allreduce curve") +
                           ": its sweep ran with --no-commbench, so nothing measured the communication to predict "
                           "from; " + give + ", or sweep the study again without --no-commbench (into a new --out)");
}

std::string self_check_line(const ValidationSummary& s) {
  if (s.configurations == 0)
    return "self-check: the study has no N-GPU configuration with its 1-GPU twin to check the predictor against";
  std::ostringstream line;
  line << std::fixed << std::setprecision(1) << "self-check on " << s.configurations
       << " measured N-GPU configurations: model only " << 100 * s.model_only_median_abs_error << "% median |error|, "
       << 100 * s.model_only_coverage << "% inside the 95% interval; calibrated " << 100 * s.calibrated_median_abs_error
       << "%, " << 100 * s.calibrated_coverage << "%";
  if (s.other_models_configurations > 0)
    line << "; other models only " << 100 * s.other_models_median_abs_error << "%, " << 100 * s.other_models_coverage
         << "% (of " << s.other_models_configurations << ")";
  if (s.node_sharing_configurations > 0)
    line << "; the named profile's node sharing only " << 100 * s.node_sharing_median_abs_error << "%, "
         << 100 * s.node_sharing_coverage << "%";
  return line.str();
}

}  // namespace ddpscale
