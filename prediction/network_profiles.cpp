#include "prediction/network_profiles.hpp"

#include "prediction/prediction_inputs.hpp"
#include "results/store/text_io.hpp"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <stdexcept>

namespace ddpscale {
namespace {

std::string path_and_line(const std::string& path, const YAML::Node& node) {
  return node.Mark().line >= 0 ? path + ":" + std::to_string(node.Mark().line + 1) : path;
}

std::string scalar_text(const std::string& path, const std::string& name, const YAML::Node& entry, const char* key) {
  const YAML::Node value = entry[key];
  if (!value || !value.IsScalar())
    throw std::invalid_argument(path_and_line(path, entry) + ": network '" + name + "' needs " + key +
                                " (e.g. bandwidth: 400Gb/s, latency: 3us)");
  return value.Scalar();
}

NamedNetwork named_network(const std::string& path, const std::string& name, const YAML::Node& entry) {
  if (!entry.IsMap())
    throw std::invalid_argument(path_and_line(path, entry) + ": network '" + name +
                                "': expected a map of bandwidth, latency, about");
  for (const auto& kv : entry) {
    const std::string key = kv.first.as<std::string>();
    if (key != "bandwidth" && key != "latency" && key != "about")
      throw std::invalid_argument(path_and_line(path, kv.first) + ": network '" + name + "': unknown key '" + key +
                                  "' (bandwidth, latency, about)");
  }
  const std::string profile_text = scalar_text(path, name, entry, "bandwidth") + "," + scalar_text(path, name, entry, "latency");
  NamedNetwork network;
  network.name = name;
  network.about = entry["about"] ? entry["about"].as<std::string>() : "";
  try {
    network.profile = parse_network_profile(profile_text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path_and_line(path, entry) + ": network '" + name + "': " + e.what());
  }
  network.profile.text = name + " (" + profile_text + ")";
  return network;
}

}  // namespace

std::vector<NamedNetwork> parse_network_catalog(const std::string& yaml_text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (!root.IsMap() || !root["networks"] || !root["networks"].IsMap())
    throw std::invalid_argument(path + ": expected a map 'networks:' of named networks, each with bandwidth and "
                                       "latency (experiments/networks.yaml shows the form)");
  std::vector<NamedNetwork> catalog;
  for (const auto& kv : root["networks"]) catalog.push_back(named_network(path, kv.first.as<std::string>(), kv.second));
  return catalog;
}

std::vector<NamedNetwork> load_network_catalog(const std::string& path) {
  if (!std::filesystem::exists(path))
    throw std::invalid_argument("no networks file " + path + ": give one with --networks FILE (the repository's is "
                                "experiments/networks.yaml), or the link itself, e.g. --network \"400Gb/s,3us\"");
  return parse_network_catalog(read_whole_file(path), path);
}

NetworkProfile network_by_profile_or_name(const std::string& text, const std::string& catalog_path) {
  if (text.find(',') != std::string::npos) return parse_network_profile(text);
  const std::vector<NamedNetwork> catalog = load_network_catalog(catalog_path);
  std::string names;
  for (const NamedNetwork& network : catalog) {
    if (network.name == text) return network.profile;
    names += (names.empty() ? "" : ", ") + network.name;
  }
  throw std::invalid_argument("network '" + text + "' is not in " + catalog_path + " (it has: " + names +
                              "); or give bandwidth and latency, e.g. \"400Gb/s,3us\"");
}

NetworkProfile network_from_commbench(const std::string& csv_path) {
  const CommbenchCurve curve = read_commbench_csv(csv_path);
  if (curve.ranks < 2)
    throw std::runtime_error(csv_path + ": measured on " + std::to_string(curve.ranks) +
                             " rank(s); a network curve needs 2 or more nodes, one rank on each");
  NetworkProfile network;
  try {
    network.measured_curve = std::make_shared<AllreduceCostModel>(curve.bytes, curve.time_us, curve.ranks);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(csv_path + ": " + e.what());
  }
  network.text = "measured between " + std::to_string(curve.ranks) + " nodes (" + csv_path + ")";
  return network;
}

}  // namespace ddpscale
