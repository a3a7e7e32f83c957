#include "results/analysis/config_summary.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace ddpscale {

std::vector<double> phase_per_step(const RunRecord& run, Phase phase) {
  const size_t p = static_cast<size_t>(phase);
  std::vector<const std::vector<float>*> timed;  // the ranks that recorded this phase
  for (const RankTimings& rank : run.ranks)
    if (p < rank.phase_us.size() && !rank.phase_us[p].empty()) timed.push_back(&rank.phase_us[p]);
  if (timed.empty()) return {};
  size_t steps = timed.front()->size();
  for (const std::vector<float>* values : timed) steps = std::min(steps, values->size());

  std::vector<double> per_step(steps);
  for (size_t s = 0; s < steps; ++s) {
    if (phase == Phase::step) {
      double slowest = (*timed.front())[s];
      for (const std::vector<float>* values : timed) slowest = std::max(slowest, static_cast<double>((*values)[s]));
      per_step[s] = slowest;
    } else {
      double sum = 0;
      for (const std::vector<float>* values : timed) sum += (*values)[s];
      per_step[s] = sum / static_cast<double>(timed.size());
    }
  }
  return per_step;
}

std::array<double, kPhaseCount> run_phase_medians_us(const RunRecord& run) {
  std::array<double, kPhaseCount> medians;
  for (int p = 0; p < kPhaseCount; ++p) medians[static_cast<size_t>(p)] = median(phase_per_step(run, static_cast<Phase>(p)));
  return medians;
}

double rank0_calibration(const RunRecord& run, std::vector<float> RankTimings::*series) {
  if (run.ranks.empty() || (run.ranks.front().*series).empty()) return kNaN;
  const float reading = (run.ranks.front().*series).front();
  return std::isfinite(reading) ? reading : kNaN;
}

