// Host drift: whether the two halves of a speedup (an N-rank configuration and its 1-rank
// twin) ran on a host of the same speed. Every run starts with a fixed calibration (a host-only
// loop, and on GPUs a launch-bound kernel sequence: trainer/study/host_calibration.hpp) whose
// time is stored with the run; a host that slows down (frequency, a neighbour's job, thermal
// limits) makes that fixed work slower, whatever the model does. Works on plain records.
#pragma once
#include "results/analysis/study_analysis.hpp"
#include "results/store/run_record.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace ddpscale {

// Two halves whose calibration medians differ by more than this share ran under different
// conditions. 10%: on a steady host the median of one configuration's readings moves by a
// few percent (docs/methodology.md, "Host drift"), and a host-bound eager step moves with the
// host about one for one, so 10% of step time is the smallest difference that matters and
// that the readings can tell from their own noise.
constexpr double kDriftThreshold = 0.10;

// One comparison's two halves side by side; *_ratio = N-rank median / 1-rank median (NaN
// where either half has no reading of that kind).
struct DriftCheck {
  size_t comparison = 0;  // index into StudyAnalysis::comparisons
  double one_host_us = kNaN, n_host_us = kNaN, host_ratio = kNaN;
  double one_device_us = kNaN, n_device_us = kNaN, device_ratio = kNaN;
  // The host ratio beyond 1 +- threshold (as max(r, 1/r) - 1 > threshold). The device-launch
  // ratio is shown, not judged: in the interleaved pairs of a 2-H200 seed study,
  // whose halves met the same host by construction, rank 0's device-launch
  // medians differed by up to 15.6% while the host's agreed within 2.5%; a 10% flag on it
  // would mostly report its own noise.
  bool drifted = false;
};

// One entry per comparison that has readings on both halves, in the comparisons' order.
std::vector<DriftCheck> drift_checks(const StudyAnalysis& analysis, double threshold = kDriftThreshold);

// How far apart a ratio is from 1, symmetrically: 1.25 and 0.8 are both 25%.
double drift_of(double ratio);

// Every run's calibration on the study's time line (rank 0's start clock), for the plot.
struct CalibrationPoint {
  double minutes = 0;  // since the first run of the study started
  double host_us = kNaN, device_us = kNaN;  // rank 0's readings
  int world_size = 1;
};
std::vector<CalibrationPoint> calibration_timeline(const std::vector<ConfigRecord>& configs);

// The median over the study's runs of rank 0's host calibration (the fixed host-only loop
// before each run), in microseconds: how fast the host ran. NaN when no run carries one.
double median_host_calibration_us(const std::vector<ConfigRecord>& configs);

// True when at least one run of the study carries a calibration reading.
bool has_calibration(const std::vector<ConfigRecord>& configs);

}  // namespace ddpscale
