#include "config_summary.hpp"

#include <algorithm>
#include <cmath>

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

ConfigSummary summarize_config(const ConfigRecord& config) {
  ConfigSummary summary;
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

  std::vector<double> throughputs;
  for (const RunRecord* run : ok_runs) throughputs.push_back(run->samples_per_second);
  const OutlierFilterResult filtered = remove_outliers_modified_z(throughputs);
  summary.outliers_removed = filtered.removed;
  summary.kept_throughputs = filtered.kept;
  summary.throughput = summarize(filtered.kept);

  std::array<std::vector<double>, kPhaseCount> phase_medians;
  std::vector<double> peaks, utilization, busy, calibration_host, calibration_device;
  for (size_t i : filtered.kept_indices) {
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
  return summary;
}

ConfigSpeedup speedup_over_one_gpu(const ConfigSummary& one_gpu, const ConfigSummary& n_gpu,
                                   const BootstrapOptions& options) {
  ConfigSpeedup result;
  result.model = n_gpu.params.model;
  result.parameters = n_gpu.params.parameters;
  result.batch = n_gpu.params.batch_per_rank;
  result.world_size = n_gpu.params.world_size;
  const SpeedupEstimate estimate =
      bootstrap_speedup(one_gpu.kept_throughputs, n_gpu.kept_throughputs, result.world_size, options);
  result.speedup = estimate.speedup;
  result.speedup_ci = estimate.speedup_ci;
  result.p_value = welch_t_test(n_gpu.kept_throughputs, one_gpu.kept_throughputs).p_value;
  return result;
}

RunOrder run_order(const ConfigSummary& a, const ConfigSummary& b) {
  if (a.first_start_ms == 0 || b.first_start_ms == 0) return RunOrder::unknown;
  const bool overlap = a.first_start_ms <= b.last_start_ms && b.first_start_ms <= a.last_start_ms;
  return overlap ? RunOrder::interleaved : RunOrder::one_after_the_other;
}

}  // namespace ddpscale
