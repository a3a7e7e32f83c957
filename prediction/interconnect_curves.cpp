#include "prediction/interconnect_curves.hpp"

#include "prediction/prediction_inputs.hpp"
#include "results/store/text_io.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace ddpscale {
namespace {

const char* const kForm = "(experiments/interconnects.yaml shows the form)";

std::string where(const std::string& path, const YAML::Node& node) {
  return node.Mark().line >= 0 ? path + ":" + std::to_string(node.Mark().line + 1) : path;
}

std::string required_text(const std::string& path, const std::string& name, const YAML::Node& entry, const char* key) {
  const YAML::Node value = entry[key];
  if (!value || !value.IsScalar() || value.Scalar().empty())
    throw std::invalid_argument(where(path, entry) + ": interconnect '" + name + "' needs " + key + " " + kForm);
  return value.Scalar();
}

std::vector<double> numbers(const std::string& path, const std::string& name, const YAML::Node& entry, const char* key) {
  const YAML::Node list = entry[key];
  if (!list || !list.IsSequence())
    throw std::invalid_argument(where(path, entry) + ": interconnect '" + name + "' needs " + key +
                                " as a list of numbers " + kForm);
  std::vector<double> values;
  for (const YAML::Node& item : list) {
    try {
      values.push_back(item.as<double>());
    } catch (const YAML::Exception&) {
      throw std::invalid_argument(where(path, item) + ": interconnect '" + name + "': " + key + " holds '" +
                                  (item.IsScalar() ? item.Scalar() : std::string("a non-number")) + "', not a number");
    }
  }
  return values;
}

void check_keys(const std::string& path, const std::string& name, const YAML::Node& entry) {
  for (const auto& kv : entry) {
    const std::string key = kv.first.as<std::string>();
    if (key != "about" && key != "measured" && key != "source" && key != "gpus" && key != "bytes" && key != "time_us" &&
        key != "busbw_gbs" && key != "node_sharing")
      throw std::invalid_argument(where(path, kv.first) + ": interconnect '" + name + "': unknown key '" + key +
                                  "' (about, measured, source, gpus, bytes, time_us or busbw_gbs, node_sharing)");
  }
}

// The times of the entry's sizes: given as time_us, or from busbw_gbs by nccl-tests' conversion.
std::vector<double> times_of(const std::string& path, const std::string& name, const YAML::Node& entry,
                             const std::vector<double>& bytes, int gpus) {
  const bool has_time = static_cast<bool>(entry["time_us"]), has_busbw = static_cast<bool>(entry["busbw_gbs"]);
  if (has_time == has_busbw)
    throw std::invalid_argument(where(path, entry) + ": interconnect '" + name +
                                "' needs one of time_us (microseconds) or busbw_gbs (nccl-tests' bus bandwidth), "
                                "one per entry of bytes");
  std::vector<double> values = numbers(path, name, entry, has_time ? "time_us" : "busbw_gbs");
  if (values.size() != bytes.size())
    throw std::invalid_argument(where(path, entry) + ": interconnect '" + name + "' has " +
                                std::to_string(bytes.size()) + " sizes and " + std::to_string(values.size()) +
                                (has_time ? " times" : " bandwidths") + "; give one per size");
  if (has_time) return values;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!(values[i] > 0))
      throw std::invalid_argument(where(path, entry) + ": interconnect '" + name + "': busbw_gbs must be positive");
    values[i] = allreduce_time_us_from_busbw(bytes[i], values[i], gpus);
  }
  return values;
}

