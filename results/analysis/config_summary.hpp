// One configuration's runs reduced to what the report prints: throughput and the time of
// each phase, summarised over the runs that succeeded and were not outliers.
// Works on the plain records of run_record.hpp; knows nothing of HDF5.
#pragma once
#include "results/analysis/thresholds.hpp"
#include "results/statistics/launch_statistics.hpp"
#include "results/statistics/statistics.hpp"
#include "results/store/run_record.hpp"

#include <array>
#include <string>
#include <vector>

namespace ddpscale {

// The per-step value of one phase across ranks:
// - Phase::step takes the slowest rank: data parallelism goes at the pace of its slowest
//   replica, and that is the time the user waits.
// - Every other phase takes the mean over ranks: a typical replica's breakdown, not one
//   rank's (rank 0 also does logging and checkpoint bookkeeping). Because "step" is a max
//   and the others are means, the phases need not add up exactly to the step here.
// Steps beyond the shortest rank's record are ignored; empty when no rank timed the phase.
std::vector<double> phase_per_step(const RunRecord& run, Phase phase);

// The median over steps of phase_per_step, per phase, in microseconds (NaN where not timed,
// e.g. allreduce phases at world size 1). The median, because one slow step (a page fault,
// a clock change) must not move a run's typical step.
std::array<double, kPhaseCount> run_phase_medians_us(const RunRecord& run);

// Rank 0's reading of one calibration series (RankTimings::calibration_host_us or
// calibration_device_us) in a run; NaN where it has none. Rank 0, not the slowest rank: rank 0
// is in every configuration's group (groups are the first N ranks), so the 1-rank and N-rank
// halves of a speedup are compared on the same process and GPU, while the largest of N noisy
// readings grows with N by itself (2 H200: the device-launch median of the
// slowest rank was up to 30% above the 1-rank half's, rank 0's within 16%, in interleaved
// pairs that met the same host).
double rank0_calibration(const RunRecord& run, std::vector<float> RankTimings::*series);

// How a configuration's ranks used the host's cores, from the cpu_mask and intra_op_threads
// instruments of its first run that has them on every rank (ranks 0: not recorded).
struct CoreSharing {
  int ranks = 0;
  int mask_cores = 0;           // distinct cores over every rank's mask
  int smallest_mask = 0;        // the fewest cores one rank's mask held
  int threads = 0;              // intra-op threads over every rank
  bool masks_overlap = false;   // some core is in more than one rank's mask
  bool known() const { return ranks > 0; }
  // More threads than the cores they may run on.
  bool oversubscribed() const { return threads > mask_cores; }
};
CoreSharing core_sharing_of(const ConfigRecord& config);

struct ConfigSummary {
  std::string id;
  ConfigParams params;
  size_t runs_total = 0;
  size_t runs_ok = 0;
  size_t runs_failed = 0;                  // excluded from every statistic below
  double success_rate = kNaN;              // runs_ok / runs_total; NaN without runs
  std::vector<std::string> failures;       // "run 3: NaN loss at step 17", one per failed run
  size_t outliers_removed = 0;             // ok runs removed by the modified Z-score on throughput
  std::vector<int> kept_run_indices;       // RunRecord::index of the runs the summaries use
  std::vector<double> kept_throughputs;    // their samples per second (for speedups and tests)
  std::vector<int> kept_launches;          // the launch of each kept run (RunRecord::launch); none: launch 0
  // The launches the runs came from, and how the kept throughputs spread over them: the
  // share of their variance between launches (NaN with one launch), and whether they fall
  // into two separate speed levels (launch_statistics.hpp).
  int launches = 1;
  VarianceComponents launch_variance;
  LevelSplit levels;
  bool separate_levels = false;
  Summary throughput;                      // samples per second, global; its interval on the log scale
  std::array<Summary, kPhaseCount> phase_us;  // of the runs' phase medians, indexed by Phase
  // Of the same kept runs: the median over runs of the largest rank's allocator peak (NaN
  // where the device does not report one, e.g. CPU), and the mean of every NVML
  // utilisation sample of every rank (NaN without samples).
  double peak_memory_bytes = kNaN;
  double gpu_utilization_pct = kNaN;
  // The kernel-time floor (--gpu-busy-steps): median over runs of the least busy rank's GPU
  // microseconds per step. Not the busiest: an NCCL kernel that waits for a peer counts as
  // busy, and on 2 H200s the rank that reached the collective first looked 3x busier
  // (1,742 against 117 us per step). NaN where not measured.
  double gpu_busy_us = kNaN;
  // The host-drift calibration (RankTimings::calibration_*): median over the kept runs of
  // rank 0's reading (rank0_calibration says why), in microseconds; NaN where none.
  double calibration_host_us = kNaN;
  double calibration_device_us = kNaN;
  // When the first and the last run started (Unix ms, rank 0's clock), over every run of
  // the configuration; 0 where the runs' start times were not stored (files of older builds).
  int64_t first_start_ms = 0, last_start_ms = 0;
  // The paired design's blocks against the 1-rank twin, one per launch (N-rank only; empty
  // where the speedup was measured with runs alone).
  std::vector<PairedLaunch> paired;
  CoreSharing cores;
};

// In what order a 1-GPU configuration's runs and its N-GPU twin's ran, read from their
// start times: interleaved (the two spans overlap: the runs alternated, as a sweep's
// interleave_runs does), one after the other, or unknown (start times not stored).
enum class RunOrder { unknown, interleaved, one_after_the_other };
RunOrder run_order(const ConfigSummary& a, const ConfigSummary& b);

// The kept throughputs grouped by launch: element l holds launch l's (empty where none).
LaunchGroups throughputs_by_launch(const ConfigSummary& summary);

// Failed runs out (counted), then outliers by modified Z-score (> 3.5) on the runs'
// throughputs, within each launch (a launch whose host ran slower is a level the interval
// must cover, not an outlier); a run that is an outlier in throughput leaves every summary, so that the
// phase breakdown describes the same runs as the throughput.
ConfigSummary summarize_config(const ConfigRecord& config);

// An N-GPU configuration against its 1-GPU twin (same model and per-rank batch), on the
// throughputs that survived outlier removal, ready for pays_off and the threshold table.
// Runs from one launch: the bootstrap interval; from several, the two-level bootstrap over
// launches (two_level_bootstrap_speedup). Either way p_value is Welch's test of the runs.
ConfigSpeedup speedup_over_one_gpu(const ConfigSummary& one_gpu, const ConfigSummary& n_gpu,
                                   const BootstrapOptions& options = {});

}  // namespace ddpscale
