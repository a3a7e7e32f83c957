// Predicted scaling: the step time, throughput, speedup and efficiency of a configuration on
// N GPUs in one node or on K nodes of G GPUs, from its 1-GPU measurements, the study's
// allreduce curve and an overlap simulation, with 95% prediction intervals; and the check
// of the predictor against the study's own N-GPU measurements. docs/methodology.md
// ("Predicted scaling") states the model, its assumptions and what the intervals cover.
#pragma once
#include "prediction/allreduce_cost.hpp"
#include "prediction/node_sharing.hpp"
#include "results/statistics/statistics.hpp"
#include "results/store/run_record.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace ddpscale {

// A phase's mean over runs, its spread between runs and the number of runs.
struct PhaseStats {
  double mean = kNaN;
  double sd = kNaN;
  size_t n = 0;
};

// What the predictor needs of one measured configuration.
struct MeasuredConfig {
  std::string id;
  ConfigParams params;
  PhaseStats step_us, backward_us, throughput;  // throughput: samples per second
  // When each gradient became ready in backward (not recorded: the even stream stands in).
  GradientTiming gradient_timing;
  // An N-GPU configuration's speedup over its 1-GPU twin as the paired design measured it
  // (1-rank and N-rank blocks taking turns in the same ranks, so the host's state cancels);
  // NaN where it was measured by whole runs alone. The self-check and the node-sharing
  // costs set predictions against it where it exists.
  double paired_speedup = kNaN;
  bool speedup_paired() const { return std::isfinite(paired_speedup); }
};

struct StudyDigest {
  std::vector<MeasuredConfig> configs;
  std::vector<double> commbench_bytes, commbench_time_us;
  int commbench_ranks = 0;  // the world size the curve was measured at (0: no curve)
  std::vector<std::string> gpu_names;  // the study's GPUs, where its study.h5 names them
};

struct PredictOptions {
  std::vector<Topology> targets;  // where to predict
  NetworkProfile network;         // between nodes (needed when a target has nodes > 1)
  AllreduceCurve allreduce;       // given (--allreduce): replaces the study's own commbench curve
  std::string allreduce_hardware; // the machine that curve was measured on (a named one's `about`; "": unknown)
  // Given (--allreduce NAME whose entry has one): calibrates a study without N-GPU
  // configurations of its own, and is checked on a study with them; a target of G GPUs a
  // node takes the cost at G (measured there, or carried: node_sharing_at).
  NodeSharingProfile node_sharing;
  double first_bucket_mb = kDefaultFirstBucketMb;  // the engine's (not stored with a study)
  int draws = 4000;               // Monte Carlo draws per prediction
  uint64_t seed = 20261123;       // fixed: the same study gives the same intervals
};

struct PredictedValue {
  double point = kNaN;
  Interval interval95;
};

struct Prediction {
  std::string model;
  int64_t parameters = 0;
  int64_t batch_per_rank = 0;     // on the target
  int64_t global_batch = 0;
  std::string scaling, exec;
  Topology topology;
  std::string algorithm;          // of the largest bucket's allreduce
  // Buckets placed as the reducer places them, ready when their recorded gradients were;
  // false: one even stream of gradients over backward (the study recorded no timing).
  bool recorded_gradient_timing = false;
  double allreduce_total_us = kNaN, allreduce_exposed_us = kNaN;  // point estimates
  PredictedValue step_us, throughput, speedup, efficiency;
  bool calibrated = false;        // the model error of the study's N-GPU runs is included
};

// The self-check for one measured N-GPU configuration, predicted without its own runs.
struct ValidationRow {
  std::string id, model, exec;
  int64_t parameters = 0, batch_per_rank = 0;
  int world_size = 0;
  double measured_throughput = kNaN;
  // Its speedup over the 1-GPU twin: the paired design's (measured_paired) where it measured
  // one, which the errors and coverage below are then taken against; else the mean
  // throughputs' ratio, and the checks are of the mean throughput.
  double measured_speedup = kNaN;
  bool measured_paired = false;
  Prediction model_only;   // from its 1-GPU twin and the allreduce curve only
  Prediction calibrated;   // also the other N-GPU configurations' model errors (leave one out)
  // Calibrated by the other models' configurations only (leave one model out): how well the
  // calibration carries to a model the study never ran on N GPUs. Not made (other_models
  // false) when no other model was measured at the same N.
  bool other_models = false;
  Prediction other_models_calibrated;
  // Calibrated by the named profile's node-sharing cost at world_size alone
  // (options.node_sharing): what a study of one GPU on this hardware would be told. Not made
  // where none is given.
  bool node_sharing = false;
  Prediction node_sharing_calibrated;
  double model_only_error = kNaN, calibrated_error = kNaN, other_models_error = kNaN;  // relative (see measured_speedup)
  double node_sharing_error = kNaN;
  bool model_only_covered = false, calibrated_covered = false, other_models_covered = false;
  bool node_sharing_covered = false;
};

struct ValidationSummary {
  size_t configurations = 0;
  double model_only_median_abs_error = kNaN, calibrated_median_abs_error = kNaN;
  double model_only_coverage = kNaN, calibrated_coverage = kNaN;  // fraction inside the 95% interval
  size_t other_models_configurations = 0;  // those with another model to calibrate from
  double other_models_median_abs_error = kNaN, other_models_coverage = kNaN;
  size_t node_sharing_configurations = 0;  // checked against the named profile's cost
  double node_sharing_median_abs_error = kNaN, node_sharing_coverage = kNaN;
};

struct ScalingPrediction {
  std::vector<Prediction> predictions;
  std::vector<ValidationRow> validation;
  ValidationSummary summary;
  double allreduce_log_sd = 0;          // the curve's interpolation error, as used
  std::string allreduce_curve;          // which curve, and where it came from
  int allreduce_curve_ranks = 0;        // the GPUs it was measured on
  size_t calibration_configurations = 0;  // N-GPU configurations whose errors calibrate
  // What the forward predictions are calibrated by, in words ("" where they are model only).
  std::string calibration;
  // The study's own model errors, one cost per GPU count it measured: the node-sharing costs
  // it would give a named profile (not given() where it has no N-GPU configuration).
  NodeSharingProfile measured_node_sharing;
  // The named profile's costs the forward predictions used, one per GPU count a node of a
  // target has (empty where the study calibrates itself or no profile was given).
  std::vector<NodeSharingAtN> node_sharing_used;
  std::vector<std::string> notes;       // what was skipped and why
  // Set by assess_predictions (prediction_trust.hpp): what the reader must know before using
  // the predictions (the study and its allreduce curve measured on different hardware), and
  // why they are not to be trusted at all ("" where the self-check passed or was not made).
  std::vector<std::string> warnings;
  std::string unreliable;
};

// The curve a prediction uses: options.allreduce when given, else the study's own commbench
// (not given() when the study has none: a sweep of 1 rank measures none).
AllreduceCurve allreduce_curve_of(const StudyDigest& study, const PredictOptions& options);

// Throws std::invalid_argument when allreduce_curve_of(study, options) is not given().
ScalingPrediction predict_scaling(const StudyDigest& study, const PredictOptions& options);

}  // namespace ddpscale
