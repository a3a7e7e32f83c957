#include "results/analysis/launch_precision.hpp"

#include "results/analysis/study_analysis.hpp"
#include "results/store/run_store.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

namespace ddpscale {

namespace fs = std::filesystem;

double relative_half_width(double speedup, const Interval& interval) {
  if (!interval.valid() || !std::isfinite(speedup) || speedup <= 0) return kNaN;
  return (interval.high - interval.low) / 2.0 / speedup;
}

LaunchPrecision launch_precision(const std::vector<ConfigRecord>& records, double target) {
  const StudyAnalysis analysis = analyze_study(records);
  LaunchPrecision precision;
  // Per 1-rank configuration: whether every comparison against it is within the target.
  std::map<size_t, bool> one_gpu_settled;
  for (const Comparison& c : analysis.comparisons) {
    ++precision.comparisons;
    const double half_width = relative_half_width(c.speedup.speedup, c.speedup.speedup_ci);
    const bool within = std::isfinite(half_width) && half_width <= target;
    if (within) {
      ++precision.within_target;
    } else {
      // No interval yet (a side without runs) is as open as it gets.
      const double open = std::isfinite(half_width) ? half_width : std::numeric_limits<double>::infinity();
      if (!(open <= precision.widest_open)) precision.widest_open = open;
    }
    auto [it, fresh] = one_gpu_settled.emplace(c.one_gpu, within);
    if (!fresh) it->second = it->second && within;
  }
  for (const Comparison& c : analysis.comparisons) {
    if (!one_gpu_settled.at(c.one_gpu)) continue;
    precision.settled.insert(analysis.configs[c.one_gpu].id);
    precision.settled.insert(analysis.configs[c.n_gpu].id);
  }
  return precision;
}

LaunchRule launch_rule_of_spec(const std::string& spec_text) {
  LaunchRule rule;
  try {
    const YAML::Node root = YAML::Load(spec_text);
    if (!root.IsMap()) return rule;
    if (root["target_half_width"]) rule.target_half_width = root["target_half_width"].as<double>();
    if (root["min_launches"]) rule.min_launches = root["min_launches"].as<int>();
  } catch (const YAML::Exception&) {
    return {};  // the sweep refused such a spec; a hand-made study.h5 may hold anything
  }
  return rule;
}

LaunchPrecision launch_precision_in(const std::string& dir, int before, int launches, double target) {
  return LaunchPrecisionReader(dir).before_launch(before, launches, target);
}

LaunchPrecision LaunchPrecisionReader::before_launch(int before, int launches, double target) {
  std::vector<ConfigRecord> records;
  for (const std::string& path : list_config_files(dir_)) {
    std::error_code ec;
    const uintmax_t size = fs::file_size(path, ec);
    const int64_t modified = ec ? 0 : fs::last_write_time(path, ec).time_since_epoch().count();
    auto found = by_path_.find(path);
    if (found == by_path_.end() || found->second.size != size || found->second.modified != modified)
      found = by_path_.insert_or_assign(path, Stored{size, modified, read_config(path)}).first;
    const ConfigRecord& record = found->second.record;
    if (record.launches == launches && record.launch < before) records.push_back(record);
  }
  return launch_precision(merge_launches(std::move(records)), target);
}

}  // namespace ddpscale
