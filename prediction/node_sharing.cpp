#include "node_sharing.hpp"

#include <yaml-cpp/yaml.h>

#include <sstream>

namespace ddpscale {

std::string node_sharing_yaml(const NodeSharingCost& cost) {
  YAML::Emitter block;
  block.SetDoublePrecision(4);
  block << YAML::BeginMap << YAML::Key << "node_sharing" << YAML::Value << YAML::BeginMap;
  block << YAML::Key << "gpus" << YAML::Value << cost.gpus;
  block << YAML::Key << "source" << YAML::Value << cost.source;
  block << YAML::Key << "step_errors" << YAML::Value << YAML::Flow << cost.step_errors;
  block << YAML::EndMap << YAML::EndMap;
  // Indented by four spaces: the keys of an entry under `interconnects:`.
  std::istringstream lines(block.c_str());
  std::string line, indented;
  while (std::getline(lines, line)) indented += "    " + line + "\n";
  return indented;
}

}  // namespace ddpscale
