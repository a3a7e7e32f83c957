// The report's launches section: per configuration, how its runs spread over the launches
// that measured them (each launch's mean, the share of the variance between launches), a
// flag where the runs fall into two separate speed levels, and what the instruments read in
// each launch (cores, clocks, context switches, steal), so a level can be traced to its
// cause. Apart from report_writer.cpp, which orders sections.
#pragma once
#include "results/analysis/launch_precision.hpp"
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_document.hpp"

#include <string>
#include <vector>

namespace ddpscale {

// The half-width, relative to the speedup, that the launches section sizes a rerun for,
// where the spec set no target_half_width (with one, the section sizes for that).
inline constexpr double kPlannedHalfWidth = 0.05;

// What one launch's runs of a configuration read on its instruments, summarised over runs
// and ranks (medians; "n/a" where not recorded).
struct LaunchInstruments {
  int launch = 0;
  size_t runs = 0;
  std::vector<int64_t> process_ids;  // distinct, in rank order of first appearance
  std::string cores;                 // "0-3,8" : the cores the ranks' threads last ran on
  double cpu_mhz = kNaN;
  double involuntary_switches = kNaN;  // per run, summed over ranks
  double steal_ms = kNaN;              // per run
  double gpu_sm_clock_mhz = kNaN;
  double gpu_memory_clock_mhz = kNaN;
  uint64_t clock_event_reasons = 0;    // OR over runs and ranks
  double process_shift_mib = kNaN;     // the device memory its processes held first (median)
  double mean_throughput = kNaN;       // of the runs that succeeded
};
std::vector<LaunchInstruments> instruments_by_launch(const ConfigRecord& config);

// "mlp-medium b32 2 GPUs", with the execution mode, precision and engine where they differ
// from the defaults: how the report's per-configuration tables name a configuration.
std::string config_label(const ConfigParams& p);

// "0-3,8,10-11" from sorted distinct cores.
std::string core_ranges(const std::vector<int>& cores);
// NVML's clock-event reason bits in words ("SW power cap, HW slowdown"), "none" for 0.
std::string clock_event_reason_names(uint64_t reasons);

class LaunchText {
 public:
  // `rule`: the spec's target_half_width and min_launches (launch_rule_of_spec), which
  // explain configurations measured over fewer launches than the study's most.
  LaunchText(const StudyAnalysis& analysis, const std::vector<ConfigRecord>& configs, const LaunchRule& rule,
             ReportDocument& doc);
  // The section's body, below its heading.
  void write_section();
  // For the executive summary: "3 launches; 2 of 8 configurations show separate speed
  // levels (section N)" style facts, "" with one launch and no levels.
  std::string summary_note(const std::string& section_ref) const;

 private:
  void spread_table();
  void precision_paragraph();
  // How far the launches took the comparisons: met the target, and the largest of them.
  struct PrecisionTally {
    std::vector<std::string> short_of_target;  // "gru b32 2 GPUs: ±7.1% over 40 launches", every launch allowed
    std::vector<std::string> short_unfinished; // the same, measured in fewer launches than allowed (a stopped study)
    std::vector<double> launches_of_met;       // launches of each comparison that met it
    size_t comparisons = 0;
    int most_launches = 1;
  };
  PrecisionTally precision_tally() const;
  int launches_needed(size_t config) const;
  double planned_half_width() const;
  void instruments_table();
  const ConfigRecord* record_of(const std::string& id) const;

  const StudyAnalysis& a_;
  const std::vector<ConfigRecord>& configs_;
  LaunchRule rule_;
  ReportDocument& doc_;
};

}  // namespace ddpscale
