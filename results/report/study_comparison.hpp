// `ddpscale compare A B`: two studies of the same configurations, configuration by
// configuration. Per configuration measured in both: the throughput ratio B/A with a
// bootstrap interval and Welch's p-value, and (for an N-rank configuration whose 1-rank
// twin is in both studies) the speedup in A and in B, each as the report computes it,
// and whether their intervals overlap. Use cases: the same machine on two days, two
// builds, two machines, two NCCL profiles run as separate launches.
//
// Only studies (the HDF5 run files): the bootstrap resamples runs, and a report's
// summary.json holds per-configuration summaries, not the runs (docs/methodology.md,
// "Comparing two studies"). No LibTorch, no MPI.
#pragma once
#include "results/analysis/study_analysis.hpp"
#include "results/analysis/thresholds.hpp"
#include "results/statistics/statistics.hpp"
#include "results/store/run_record.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpscale {

// Every error of compare: it names the study (A or B) and the path, and says what to do.
class CompareError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CompareOptions {
  // The report's defaults (10,000 resamples, seed 20240917, 95%): the speedups printed here
  // are the report's, digit for digit. The throughput ratio uses the same resampling.
  BootstrapOptions bootstrap;
  double alpha = 0.05;  // "changed significantly": p < alpha and the ratio's interval excludes 1
  // ConfigParams fields (attribute names of config_fields.hpp) left out of the match, for
  // studies that differ in them on purpose: {"nccl_profile"} compares two profiles run as
  // separate launches. `runs` and `seed` are never matched (they pick how many and which
  // samples, not what is measured).
  std::vector<std::string> ignore_fields;
  LoadOptions load;  // skip_bad, as `ddpscale report --skip-bad`
};

// One study as the comparison names it.
struct ComparedStudy {
  std::string path;
  std::optional<StudyMetadata> metadata;  // absent when the folder has no study.h5
  size_t configurations = 0;
  std::vector<std::string> skipped;  // "path: why", only with load.skip_bad
};

// Whether the speedups of a configuration in A and in B agree.
enum class SpeedupAgreement {
  not_compared,      // a 1-rank configuration, or its 1-rank twin is missing in A or in B
  agree,             // both 95% intervals exist and overlap
  differ,            // both intervals exist and are disjoint
  without_interval,  // a side has fewer than 2 kept runs (the report prints [n/a])
};
const char* agreement_name(SpeedupAgreement agreement);  // "not compared", "agree", "differ", "no interval"

// A configuration measured in both studies.
struct ConfigComparison {
  std::string key;         // the matched fields (comparison_match_key)
  std::string id_a, id_b;  // the configuration's id in each study (differ only on ignored fields)
  ConfigParams params;     // A's
  Summary throughput_a, throughput_b;  // kept runs (failed runs and outliers out, as in the report)
  double ratio = kNaN;     // mean throughput B / mean throughput A
  Interval ratio_ci;       // bootstrap percentile; invalid when a side has fewer than 2 kept runs
  double p_value = kNaN;   // Welch, B against A
  bool significant = false;
  // World size > 1 only: the speedup over the 1-rank twin in each study, as analyze_study
  // computes it for the report (absent: no twin in that study).
  std::optional<ConfigSpeedup> speedup_a, speedup_b;
  SpeedupAgreement agreement = SpeedupAgreement::not_compared;
};

struct ComparisonResult {
  ComparedStudy a, b;
  CompareOptions options;
  std::vector<ConfigComparison> configs;  // in the report's order of A's configurations
  std::vector<std::string> only_in_a;     // ids, in the report's order
  std::vector<std::string> only_in_b;
  size_t speedups_compared = 0;           // agree + differ + without_interval
  size_t speedups_agree = 0;
  size_t speedups_differ = 0;
  size_t speedups_without_interval = 0;
  std::vector<size_t> significant;        // indices into configs
  // The median over compared configurations of the speedup interval's half-width relative
  // to the speedup, in each study (NaN without intervals): agreement bought with wide
  // intervals shows here.
  double median_relative_half_width_a = kNaN, median_relative_half_width_b = kNaN;
  // Each study's median host calibration (host_drift.hpp; NaN without one). A study's
  // intervals cover its own host's launches, not another host's speed: where these differ
  // by more than kDriftThreshold the summary says so.
  double host_calibration_us_a = kNaN, host_calibration_us_b = kNaN;
  // "speedups agree on 47 of 52 configurations; throughput changed significantly on 3: ..."
  std::string summary_line;
};

// Loads both studies (a study folder, or one <config-id>.h5, as `ddpscale report` takes)
// and compares them. Throws CompareError for a missing path, a report folder or
// summary.json (with why, and what to pass instead), a folder that is not a study, an
// unknown field in ignore_fields, two configurations of one study that the match cannot
// tell apart, and studies without a configuration in common.
ComparisonResult compare_studies(const std::string& dir_a, const std::string& dir_b,
                                 const CompareOptions& options = {});
// The same on studies already loaded (what compare_studies does after loading).
ComparisonResult compare_loaded(const LoadedStudy& a, const LoadedStudy& b, const CompareOptions& options = {});

// The fields two configurations must share to be compared: every field --resume matches
// (config_fields.hpp) except runs, seed and options.ignore_fields, as "name=value|...".
std::string comparison_match_key(const ConfigParams& params, const std::vector<std::string>& ignore_fields = {});

std::string comparison_markdown(const ComparisonResult& result);
std::string comparison_html(const ComparisonResult& result);
std::string comparison_csv(const ComparisonResult& result);   // one row per configuration, both or one study
std::string comparison_json(const ComparisonResult& result);

// Writes compare.md, compare.html, compare.csv and compare.json into out_dir (created if
// missing) and returns their paths, compare.md first. Throws std::runtime_error naming the
// file on a write error.
std::vector<std::string> write_comparison(const ComparisonResult& result, const std::string& out_dir);

}  // namespace ddpscale
