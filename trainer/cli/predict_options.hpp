// Where to predict and over which network: the options `ddpscale predict` takes, and the same
// keys in `ddpscale report --predict "gpus=4,8;nodes=2;gpus-per-node=8;network=ib-ndr-400"`,
// parsed and checked in one place; and what both commands print of a prediction.
#pragma once
#include "prediction/scaling_prediction.hpp"

#include <cxxopts.hpp>

#include <optional>
#include <string>

namespace ddpscale {

// experiments/networks.yaml in the current folder when there is one, else the one in the
// source tree this binary was built from.
std::string default_networks_file();
// experiments/interconnects.yaml, found the same way.
std::string default_interconnects_file();

struct PredictTargetArgs {
  std::optional<std::string> gpus, nodes, network, network_commbench, allreduce;
  std::string networks = default_networks_file();
  std::string interconnects = default_interconnects_file();
  int gpus_per_node = 8;
  int draws = 4000;
  bool from_report_spec = false;  // error messages name "--predict key=" instead of "--key"
};

// predict's options: --gpus, --nodes, --gpus-per-node, --network, --networks,
// --network-commbench, --allreduce, --interconnects, --draws.
void add_predict_target_options(cxxopts::Options& options);
PredictTargetArgs predict_target_args(const cxxopts::ParseResult& args);

// "gpus=4,8;nodes=1,2;gpus-per-node=8;network=400Gb/s,3us": the same keys, ';' between
// them; "" takes every default. Throws UsageError naming the key and the form.
PredictTargetArgs parse_predict_spec(const std::string& spec);

// The targets (default: 4 and 8 GPUs in one node), the network (a profile, a named one
// from the networks file, or a commbench.csv measured between nodes) and the allreduce curve
// when --allreduce gives one. Throws UsageError saying what to give; the networks,
// interconnects and commbench files are read here.
PredictOptions predict_options_from(const PredictTargetArgs& args);

// Throws std::runtime_error when neither the study nor --allreduce gives an allreduce curve
// to predict from, saying why the study has none and naming the curves --allreduce offers.
void require_allreduce_curve(const StudyDigest& study, const PredictOptions& predict, const PredictTargetArgs& args,
                             const std::string& input);
// "self-check on 26 measured N-GPU configurations: model only 6.1% median |error|, ...;
// other models only 4.2%, 96.0% (of 26)"
std::string self_check_line(const ValidationSummary& summary);

}  // namespace ddpscale