// One cost, `{gpus, source, step_errors}`: errors above -1 (a step cannot take no time).
NodeSharingCost node_sharing_cost_of(const std::string& path, const std::string& what, const YAML::Node& block) {
  if (!block.IsMap())
    throw std::invalid_argument(where(path, block) + ": interconnect '" + what + "': expected a map of gpus, source "
                                "and step_errors " + kForm);
  for (const auto& kv : block) {
    const std::string key = kv.first.as<std::string>();
    if (key != "gpus" && key != "source" && key != "step_errors" && key != "one_gpu_step_us")
      throw std::invalid_argument(where(path, kv.first) + ": interconnect '" + what + "': unknown key '" + key +
                                  "' (gpus, source, step_errors, one_gpu_step_us)");
  }
  NodeSharingCost cost;
  const std::string gpus = required_text(path, what, block, "gpus");
  try {
    cost.gpus = block["gpus"].as<int>();
  } catch (const YAML::Exception&) {
    throw std::invalid_argument(where(path, block["gpus"]) + ": interconnect '" + what + "': gpus is '" + gpus +
                                "', not a whole number");
  }
  if (cost.gpus < 1)
    throw std::invalid_argument(where(path, block["gpus"]) + ": interconnect '" + what + "': gpus must be 1 or more");
  cost.source = required_text(path, what, block, "source");
  cost.step_errors = numbers(path, what, block, "step_errors");
  if (cost.step_errors.empty())
    throw std::invalid_argument(where(path, block) + ": interconnect '" + what + "': step_errors is empty");
  for (double e : cost.step_errors)
    if (!(e > -1))
      throw std::invalid_argument(where(path, block) + ": interconnect '" + what + "': step error " +
                                  std::to_string(e) + " is not above -1 (measured / predicted step - 1)");
  if (block["one_gpu_step_us"]) {
    cost.one_gpu_step_us = numbers(path, what, block, "one_gpu_step_us");
    if (cost.one_gpu_step_us.size() != cost.step_errors.size())
      throw std::invalid_argument(where(path, block["one_gpu_step_us"]) + ": interconnect '" + what + "': " +
                                  std::to_string(cost.one_gpu_step_us.size()) + " one_gpu_step_us for " +
                                  std::to_string(cost.step_errors.size()) + " step_errors (give one per error)");
    for (double us : cost.one_gpu_step_us)
      if (!(us > 0))
        throw std::invalid_argument(where(path, block["one_gpu_step_us"]) + ": interconnect '" + what +
                                    "': one_gpu_step_us must be positive");
  }
  return cost;
}

// `node_sharing:` as one cost (a map) or a list of costs at different GPU counts, at least
// one of them at 2 or more GPUs; kept in increasing GPU count.
NodeSharingProfile node_sharing_of(const std::string& path, const std::string& name, const YAML::Node& entry) {
  const YAML::Node block = entry["node_sharing"];
  if (!block) return {};
  const std::string what = name + ".node_sharing";
  NodeSharingProfile profile;
  if (!block.IsSequence()) {
    profile.costs.push_back(node_sharing_cost_of(path, what, block));
  } else {
    for (size_t i = 0; i < block.size(); ++i) {
      const std::string item = what + "[" + std::to_string(i) + "]";
      const NodeSharingCost cost = node_sharing_cost_of(path, item, block[i]);
      if (profile.measured_at(cost.gpus))
        throw std::invalid_argument(where(path, block[i]) + ": interconnect '" + item + "': a second cost at " +
                                    std::to_string(cost.gpus) + " GPUs (give one per GPU count)");
      profile.costs.push_back(cost);
    }
    std::sort(profile.costs.begin(), profile.costs.end(),
              [](const NodeSharingCost& a, const NodeSharingCost& b) { return a.gpus < b.gpus; });
  }
  if (profile.costs.empty() || profile.costs.back().gpus < 2)
    throw std::invalid_argument(where(path, block) + ": interconnect '" + what +
                                "': needs a cost measured at 2 or more GPUs (one at 1 GPU alone carries nothing)");
  return profile;
}

