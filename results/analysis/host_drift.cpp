#include "results/analysis/host_drift.hpp"

#include "results/analysis/config_summary.hpp"

#include <algorithm>
#include <cmath>

namespace ddpscale {

double drift_of(double ratio) {
  if (!std::isfinite(ratio) || ratio <= 0) return kNaN;
  return std::max(ratio, 1 / ratio) - 1;
}

std::vector<DriftCheck> drift_checks(const StudyAnalysis& analysis, double threshold) {
  std::vector<DriftCheck> checks;
  for (size_t i = 0; i < analysis.comparisons.size(); ++i) {
    const ConfigSummary& one = analysis.configs[analysis.comparisons[i].one_gpu];
    const ConfigSummary& n = analysis.configs[analysis.comparisons[i].n_gpu];
    DriftCheck check;
    check.comparison = i;
    check.one_host_us = one.calibration_host_us;
    check.n_host_us = n.calibration_host_us;
    check.host_ratio = n.calibration_host_us / one.calibration_host_us;
    check.one_device_us = one.calibration_device_us;
    check.n_device_us = n.calibration_device_us;
    check.device_ratio = n.calibration_device_us / one.calibration_device_us;
    if (!std::isfinite(check.host_ratio) && !std::isfinite(check.device_ratio)) continue;
    check.drifted = drift_of(check.host_ratio) > threshold;  // host only: see DriftCheck::drifted
    checks.push_back(check);
  }
  return checks;
}

bool has_calibration(const std::vector<ConfigRecord>& configs) {
  for (const ConfigRecord& config : configs)
    for (const RunRecord& run : config.runs)
      if (std::isfinite(rank0_calibration(run, &RankTimings::calibration_host_us)) ||
          std::isfinite(rank0_calibration(run, &RankTimings::calibration_device_us)))
        return true;
  return false;
}

double median_host_calibration_us(const std::vector<ConfigRecord>& configs) {
  std::vector<double> readings;
  for (const ConfigRecord& config : configs)
    for (const RunRecord& run : config.runs) {
      const double us = rank0_calibration(run, &RankTimings::calibration_host_us);
      if (std::isfinite(us)) readings.push_back(us);
    }
  return readings.empty() ? kNaN : median(readings);
}

std::vector<CalibrationPoint> calibration_timeline(const std::vector<ConfigRecord>& configs) {
  std::vector<std::pair<int64_t, CalibrationPoint>> timed;
  for (const ConfigRecord& config : configs) {
    for (const RunRecord& run : config.runs) {
      if (run.start_unix_ms <= 0) continue;
      CalibrationPoint point;
      point.host_us = rank0_calibration(run, &RankTimings::calibration_host_us);
      point.device_us = rank0_calibration(run, &RankTimings::calibration_device_us);
      point.world_size = config.params.world_size;
      if (std::isfinite(point.host_us) || std::isfinite(point.device_us)) timed.emplace_back(run.start_unix_ms, point);
    }
  }
  std::sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CalibrationPoint> points;
  for (auto& [start_ms, point] : timed) {
    point.minutes = static_cast<double>(start_ms - timed.front().first) / 60000.0;
    points.push_back(point);
  }
  return points;
}

}  // namespace ddpscale
