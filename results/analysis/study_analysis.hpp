// A study on disk turned into the facts the report states: every configuration
// summarised, every N-GPU configuration compared with its 1-GPU twin, and the parameter
// thresholds. Reads HDF5 through the run store; no LibTorch, no MPI.
#pragma once
#include "results/analysis/config_summary.hpp"
#include "results/analysis/thresholds.hpp"
#include "results/statistics/paired_speedup.hpp"
#include "results/store/run_record.hpp"
#include "results/store/run_store.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddpscale {

// One study folder (or a single configuration file) as given on the command line.
struct StudySource {
  std::string path;
  std::optional<StudyMetadata> metadata;   // absent when the folder has no study.h5
  std::optional<CommBenchTable> commbench;
  size_t config_files = 0;
};

struct LoadOptions {
  bool skip_bad = false;  // false: the first bad file is an error naming it
};

struct LoadedStudy {
  std::vector<StudySource> sources;
  std::vector<ConfigRecord> configs;
  std::vector<std::string> skipped;  // "path: why", only with skip_bad
};

// Each path is a study folder (study.h5 and <config-id>.h5 files) or one <config-id>.h5.
// Throws StoreError naming the file for a missing path, a folder without any configuration,
// or (without skip_bad) a truncated, foreign or other-version file.
LoadedStudy load_studies(const std::vector<std::string>& paths, const LoadOptions& options = {});

// An N-GPU configuration and the 1-GPU configuration it is measured against: the same
// model, scaling mode, batch (per rank when weak, global when strong), optimizer, learning
// rate, dtype, execution mode, NCCL profile, device and measured steps. Bucket size and
// overlap are not part of the match: a world of one has no buckets to vary.
struct Comparison {
  size_t one_gpu = 0;  // indices into StudyAnalysis::configs
  size_t n_gpu = 0;
  ConfigSpeedup speedup;
  // The paired design's estimate and checks, where it measured this comparison; its
  // speedup is then the one `speedup` holds.
  PairedChecks paired;
  Payoff payoff = Payoff::undecided;
  bool paid_off() const { return payoff == Payoff::paid_off; }  // thresholds.hpp, pays_off
};

// ", exec graph, bfloat16": the execution mode and precision where they differ from the
// defaults (eager, float32), "" for those; the wording every report label shares.
std::string exec_dtype_text(const std::string& exec, const std::string& dtype);
// ", PyTorch DDP" for the runs of PyTorch's engine, "" for ddpscale's own: the words every
// label adds after exec_dtype_text's.
std::string engine_text(const std::string& engine);

// What a parameter threshold is fitted over: comparisons at one rank count, in one
// execution mode and precision. Mixing them would blur exactly what they change: CUDA
// graphs and bf16 move the break-even (the question of the exec-modes and precision specs).
struct ThresholdGroup {
  int world_size = 2;
  std::string exec = "eager";
  std::string dtype = "float32";
  std::string engine = kEngineDdpscale;  // each engine has its own break-even

  static ThresholdGroup of(const ConfigParams& params) {
    return {params.world_size, params.exec, params.dtype, params.engine};
  }
  bool contains(const ConfigParams& params) const { return !(of(params) < *this) && !(*this < of(params)); }
  bool operator<(const ThresholdGroup& other) const {
    return std::tie(world_size, exec, dtype, engine) < std::tie(other.world_size, other.exec, other.dtype, other.engine);
  }
  // "2 ranks", or "2 ranks, exec graph, bfloat16, PyTorch DDP" where they differ from the defaults.
  std::string label() const;
  // A file-name-safe suffix: "w2", "w2_graph_bfloat16".
  std::string stem() const;
};

struct StudyAnalysis {
  std::vector<ConfigSummary> configs;     // sorted: model, scaling, profile, batch, world size
  std::vector<Comparison> comparisons;    // same order as their N-GPU configuration
  std::vector<size_t> unmatched;          // N-GPU configurations without a 1-GPU twin
  std::map<ThresholdGroup, BreakEven> break_even;                  // world size > 1
  // Per model family (model_family), only for groups that compared two families or more.
  std::map<ThresholdGroup, std::map<std::string, BreakEven>> break_even_by_family;
  std::map<ThresholdGroup, std::vector<ThresholdRow>> thresholds;  // world size > 1
  std::map<ThresholdGroup, std::vector<MeasuredThreshold>> measured_thresholds;  // world size > 1
  std::vector<std::string> models;        // distinct, in order of parameter count
  std::vector<int> world_sizes;           // distinct, ascending
  std::vector<std::string> nccl_profiles; // distinct, first seen
  std::map<int, PairedPriors> paired_priors;  // per world size > 1: the launch spread its comparisons share
};

StudyAnalysis analyze_study(const std::vector<ConfigRecord>& configs, const BootstrapOptions& bootstrap = {});

// The key two configurations must share to be compared (see Comparison).
std::string twin_key(const ConfigParams& params);

}  // namespace ddpscale
