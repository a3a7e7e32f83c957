// Where `--network`, `--networks` and `--network-commbench` take the network between nodes
// from: a profile given inline ("400Gb/s,3us"), a name looked up in a YAML file of named
// networks (experiments/networks.yaml), or a commbench.csv measured between nodes.
#pragma once
#include "prediction/allreduce_cost.hpp"

#include <string>
#include <vector>

namespace ddpscale {

struct NamedNetwork {
  std::string name;
  std::string about;       // what the numbers stand for
  NetworkProfile profile;  // profile.text: "NAME (400Gb/s,3us)"
};

// The file's `networks:` map, in file order. Throws std::invalid_argument naming the file,
// the line and what to write there.
std::vector<NamedNetwork> parse_network_catalog(const std::string& yaml_text, const std::string& path);
std::vector<NamedNetwork> load_network_catalog(const std::string& path);

// "400Gb/s,3us" (any text with a comma) is parsed as a profile; anything else is a name in
// the catalog at catalog_path. Throws std::invalid_argument listing the names it has.
NetworkProfile network_by_profile_or_name(const std::string& text, const std::string& catalog_path);

// A commbench.csv measured between nodes with one rank per node (its ranks column: the
// nodes), as the network's cost curve. Throws std::runtime_error naming the file.
NetworkProfile network_from_commbench(const std::string& csv_path);

}  // namespace ddpscale