namespace {

// The positions in ok_runs of the runs the modified Z-score filter keeps within each
// launch, ascending.
std::vector<size_t> kept_without_outliers(const std::vector<const RunRecord*>& ok_runs) {
  std::map<int, std::vector<size_t>> by_launch;
  for (size_t i = 0; i < ok_runs.size(); ++i) by_launch[ok_runs[i]->launch].push_back(i);
  std::vector<size_t> kept;
  for (const auto& [launch, members] : by_launch) {
    std::vector<double> throughputs;
    for (size_t i : members) throughputs.push_back(ok_runs[i]->samples_per_second);
    for (size_t k : remove_outliers_modified_z(throughputs).kept_indices) kept.push_back(members[k]);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

}  // namespace

LaunchGroups throughputs_by_launch(const ConfigSummary& summary) {
  LaunchGroups groups(static_cast<size_t>(std::max(1, summary.launches)));
  for (size_t i = 0; i < summary.kept_throughputs.size(); ++i) {
    // A summary made by hand without launches (tests, older callers) is one launch.
    const int recorded = i < summary.kept_launches.size() ? summary.kept_launches[i] : 0;
    const auto launch = static_cast<size_t>(std::max(0, recorded));
    if (launch >= groups.size()) groups.resize(launch + 1);
    groups[launch].push_back(summary.kept_throughputs[i]);
  }
  return groups;
}

CoreSharing core_sharing_of(const ConfigRecord& config) {
  for (const RunRecord& run : config.runs) {
    CoreSharing sharing;
    std::set<int> seen;
    size_t masks_total = 0;
    bool complete = !run.ranks.empty();
    for (const RankTimings& rank : run.ranks) {
      const auto mask = rank.instruments.find("cpu_mask");
      const auto threads = rank.instruments.find("intra_op_threads");
      if (mask == rank.instruments.end() || mask->second.empty() || threads == rank.instruments.end() ||
          threads->second.empty()) {
        complete = false;
        break;
      }
      for (float core : mask->second) seen.insert(static_cast<int>(core));
      masks_total += mask->second.size();
      const int mask_size = static_cast<int>(mask->second.size());
      sharing.smallest_mask = sharing.ranks == 0 ? mask_size : std::min(sharing.smallest_mask, mask_size);
      sharing.threads += static_cast<int>(threads->second.front());
      ++sharing.ranks;
    }
    if (!complete) continue;
    sharing.mask_cores = static_cast<int>(seen.size());
    sharing.masks_overlap = masks_total > seen.size();
    return sharing;
  }
  return {};
}

ConfigSummary summarize_config(const ConfigRecord& config) {
  ConfigSummary summary;
  summary.cores = core_sharing_of(config);
  summary.id = config.id;
  summary.params = config.params;
  summary.runs_total = config.runs.size();

  std::vector<const RunRecord*> ok_runs;
  for (const RunRecord& run : config.runs) {
    if (run.status == RunStatus::ok) {
      ok_runs.push_back(&run);
    } else {
      summary.failures.push_back("run " + std::to_string(run.index) + ": " + run.failure);
    }
  }
  summary.runs_ok = ok_runs.size();
  summary.runs_failed = summary.runs_total - summary.runs_ok;
  if (summary.runs_total > 0)
    summary.success_rate = static_cast<double>(summary.runs_ok) / static_cast<double>(summary.runs_total);

  for (const RunRecord& run : config.runs) {
    if (run.start_unix_ms <= 0) continue;
    if (summary.first_start_ms == 0 || run.start_unix_ms < summary.first_start_ms) summary.first_start_ms = run.start_unix_ms;
    summary.last_start_ms = std::max(summary.last_start_ms, run.start_unix_ms);
  }

  const std::vector<size_t> kept = kept_without_outliers(ok_runs);
  summary.outliers_removed = ok_runs.size() - kept.size();
  for (size_t i : kept) {
    summary.kept_throughputs.push_back(ok_runs[i]->samples_per_second);
    summary.kept_launches.push_back(ok_runs[i]->launch);
  }
  summary.throughput = summarize_positive(summary.kept_throughputs);  // an interval that stays above 0
  summary.launches = config.launches;
  for (const RunRecord& run : config.runs) summary.launches = std::max(summary.launches, run.launch + 1);
  summary.launch_variance = launch_variance_components(throughputs_by_launch(summary));
  summary.levels = two_level_split(summary.kept_throughputs);
  summary.separate_levels = has_separate_levels(summary.levels);

  std::array<std::vector<double>, kPhaseCount> phase_medians;
  std::vector<double> peaks, utilization, busy, calibration_host, calibration_device;
  for (size_t i : kept) {
    const RunRecord& run = *ok_runs[i];
    summary.kept_run_indices.push_back(run.index);
    int64_t peak = 0;
    for (const RankTimings& rank : run.ranks) {
      peak = std::max(peak, rank.peak_memory_bytes);
      utilization.insert(utilization.end(), rank.gpu_utilization_pct.begin(), rank.gpu_utilization_pct.end());
    }
    if (peak > 0) peaks.push_back(static_cast<double>(peak));
    double least_busy = kNaN;
    for (const RankTimings& rank : run.ranks)
      if (!rank.gpu_busy_us.empty() && !(rank.gpu_busy_us.front() >= least_busy)) least_busy = rank.gpu_busy_us.front();
    if (std::isfinite(least_busy)) busy.push_back(least_busy);
    if (const double reading = rank0_calibration(run, &RankTimings::calibration_host_us); std::isfinite(reading))
      calibration_host.push_back(reading);
    if (const double reading = rank0_calibration(run, &RankTimings::calibration_device_us); std::isfinite(reading))
      calibration_device.push_back(reading);
    const std::array<double, kPhaseCount> medians = run_phase_medians_us(run);
    for (size_t p = 0; p < medians.size(); ++p)
      if (std::isfinite(medians[p])) phase_medians[p].push_back(medians[p]);  // untimed phases stay out
  }
  for (size_t p = 0; p < phase_medians.size(); ++p) summary.phase_us[p] = summarize(phase_medians[p]);
  summary.peak_memory_bytes = median(peaks);
  summary.gpu_utilization_pct = mean(utilization);
  summary.gpu_busy_us = median(busy);
  summary.calibration_host_us = median(calibration_host);
  summary.calibration_device_us = median(calibration_device);
  summary.paired = config.paired;
  return summary;
}

ConfigSpeedup speedup_over_one_gpu(const ConfigSummary& one_gpu, const ConfigSummary& n_gpu,
                                   const BootstrapOptions& options) {
  ConfigSpeedup result;
  result.model = n_gpu.params.model;
  result.parameters = n_gpu.params.parameters;
  result.batch = n_gpu.params.batch_per_rank;
  result.world_size = n_gpu.params.world_size;
  const LaunchSpeedup over_launches = two_level_bootstrap_speedup(
      throughputs_by_launch(one_gpu), throughputs_by_launch(n_gpu), result.world_size, options);
  result.speedup = over_launches.estimate.speedup;
  result.speedup_ci = over_launches.estimate.speedup_ci;
  result.launches = static_cast<int>(over_launches.launches);
  // Welch's test of the runs: the tables' second opinion beside the interval, which decides.
  result.p_value = welch_t_test(n_gpu.kept_throughputs, one_gpu.kept_throughputs).p_value;
  return result;
}

RunOrder run_order(const ConfigSummary& a, const ConfigSummary& b) {
  if (a.first_start_ms == 0 || b.first_start_ms == 0) return RunOrder::unknown;
  const bool overlap = a.first_start_ms <= b.last_start_ms && b.first_start_ms <= a.last_start_ms;
  return overlap ? RunOrder::interleaved : RunOrder::one_after_the_other;
}

}  // namespace ddpscale