NamedInterconnect named_interconnect(const std::string& path, const std::string& name, const YAML::Node& entry) {
  if (!entry.IsMap())
    throw std::invalid_argument(where(path, entry) + ": interconnect '" + name + "': expected a map " + kForm);
  check_keys(path, name, entry);
  NamedInterconnect ic;
  ic.name = name;
  ic.about = required_text(path, name, entry, "about");
  ic.measured = required_text(path, name, entry, "measured");
  ic.source = required_text(path, name, entry, "source");
  const int gpus = std::stoi(required_text(path, name, entry, "gpus"));
  if (gpus < 2)
    throw std::invalid_argument(where(path, entry) + ": interconnect '" + name + "': gpus must be 2 or more");
  const std::vector<double> bytes = numbers(path, name, entry, "bytes");
  const std::vector<double> times = times_of(path, name, entry, bytes, gpus);
  try {
    AllreduceCostModel(bytes, times, gpus);  // the checks the predictor makes, here with the file's line
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where(path, entry) + ": interconnect '" + name + "': " + e.what());
  }
  ic.curve.bytes = bytes;
  ic.curve.time_us = times;
  ic.curve.ranks = gpus;
  ic.curve.source = name + ": " + ic.about + " (" + ic.source + "; measured " + ic.measured + ")";
  ic.node_sharing = node_sharing_of(path, name, entry);
  return ic;
}

}  // namespace

std::vector<NamedInterconnect> parse_interconnect_catalog(const std::string& yaml_text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (!root.IsMap() || !root["interconnects"] || !root["interconnects"].IsMap())
    throw std::invalid_argument(path + ": expected a map 'interconnects:' of named allreduce curves " + kForm);
  std::vector<NamedInterconnect> catalog;
  for (const auto& kv : root["interconnects"])
    catalog.push_back(named_interconnect(path, kv.first.as<std::string>(), kv.second));
  return catalog;
}

std::vector<NamedInterconnect> load_interconnect_catalog(const std::string& path) {
  if (!std::filesystem::exists(path))
    throw std::invalid_argument("no interconnects file " + path + ": give one with --interconnects FILE (the "
                                "repository's is experiments/interconnects.yaml), or a curve itself, "
                                "--allreduce FILE.csv");
  return parse_interconnect_catalog(read_whole_file(path), path);
}

std::string interconnect_names(const std::string& catalog_path) {
  try {
    std::string names;
    for (const NamedInterconnect& ic : load_interconnect_catalog(catalog_path))
      names += (names.empty() ? "" : ", ") + ic.name;
    return names.empty() ? "none in " + catalog_path : names;
  } catch (const std::exception& e) {
    return std::string("none: ") + e.what();
  }
}

NamedInterconnect interconnect_by_name_or_file(const std::string& text, const std::string& catalog_path) {
  const bool csv = text.size() > 4 && text.compare(text.size() - 4, 4, ".csv") == 0;
  if (csv) {
    const CommbenchCurve measured = read_commbench_csv(text);
    if (measured.ranks < 2)
      throw std::invalid_argument(text + ": measured on " + std::to_string(measured.ranks) +
                                  " rank(s); an allreduce curve needs 2 or more GPUs");
    AllreduceCurve curve{measured.bytes, measured.time_us, measured.ranks, ""};
    try {
      AllreduceCostModel(curve.bytes, curve.time_us, curve.ranks);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(text + ": " + e.what());
    }
    curve.source = "commbench.csv measured on " + std::to_string(curve.ranks) + " GPUs (" + text + ")";
    NamedInterconnect file;
    file.name = text;
    file.curve = curve;
    return file;  // a curve alone: no cost of sharing a node
  }
  const std::vector<NamedInterconnect> catalog = load_interconnect_catalog(catalog_path);
  std::string names;
  for (const NamedInterconnect& ic : catalog) {
    if (ic.name == text) return ic;
    names += (names.empty() ? "" : ", ") + ic.name;
  }
  throw std::invalid_argument("allreduce curve '" + text + "' is not in " + catalog_path + " (it has: " + names +
                              "); or give a commbench.csv, --allreduce FILE.csv");
}

AllreduceCurve allreduce_curve_by_name_or_file(const std::string& text, const std::string& catalog_path) {
  return interconnect_by_name_or_file(text, catalog_path).curve;
}

}  // namespace ddpscale
