#include "prediction/scaling_prediction.hpp"

#include "prediction/overlap_simulation.hpp"
#include "results/analysis/study_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <utility>

namespace ddpscale {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// A standard normal draw from the generator's raw output (Box-Muller), so the intervals are
// the same with every standard library.
double standard_normal(std::mt19937_64& generator) {
  constexpr double kTwoPi = 6.283185307179586;
  const double u1 = (static_cast<double>(generator() >> 11) + 0.5) * 0x1.0p-53;
  const double u2 = static_cast<double>(generator() >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

double standard_error(const PhaseStats& s) {
  return s.n > 1 && std::isfinite(s.sd) ? s.sd / std::sqrt(static_cast<double>(s.n)) : 0.0;
}

double value_or_zero(double x) { return std::isfinite(x) ? x : 0.0; }

// A draw of a positive quantity (a time, a throughput) of this mean and standard error: the
// log-normal with the same mean and variance. A normal draw goes negative once the error is
// a third of the mean or more, as a CPU study's short steps can be (one slow run among six),
// and a negative step is a negative throughput.
double positive_draw(double mean, double error, std::mt19937_64& generator) {
  const double z = standard_normal(generator);
  if (!(mean > 0) || !(error > 0)) return mean;
  const double relative = error / mean;
  const double log_variance = std::log1p(relative * relative);
  return mean * std::exp(std::sqrt(log_variance) * z - log_variance / 2);
}

// The buckets whose allreduces a prediction overlaps with backward: placed as the reducer
// places them from the recorded gradient timing where the study has it, else cut from one
// even stream of gradients. Sizes as they travel: 2 bytes an element with a bfloat16
// allreduce, else the parameters' own (4 for float32; the even stream assumes float32).
std::vector<SimulatedBucket> planned_buckets(const ConfigParams& params, const GradientTiming& timing,
                                             double first_bucket_mb) {
  const bool bfloat16 = params.allreduce_dtype == "bfloat16";
  if (timing.recorded()) return recorded_buckets(timing, {first_bucket_mb, params.bucket_mb}, bfloat16 ? 2.0 : 0.0);
  const double gradient_bytes = static_cast<double>(params.parameters) * (bfloat16 ? 2.0 : 4.0);
  return even_stream(bucket_sizes(gradient_bytes, first_bucket_mb * kMiB, params.bucket_mb * kMiB));
}

// The allreduce time that one prediction's buckets leave exposed after a backward of a given
// length; their allreduce times on the target are worked out once, and every draw scales
// them by one factor.
class ExposedAllreduce {
 public:
  ExposedAllreduce(std::vector<SimulatedBucket> buckets, std::vector<double> bucket_us, bool overlap)
      : buckets_(std::move(buckets)), bucket_us_(std::move(bucket_us)), drawn_us_(buckets_.size()), overlap_(overlap) {}

  // timeline (may be null): the whole simulated timeline, for the point estimate.
  double operator()(double backward_us, double allreduce_factor, OverlapTimeline* timeline) {
    for (size_t i = 0; i < buckets_.size(); ++i) drawn_us_[i] = bucket_us_[i] * allreduce_factor;
    const OverlapTimeline t = simulate_overlap(buckets_, drawn_us_, backward_us, overlap_);
    if (timeline) *timeline = t;
    return t.allreduce_exposed_us;
  }

 private:
  std::vector<SimulatedBucket> buckets_;
  std::vector<double> bucket_us_, drawn_us_;
  bool overlap_;
};

double largest_bytes(const std::vector<SimulatedBucket>& buckets) {
  double largest = 0;
  for (const SimulatedBucket& bucket : buckets) largest = std::max(largest, bucket.bytes);
  return largest;
}

// Samples per second of `ranks` ranks that each take step_us, as the measured 1-GPU
// throughput relates to its step (wall time includes what step medians leave out); the 1-GPU
// step is compute_step (its mean, or a draw of it).
double throughput_of_ranks(const MeasuredConfig& compute, double compute_step, int ranks, double step_us) {
  return compute.throughput.mean * compute_step * ranks / step_us;
}

// The measured configurations a prediction starts from: `base`, the 1-GPU configuration
// whose speedup is predicted, and `compute`, the 1-GPU configuration that did one rank's
// share of the work (the same under weak scaling; the batch split N ways under strong).
struct Starting {
  const MeasuredConfig* base = nullptr;
  const MeasuredConfig* compute = nullptr;
};

// The measured 1-GPU step (mean, us) a prediction starts from: one rank's share of the batch.
double one_gpu_step_of(const Starting& start) { return start.compute ? start.compute->step_us.mean : kNaN; }

class Predictor {
 public:
  Predictor(const StudyDigest& study, const PredictOptions& options, const AllreduceCurve& curve)
      : study_(study),
        options_(options),
        allreduce_(curve.bytes, curve.time_us, curve.ranks),
        log_sd_(allreduce_.interpolation_log_sd()) {
    for (const MeasuredConfig& c : study_.configs)
      if (c.params.world_size == 1) one_gpu_.emplace(twin_key(c.params), &c);
  }

  double allreduce_log_sd() const { return log_sd_; }

  // The 1-GPU twin of an N-GPU configuration (null if the study has none).
  const MeasuredConfig* twin_of(const ConfigParams& n_gpu) const {
    const auto found = one_gpu_.find(twin_key(n_gpu));
    return found == one_gpu_.end() ? nullptr : found->second;
  }

  // One rank's share under strong scaling: the 1-GPU configuration at a batch of global / N,
  // measured, or else drawn through the two measured batches of the same model nearest to it.
  Starting starting_point(const MeasuredConfig& base, int ranks) const {
    if (base.params.scaling != "strong") return {&base, &base};
    if (base.params.global_batch % ranks != 0) return {&base, nullptr};
    ConfigParams share = base.params;
    share.global_batch = share.batch_per_rank = base.params.global_batch / ranks;
    if (const MeasuredConfig* measured = twin_of(share)) return {&base, measured};
    return {&base, interpolated_in_batch(share)};
  }

  // The model's prediction, its point without noise and its interval over draws.
  // relative_errors: the model errors of other N-GPU configurations (empty: model only).
  Prediction predict(const Starting& start, const Topology& topology, const std::vector<double>& relative_errors) const {
    const MeasuredConfig& base = *start.base;
    const MeasuredConfig& compute = *start.compute;
    Prediction p = described(start, topology, !relative_errors.empty());
    // The timing of the configuration whose backward is simulated; its 1-GPU base's where
    // that one is interpolated from batches without it.
    const GradientTiming& timing = compute.gradient_timing.recorded() ? compute.gradient_timing : base.gradient_timing;
    const std::vector<SimulatedBucket> buckets = planned_buckets(base.params, timing, options_.first_bucket_mb);
    p.recorded_gradient_timing = timing.recorded();
    ExposedAllreduce exposed(buckets, bucket_times_us(buckets, topology), base.params.overlap);
    // Graph mode does not split its phases: no backward to overlap with, so every
    // allreduce is taken as exposed (a pessimistic bound, noted in the methodology).
    const double backward = value_or_zero(compute.backward_us.mean);
    const double median_error = relative_errors.empty() ? 0.0 : median(relative_errors);

    OverlapTimeline timeline;
    const double step_point = (compute.step_us.mean + exposed(backward, 1.0, &timeline)) * (1 + median_error);
    p.allreduce_total_us = timeline.allreduce_total_us;
    p.allreduce_exposed_us = timeline.allreduce_exposed_us;
    if (!buckets.empty())
      p.algorithm = algorithm_name(allreduce_.cost(largest_bytes(buckets), topology, options_.network).algorithm);

    const int ranks = topology.ranks();
    p.step_us.point = step_point;
    p.throughput.point = throughput_of_ranks(compute, compute.step_us.mean, ranks, step_point);
    p.speedup.point = p.throughput.point / base.throughput.mean;
    p.efficiency.point = p.speedup.point / ranks;
    add_intervals(start, ranks, backward, relative_errors, exposed, p);
    return p;
  }

 private:
  // What a prediction is of: the configuration and where it is predicted to run.
  static Prediction described(const Starting& start, const Topology& topology, bool calibrated) {
    const MeasuredConfig& base = *start.base;
    Prediction p;
    p.model = base.params.model;
    p.parameters = base.params.parameters;
    p.scaling = base.params.scaling;
    p.exec = base.params.exec;
    p.topology = topology;
    p.batch_per_rank = start.compute->params.batch_per_rank;
    p.global_batch = start.compute->params.batch_per_rank * topology.ranks();
    p.calibrated = calibrated;
    return p;
  }

  // Each bucket's allreduce time on the target, by the curve.
  std::vector<double> bucket_times_us(const std::vector<SimulatedBucket>& buckets, const Topology& topology) const {
    std::vector<double> bucket_us;
    for (const SimulatedBucket& bucket : buckets)
      bucket_us.push_back(allreduce_.cost(bucket.bytes, topology, options_.network).time_us);
    return bucket_us;
  }

  // The prediction's 95% intervals: the spread of its step, throughput, speedup and
  // efficiency over draws of the measured means, the curve's interpolation error, the model
  // errors given and the future measurement's own error.
  void add_intervals(const Starting& start, int ranks, double backward, const std::vector<double>& relative_errors,
                     ExposedAllreduce& exposed, Prediction& p) const {
    const MeasuredConfig& base = *start.base;
    const MeasuredConfig& compute = *start.compute;
    std::mt19937_64 generator(options_.seed);
    std::vector<double> steps, throughputs, speedups, efficiencies;
    const int draws = std::max(options_.draws, 100);
    for (int d = 0; d < draws; ++d) {
      const double compute_step = positive_draw(compute.step_us.mean, standard_error(compute.step_us), generator);
      const double backward_draw = positive_draw(backward, standard_error(compute.backward_us), generator);
      const double allreduce_factor = std::exp(log_sd_ * standard_normal(generator));
      double step = compute_step + exposed(backward_draw, allreduce_factor, nullptr);
      // The future measurement's own error: a mean over as many runs, as spread as the twin's;
      // where model errors are given, theirs, which each hold a measurement's own error.
      if (!relative_errors.empty())
        step *= 1 + relative_errors[uniform_index(generator, relative_errors.size())];
      else
        step *= positive_draw(1.0, standard_error(compute.step_us) / compute.step_us.mean, generator);
      const double throughput = throughput_of_ranks(compute, compute_step, ranks, step);
      // From its own 1-GPU step, a speedup is N x that step over the N-GPU one: the drawn
      // 1-GPU step stands on both sides (a slower 1-GPU step is a slower base too).
      const double speedup =
          start.base == start.compute
              ? ranks * compute_step / step
              : throughput / positive_draw(base.throughput.mean, standard_error(base.throughput), generator);
      steps.push_back(step);
      throughputs.push_back(throughput);
      speedups.push_back(speedup);
      efficiencies.push_back(speedups.back() / ranks);
    }
    for (auto* values : {&steps, &throughputs, &speedups, &efficiencies}) std::sort(values->begin(), values->end());
    p.step_us.interval95 = percentile_interval(steps, 0.95);
    p.throughput.interval95 = percentile_interval(throughputs, 0.95);
    p.speedup.interval95 = percentile_interval(speedups, 0.95);
    p.efficiency.interval95 = percentile_interval(efficiencies, 0.95);
  }

  // A 1-GPU step at a batch the study did not measure: straight through the two measured
  // batches nearest to it (a fixed cost per step plus a cost per sample, which is how an
  // eager step's time grows with the batch once the GPU is the bottleneck or the host is
  // not), with the nearer one's spread. Null with fewer than two measured batches.
  const MeasuredConfig* interpolated_in_batch(const ConfigParams& wanted) const {
    std::vector<const MeasuredConfig*> measured;
    for (const auto& [key, config] : one_gpu_) {
      ConfigParams same_batch = config->params;
      same_batch.global_batch = same_batch.batch_per_rank = wanted.batch_per_rank;
      if (twin_key(same_batch) == twin_key(wanted)) measured.push_back(config);
    }
    if (measured.size() < 2) return nullptr;
    for (const MeasuredConfig& made : interpolated_)  // asked before: the same configuration
      if (twin_key(made.params) == twin_key(wanted)) return &made;
    const double b = static_cast<double>(wanted.batch_per_rank);
    std::sort(measured.begin(), measured.end(), [&](const MeasuredConfig* x, const MeasuredConfig* y) {
      return std::abs(std::log(x->params.batch_per_rank / b)) < std::abs(std::log(y->params.batch_per_rank / b));
    });
    const MeasuredConfig& near = *measured[0];
    const MeasuredConfig& far = *measured[1];
    const double b0 = static_cast<double>(near.params.batch_per_rank), b1 = static_cast<double>(far.params.batch_per_rank);
    auto through = [&](double y0, double y1) { return std::max(0.0, y0 + (y1 - y0) * (b - b0) / (b1 - b0)); };
    MeasuredConfig c = near;
    c.id = near.id + " (batch " + std::to_string(wanted.batch_per_rank) + " interpolated)";
    c.params = wanted;
    c.step_us.mean = through(near.step_us.mean, far.step_us.mean);
    c.step_us.sd = near.step_us.sd * c.step_us.mean / near.step_us.mean;
    c.backward_us.mean = through(value_or_zero(near.backward_us.mean), value_or_zero(far.backward_us.mean));
    c.backward_us.sd = near.backward_us.sd;
    // The same wall-time factor as the nearer run: samples per second per sample per step.
    c.throughput.mean = near.throughput.mean * (b / b0) * near.step_us.mean / c.step_us.mean;
    c.throughput.sd = near.throughput.sd * c.throughput.mean / near.throughput.mean;
    interpolated_.push_back(c);
    return &interpolated_.back();
  }

  const StudyDigest& study_;
  const PredictOptions& options_;
  mutable std::deque<MeasuredConfig> interpolated_;  // stable addresses for Starting
  AllreduceCostModel allreduce_;
  double log_sd_;
  std::map<std::string, const MeasuredConfig*> one_gpu_;
};

bool inside(double value, const Interval& interval) { return value >= interval.low && value <= interval.high; }

double median_abs(std::vector<double> errors) {
  for (double& e : errors) e = std::abs(e);
  return median(errors);
}

// Every measured N-GPU configuration that has a 1-GPU starting point, in study order.
struct MeasuredPair {
  const MeasuredConfig* n_gpu;
  Starting start;
};

std::vector<MeasuredPair> measured_pairs(const StudyDigest& study, const Predictor& predictor,
                                         std::vector<std::string>& notes) {
  std::vector<MeasuredPair> pairs;
  for (const MeasuredConfig& c : study.configs) {
    if (c.params.world_size < 2) continue;
    const MeasuredConfig* base = predictor.twin_of(c.params);
    if (!base) {
      notes.push_back(c.id + ": no 1-GPU twin in the study, not checked");
      continue;
    }
    const Starting start = predictor.starting_point(*base, c.params.world_size);
    if (!start.compute) {
      notes.push_back(c.id + ": no 1-GPU run at batch " +
                      std::to_string(base->params.global_batch / c.params.world_size) +
                      " (one rank's share under strong scaling), not checked");
      continue;
    }
    pairs.push_back({&c, start});
  }
  return pairs;
}

// Says plainly which 1-GPU configurations' buckets were placed as an even stream, and why.
void note_even_stream(const StudyDigest& study, std::vector<std::string>& notes) {
  std::vector<std::string> without;
  size_t one_gpu = 0;
  for (const MeasuredConfig& c : study.configs) {
    if (c.params.world_size != 1) continue;
    ++one_gpu;
    if (!c.gradient_timing.recorded()) without.push_back(c.id);
  }
  if (without.empty()) return;
  std::string listed;
  for (const std::string& id : without) listed += (listed.empty() ? "" : ", ") + id;
  const std::string which = without.size() == one_gpu ? "the study's 1-GPU configurations" : listed;
  notes.push_back("No per-layer gradient timing recorded for " + which +
                  " (studies measured before it was recorded, or a report folder, whose summary.csv does not carry "
                  "it): their buckets are taken as one even stream of gradients over backward, not placed as the "
                  "reducer places them, which understates the exposed allreduce of a model whose largest layer's "
                  "gradient comes last");
}

// The model errors of the measured configurations at `world_size` other than pairs[skip],
// and, with other_models_only, other than those of pairs[skip]'s model.
std::vector<double> errors_of_others(const std::vector<MeasuredPair>& pairs, const std::vector<double>& errors,
                                     size_t skip, bool other_models_only) {
  const ConfigParams& own = pairs[skip].n_gpu->params;
  std::vector<double> others;
  for (size_t j = 0; j < pairs.size(); ++j) {
    const ConfigParams& p = pairs[j].n_gpu->params;
    if (j == skip || p.world_size != own.world_size) continue;
    if (other_models_only && p.model == own.model) continue;
    others.push_back(errors[j]);
  }
  return others;
}

// Fraction of `flags` that are true; NaN for none.
double fraction_true(const std::vector<bool>& flags) {
  if (flags.empty()) return kNaN;
  return static_cast<double>(std::count(flags.begin(), flags.end(), true)) / static_cast<double>(flags.size());
}

// One kind of self-check over the measured configurations: each prediction's error and
// whether its interval covers what was measured, row by row, and their median absolute error
// and coverage (NaN where no configuration was checked this way). Against the paired speedup
// where the configuration has one (the host's state, which moves whole runs' throughput by
// tens of percent, cancels in it), else against the measured mean throughput.
struct CheckTally {
  std::vector<double> errors;
  std::vector<bool> hits;
  void add(const Prediction& p, const MeasuredConfig& n_gpu, double& error, bool& covered) {
    if (n_gpu.speedup_paired()) {
      error = p.speedup.point / n_gpu.paired_speedup - 1;
      covered = inside(n_gpu.paired_speedup, p.speedup.interval95);
    } else {
      error = p.throughput.point / n_gpu.throughput.mean - 1;
      covered = inside(n_gpu.throughput.mean, p.throughput.interval95);
    }
    errors.push_back(error);
    hits.push_back(covered);
  }
  double median_abs_error() const { return errors.empty() ? kNaN : median_abs(errors); }
  double coverage() const { return fraction_true(hits); }
};

// The model errors per GPU count the study measured, as a named profile's node-sharing costs.
// Each error with the 1-GPU step its prediction started from (errors_at_step moves it).
NodeSharingProfile node_sharing_of_pairs(const std::vector<MeasuredPair>& pairs, const std::vector<double>& errors) {
  std::map<int, NodeSharingCost> per_count;
  for (size_t i = 0; i < pairs.size(); ++i) {
    NodeSharingCost& cost = per_count[pairs[i].n_gpu->params.world_size];
    cost.step_errors.push_back(errors[i]);
    cost.one_gpu_step_us.push_back(one_gpu_step_of(pairs[i].start));
  }
  NodeSharingProfile profile;
  for (auto& [gpus, cost] : per_count) {
    cost.gpus = gpus;
    // A step not measured (a report folder without step times) leaves the cost without steps.
    const auto unmeasured = [](double us) { return !(std::isfinite(us) && us > 0); };
    if (std::any_of(cost.one_gpu_step_us.begin(), cost.one_gpu_step_us.end(), unmeasured))
      cost.one_gpu_step_us.clear();
    profile.costs.push_back(cost);
  }
  return profile;
}

// The named profile's cost for G GPUs sharing a node, worked out once per G.
class NodeSharingByCount {
 public:
  explicit NodeSharingByCount(const NodeSharingProfile& profile) : profile_(profile) {}
  const NodeSharingAtN& at(int gpus) {
    auto found = worked_out_.find(gpus);
    if (found == worked_out_.end()) found = worked_out_.emplace(gpus, node_sharing_at(profile_, gpus)).first;
    return found->second;
  }
  // The cost at `gpus`, its errors moved to the 1-GPU step `start` predicts from.
  std::vector<double> errors_for(int gpus, const Starting& start) {
    return errors_at_step(at(gpus), one_gpu_step_of(start));
  }

 private:
  const NodeSharingProfile& profile_;
  std::map<int, NodeSharingAtN> worked_out_;
};

// "the cost of sharing a node, 92 model errors measured on 2 GPUs of the named interconnect
// (source)", or with several counts measured, each count's errors and source.
std::string node_sharing_profile_text(const NodeSharingProfile& profile) {
  if (profile.costs.size() == 1) {
    const NodeSharingCost& cost = profile.costs[0];
    return "the cost of sharing a node, " + std::to_string(cost.step_errors.size()) + " model errors measured on " +
           std::to_string(cost.gpus) + " GPUs of the named interconnect (" + cost.source + ")";
  }
  std::string counts, sources;
  for (size_t i = 0; i < profile.costs.size(); ++i) {
    const NodeSharingCost& cost = profile.costs[i];
    const std::string separator = i == 0 ? "" : i + 1 == profile.costs.size() ? " and " : ", ";
    counts += separator + std::to_string(cost.step_errors.size());
    sources += (i == 0 ? "" : "; ") + std::to_string(cost.gpus) + " GPUs: " + cost.source;
  }
  return "the cost of sharing a node, " + counts + " model errors measured on " + profile.gpu_counts() +
         " GPUs of the named interconnect (" + sources + ")";
}

// Which cost each GPU count per node of the targets was calibrated by, in words.
std::string node_sharing_used_text(const std::vector<NodeSharingAtN>& used) {
  std::string text;
  for (const NodeSharingAtN& at : used)
    text += (text.empty() ? "" : "; ") + std::string("at ") + std::to_string(at.gpus) + " GPUs a node, " + at.how;
  return text;
}

// The self-checks over the measured configurations, one tally per way of calibrating.
struct SelfChecks {
  CheckTally model_only, calibrated, other_models, node_sharing;
};

// Measured configuration pairs[i] predicted again: model only (its prediction given), and
// calibrated by the others' errors (leave one out), by the other models' errors only (leave
// one model out), and by the named machine's cost of sharing a node alone where one is given;
// each checked against its measured throughput.
ValidationRow validation_row(const Predictor& predictor, const std::vector<MeasuredPair>& pairs,
                             const std::vector<double>& errors, size_t i, const Prediction& model_only,
                             const PredictOptions& options, NodeSharingByCount& node_sharing, SelfChecks& checks) {
  const MeasuredConfig& n_gpu = *pairs[i].n_gpu;
  const std::vector<double> others = errors_of_others(pairs, errors, i, false);
  const std::vector<double> other_models = errors_of_others(pairs, errors, i, true);
  ValidationRow row;
  row.id = n_gpu.id;
  row.model = n_gpu.params.model;
  row.exec = n_gpu.params.exec;
  row.parameters = n_gpu.params.parameters;
  row.batch_per_rank = n_gpu.params.batch_per_rank;
  row.world_size = n_gpu.params.world_size;
  row.measured_throughput = n_gpu.throughput.mean;
  row.measured_paired = n_gpu.speedup_paired();
  row.measured_speedup =
      row.measured_paired ? n_gpu.paired_speedup : n_gpu.throughput.mean / pairs[i].start.base->throughput.mean;
  row.model_only = model_only;
  row.calibrated = others.empty() ? model_only : predictor.predict(pairs[i].start, {1, row.world_size}, others);
  checks.model_only.add(row.model_only, n_gpu, row.model_only_error, row.model_only_covered);
  checks.calibrated.add(row.calibrated, n_gpu, row.calibrated_error, row.calibrated_covered);
  if (options.node_sharing.given()) {
    row.node_sharing = true;
    row.node_sharing_calibrated =
        predictor.predict(pairs[i].start, {1, row.world_size}, node_sharing.errors_for(row.world_size, pairs[i].start));
    checks.node_sharing.add(row.node_sharing_calibrated, n_gpu, row.node_sharing_error, row.node_sharing_covered);
  }
  if (!other_models.empty()) {
    row.other_models = true;
    row.other_models_calibrated = predictor.predict(pairs[i].start, {1, row.world_size}, other_models);
    checks.other_models.add(row.other_models_calibrated, n_gpu, row.other_models_error, row.other_models_covered);
  }
  return row;
}

ValidationSummary summary_of(const SelfChecks& checks, size_t configurations) {
  ValidationSummary s;
  s.configurations = configurations;
  s.model_only_median_abs_error = checks.model_only.median_abs_error();
  s.calibrated_median_abs_error = checks.calibrated.median_abs_error();
  s.model_only_coverage = checks.model_only.coverage();
  s.calibrated_coverage = checks.calibrated.coverage();
  s.other_models_configurations = checks.other_models.errors.size();
  s.other_models_median_abs_error = checks.other_models.median_abs_error();
  s.other_models_coverage = checks.other_models.coverage();
  s.node_sharing_configurations = checks.node_sharing.errors.size();
  s.node_sharing_median_abs_error = checks.node_sharing.median_abs_error();
  s.node_sharing_coverage = checks.node_sharing.coverage();
  return s;
}

// Forward: every 1-GPU configuration at every target, calibrated by all measured errors,
// or, where the study measured no N-GPU configuration, by the named profile's cost of
// sharing a node at the target's GPUs a node.
void predict_forward(const StudyDigest& study, const PredictOptions& options, const Predictor& predictor,
                     const std::vector<double>& errors, NodeSharingByCount& node_sharing, ScalingPrediction& result) {
  const bool own_errors = !errors.empty();
  const bool named_cost = !own_errors && options.node_sharing.given();
  const std::vector<double> model_only_errors;
  if (own_errors)
    result.calibration = "the model errors of the study's own " + std::to_string(errors.size()) +
                         " N-GPU configurations";
  if (named_cost) {
    std::set<int> per_node;
    for (const Topology& target : options.targets) per_node.insert(target.gpus_per_node);
    for (int gpus : per_node) result.node_sharing_used.push_back(node_sharing.at(gpus));
    result.calibration = node_sharing_profile_text(options.node_sharing) + "; " +
                         node_sharing_used_text(result.node_sharing_used);
  }
  for (const MeasuredConfig& base : study.configs) {
    if (base.params.world_size != 1) continue;
    for (const Topology& target : options.targets) {
      if (target.nodes > 1 && !(options.network.given())) {
        result.notes.push_back("targets with more than one node need a network profile (--network)");
        return;
      }
      const Starting start = predictor.starting_point(base, target.ranks());
      if (!start.compute) continue;  // strong scaling without one rank's share measured
      const std::vector<double> calibration =
          own_errors   ? errors
          : named_cost ? node_sharing.errors_for(target.gpus_per_node, start)
                       : model_only_errors;
      result.predictions.push_back(predictor.predict(start, target, calibration));
    }
  }
}

}  // namespace

AllreduceCurve allreduce_curve_of(const StudyDigest& study, const PredictOptions& options) {
  if (options.allreduce.given()) return options.allreduce;
  AllreduceCurve own{study.commbench_bytes, study.commbench_time_us, study.commbench_ranks, ""};
  own.source = "the study's own commbench, measured on " + std::to_string(study.commbench_ranks) + " GPUs";
  return own;
}

ScalingPrediction predict_scaling(const StudyDigest& study, const PredictOptions& options) {
  ScalingPrediction result;
  const AllreduceCurve curve = allreduce_curve_of(study, options);
  if (!curve.given())
    throw std::invalid_argument("no allreduce curve to predict from: the study has none and none was given "
                                "(--allreduce NAME or FILE.csv)");
  const Predictor predictor(study, options, curve);
  result.allreduce_log_sd = predictor.allreduce_log_sd();
  result.allreduce_curve = curve.source;
  result.allreduce_curve_ranks = curve.ranks;
  const auto pairs = measured_pairs(study, predictor, result.notes);
  note_even_stream(study, result.notes);

  // Model-only predictions of the measured configurations, and their errors in step time:
  // the measured step over the predicted one, or, where the paired design measured the
  // speedup, the predicted speedup over it (the same ratio at the twin's own host state).
  std::vector<Prediction> model_only;
  std::vector<double> errors;
  for (const MeasuredPair& pair : pairs) {
    const Topology measured{1, pair.n_gpu->params.world_size};
    model_only.push_back(predictor.predict(pair.start, measured, {}));
    const Prediction& p = model_only.back();
    errors.push_back(pair.n_gpu->speedup_paired() ? p.speedup.point / pair.n_gpu->paired_speedup - 1
                                                  : pair.n_gpu->step_us.mean / p.step_us.point - 1);
  }
  result.calibration_configurations = errors.size();

  NodeSharingByCount node_sharing(options.node_sharing);
  SelfChecks checks;
  for (size_t i = 0; i < pairs.size(); ++i)
    result.validation.push_back(validation_row(predictor, pairs, errors, i, model_only[i], options, node_sharing, checks));
  result.summary = summary_of(checks, pairs.size());
  result.measured_node_sharing = node_sharing_of_pairs(pairs, errors);
  predict_forward(study, options, predictor, errors, node_sharing, result);
  return result;
}

}  // namespace ddpscale
