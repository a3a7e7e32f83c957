#include "results/analysis/study_analysis.hpp"

#include "results/store/text_io.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <tuple>

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

void load_folder(const std::string& dir, const LoadOptions& options, LoadedStudy& loaded) {
  StudySource source;
  source.path = dir;
  if (fs::exists(fs::path(dir) / kStudyFileName)) {
    try {
      CommBenchTable table;
      source.metadata = read_study(dir, &table);
      if (!table.bytes.empty()) source.commbench = table;
    } catch (const StoreError& e) {
      if (!options.skip_bad) throw;
      loaded.skipped.push_back(e.what());
    }
  }
  std::vector<std::string> bad;
  const std::vector<std::string> files = list_config_files(dir, &bad);
  if (!bad.empty() && !options.skip_bad)
    throw StoreError(bad.front() + (bad.size() > 1 ? " (and " + std::to_string(bad.size() - 1) + " more)" : "") +
                     "; pass --skip-bad to report on the readable files");
  loaded.skipped.insert(loaded.skipped.end(), bad.begin(), bad.end());
  std::vector<ConfigRecord> records;
  for (const std::string& file : files) {
    try {
      records.push_back(read_config(file));
      ++source.config_files;
    } catch (const StoreError& e) {
      if (!options.skip_bad) throw;
      loaded.skipped.push_back(e.what());
    }
  }
  for (ConfigRecord& record : merge_launches(std::move(records))) loaded.configs.push_back(std::move(record));
  if (source.config_files == 0 && bad.empty())
    throw StoreError(dir + ": no configuration files (*.h5) in this folder; is it a study made by `ddpscale sweep`?");
  loaded.sources.push_back(std::move(source));
}

void load_file(const std::string& path, const LoadOptions& options, LoadedStudy& loaded) {
  try {
    loaded.configs.push_back(read_config(path));
    StudySource source;
    source.path = path;
    source.config_files = 1;
    loaded.sources.push_back(source);
  } catch (const StoreError& e) {
    if (!options.skip_bad) throw;
    loaded.skipped.push_back(e.what());
  }
}

// Sort order of the report: a model's rows together, then by what a reader compares.
auto sort_key(const ConfigParams& p) {
  return std::make_tuple(p.parameters, p.model, p.scaling, p.exec, p.dtype, p.nccl_profile, p.batch_per_rank,
                         p.world_size, p.overlap ? 0 : 1, p.bucket_mb);
}

}  // namespace

LoadedStudy load_studies(const std::vector<std::string>& paths, const LoadOptions& options) {
  if (paths.empty()) throw StoreError("no study given: pass one or more study folders (made by `ddpscale sweep`)");
  LoadedStudy loaded;
  for (const std::string& given : paths) {
    const std::string path = study_folder_in(given);
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      if (!options.skip_bad) throw StoreError(path + ": no such file or folder");
      loaded.skipped.push_back(path + ": no such file or folder");
    } else if (fs::is_directory(path, ec)) {
      load_folder(path, options, loaded);
    } else {
      load_file(path, options, loaded);
    }
  }
  if (loaded.configs.empty())
    throw StoreError("no readable configuration in " + std::to_string(paths.size()) + " input(s)" +
                     (loaded.skipped.empty() ? "" : "; skipped: " + loaded.skipped.front()));
  return loaded;
}

std::string twin_key(const ConfigParams& p) {
  // Learning rates at full precision: six digits made 1e-3 and 1.0000001e-3 twins.
  const int64_t batch = p.scaling == "strong" ? p.global_batch : p.batch_per_rank;
  return p.model + "|" + p.scaling + "|" + std::to_string(batch) + "|" + p.optimizer + "|" +
         round_trip_text(p.learning_rate) + "|" + p.dtype + "|" + p.exec + "|" + p.nccl_profile + "|" + p.device + "|" +
         std::to_string(p.measured_steps) + "|" + p.engine;
}

// The paired design's speedup where it measured the comparison: the runs' estimate stays
// available to the caller only through the runs themselves.
static void use_paired_speedup(const PairedEstimate& paired, ConfigSpeedup& speedup) {
  speedup.speedup = paired.ratio;
  speedup.speedup_ci = paired.ci;
  speedup.p_value = paired.p_value;
  speedup.launches = paired.launches;
  speedup.design = "paired";
}

// The launch spread each GPU count's comparisons share (results/statistics/paired_speedup.hpp,
// LaunchSpreadPrior): a study's configurations at one N meet the same launches' changes.
static std::map<int, PairedPriors> paired_priors_by_world_size(const std::vector<ConfigSummary>& configs) {
  std::map<int, std::vector<std::vector<PairedLaunch>>> launches;
  for (const ConfigSummary& c : configs)
    if (c.params.world_size > 1) launches[c.params.world_size].push_back(c.paired);
  std::map<int, PairedPriors> priors;
  for (const auto& [world_size, by_comparison] : launches) priors[world_size] = paired_priors(by_comparison);
  return priors;
}

