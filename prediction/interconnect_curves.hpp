// Where `--allreduce NAME|FILE.csv` takes the allreduce curve from when the study has none
// (a study of 1 rank) or another machine's is wanted: a name in a YAML file of measured
// curves (experiments/interconnects.yaml), each with the machine, date and source of its
// numbers, or a commbench.csv measured anywhere.
#pragma once
#include "prediction/allreduce_cost.hpp"
#include "prediction/node_sharing.hpp"

#include <string>
#include <vector>

namespace ddpscale {

struct NamedInterconnect {
  std::string name;
  std::string about;     // the machine: GPUs and how they are joined
  std::string measured;  // when
  std::string source;    // where the numbers come from: a file, a commit, a published page
  AllreduceCurve curve;  // curve.source: "NAME: about (source; measured ...)"
  NodeSharingProfile node_sharing;  // optional: not given where the entry has none
};

// The file's `interconnects:` map, in file order. Each entry: about, measured, source, gpus,
// bytes and either time_us or busbw_gbs (nccl-tests' bus bandwidth, converted to time), and
// optionally node_sharing: one cost (gpus, source, step_errors: node_sharing.hpp) or a list
// of them at different GPU counts, at least one at 2 or more. Throws
// std::invalid_argument naming the file, the line and what to write there.
std::vector<NamedInterconnect> parse_interconnect_catalog(const std::string& yaml_text, const std::string& path);
std::vector<NamedInterconnect> load_interconnect_catalog(const std::string& path);

// "h100-nvlink-2gpu, h200-nvlink-2gpu": the names in the file, for messages; says so when
// the file is missing or unreadable instead of throwing.
std::string interconnect_names(const std::string& catalog_path);

// A name in the catalog at catalog_path (its curve and node-sharing cost), or (ending in .csv)
// a commbench.csv as `ddpscale report` writes it (a curve alone, no node-sharing cost).
// Throws std::invalid_argument listing the names the catalog has.
NamedInterconnect interconnect_by_name_or_file(const std::string& text, const std::string& catalog_path);
// Its curve alone.
AllreduceCurve allreduce_curve_by_name_or_file(const std::string& text, const std::string& catalog_path);

}  // namespace ddpscale