StudyAnalysis analyze_study(const std::vector<ConfigRecord>& records, const BootstrapOptions& bootstrap) {
  StudyAnalysis analysis;
  for (const ConfigRecord& record : records) analysis.configs.push_back(summarize_config(record));
  std::stable_sort(analysis.configs.begin(), analysis.configs.end(),
                   [](const ConfigSummary& a, const ConfigSummary& b) { return sort_key(a.params) < sort_key(b.params); });

  std::map<std::string, size_t> one_gpu_by_key;  // the first 1-GPU configuration of each key
  std::set<int> worlds;
  for (size_t i = 0; i < analysis.configs.size(); ++i) {
    const ConfigParams& p = analysis.configs[i].params;
    worlds.insert(p.world_size);
    if (std::find(analysis.models.begin(), analysis.models.end(), p.model) == analysis.models.end())
      analysis.models.push_back(p.model);
    if (std::find(analysis.nccl_profiles.begin(), analysis.nccl_profiles.end(), p.nccl_profile) ==
        analysis.nccl_profiles.end())
      analysis.nccl_profiles.push_back(p.nccl_profile);
    if (p.world_size == 1) one_gpu_by_key.emplace(twin_key(p), i);
  }
  analysis.world_sizes.assign(worlds.begin(), worlds.end());

  analysis.paired_priors = paired_priors_by_world_size(analysis.configs);
  const std::map<int, PairedPriors>& priors = analysis.paired_priors;
  std::map<ThresholdGroup, std::vector<ConfigSpeedup>> speedups_by_group;
  for (size_t i = 0; i < analysis.configs.size(); ++i) {
    const ConfigSummary& n_gpu = analysis.configs[i];
    if (n_gpu.params.world_size == 1) continue;
    const auto twin = one_gpu_by_key.find(twin_key(n_gpu.params));
    if (twin == one_gpu_by_key.end()) {
      analysis.unmatched.push_back(i);
      continue;
    }
    Comparison comparison;
    comparison.one_gpu = twin->second;
    comparison.n_gpu = i;
    const ConfigSummary& one_gpu = analysis.configs[twin->second];
    comparison.speedup = speedup_over_one_gpu(one_gpu, n_gpu, bootstrap);
    // A side with one kept run has no spread to resample: its bootstrap "interval" would
    // treat that run as exact. The point speedup stays; the interval is n/a.
    if (one_gpu.throughput.n < 2 || n_gpu.throughput.n < 2) comparison.speedup.speedup_ci = {};
    comparison.paired = paired_checks(n_gpu.paired, n_gpu.params.scaling, n_gpu.params.world_size,
                                      one_gpu.params.global_batch, throughputs_by_launch(one_gpu),
                                      n_gpu.params.global_batch, throughputs_by_launch(n_gpu),
                                      priors.at(n_gpu.params.world_size));
    if (comparison.paired.measured) use_paired_speedup(comparison.paired.speedup, comparison.speedup);
    comparison.payoff = payoff_of(comparison.speedup);
    analysis.comparisons.push_back(comparison);
    speedups_by_group[ThresholdGroup::of(n_gpu.params)].push_back(comparison.speedup);
  }
  for (const auto& [group, speedups] : speedups_by_group) {
    analysis.break_even[group] = estimate_break_even(speedups, group.world_size, bootstrap);
    analysis.thresholds[group] = threshold_table(speedups, group.world_size);
    analysis.measured_thresholds[group] = measured_thresholds(speedups, group.world_size);
    std::map<std::string, std::vector<ConfigSpeedup>> by_family;
    for (const ConfigSpeedup& s : speedups) by_family[model_family(s.model)].push_back(s);
    if (by_family.size() < 2) continue;
    for (const auto& [family, family_speedups] : by_family)
      analysis.break_even_by_family[group][family] = estimate_break_even(family_speedups, group.world_size, bootstrap);
  }
  return analysis;
}

std::string exec_dtype_text(const std::string& exec, const std::string& dtype) {
  std::string text;
  if (exec != "eager") text += ", exec " + exec;
  if (dtype != "float32") text += ", " + dtype;
  return text;
}

std::string engine_text(const std::string& engine) {
  if (engine == kEngineDdpscale) return "";
  return engine == kEnginePytorchDdp ? ", PyTorch DDP" : ", engine " + engine;
}

std::string ThresholdGroup::label() const {
  return std::to_string(world_size) + " ranks" + exec_dtype_text(exec, dtype) + engine_text(engine);
}

std::string ThresholdGroup::stem() const {
  std::string text = "w" + std::to_string(world_size);
  if (exec != "eager") text += "_" + exec;
  if (dtype != "float32") text += "_" + dtype;
  if (engine != kEngineDdpscale) text += "_" + engine;
  return text;
}

}  // namespace ddpscale
