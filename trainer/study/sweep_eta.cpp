#include "trainer/study/sweep_eta.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace ddpscale {
namespace {

bool has_runs(const MeasuredConfiguration& m) { return !m.run_seconds.empty(); }

double seconds_per_step(const MeasuredConfiguration& m) {
  return typical_run_seconds(m) / std::max(1, m.shape.steps_per_run);
}

bool same_model_and_world(const ConfigurationShape& a, const ConfigurationShape& b) {
  return a.model == b.model && a.world_size == b.world_size;
}

// How far apart two batch sizes are, as a ratio: 8 is as far from 16 as 16 from 32.
double batch_distance(int64_t a, int64_t b) {
  return std::abs(std::log(static_cast<double>(std::max<int64_t>(a, 1)) / static_cast<double>(std::max<int64_t>(b, 1))));
}

// The measured configuration whose batch is nearest `batch` among `candidates`, skipping
// those at `except_batch` (0: skip none).
const MeasuredConfiguration* nearest_batch(const std::vector<const MeasuredConfiguration*>& candidates, int64_t batch,
                                           int64_t except_batch = 0) {
  const MeasuredConfiguration* nearest = nullptr;
  for (const MeasuredConfiguration* c : candidates) {
    if (c->shape.batch_per_rank == except_batch) continue;
    if (!nearest || batch_distance(c->shape.batch_per_rank, batch) < batch_distance(nearest->shape.batch_per_rank, batch))
      nearest = c;
  }
  return nearest;
}

// How a step's time grows with the batch, t ~ batch^e. With two batch sizes measured, e is
// the slope between the two nearest, held between 0 (batch-independent) and 1
// (proportional), so that noise between close batches cannot make a larger batch cheaper.
// With one, e is 0: a step's time is taken as independent of the batch. That is what the
// measured studies show where a step is mostly fixed costs (on 2 H100s, docs/results/h100x2/
// seed-study, five models' steps grew by 1-45% from batch 8 to 128), and it errs low where
// the batch is the work (mlp-medium on 2 CPU ranks: 66% from batch 16 to 128); taking the
// time as proportional to the batch instead was off by more than 10x on the H100 study.
double batch_exponent(const MeasuredConfiguration& nearest, const MeasuredConfiguration* second) {
  if (!second) return 0.0;
  const double time_ratio = seconds_per_step(*second) / seconds_per_step(nearest);
  const double batch_ratio =
      static_cast<double>(second->shape.batch_per_rank) / static_cast<double>(nearest.shape.batch_per_rank);
  if (!(time_ratio > 0)) return 0.0;
  return std::clamp(std::log(time_ratio) / std::log(batch_ratio), 0.0, 1.0);
}

// A step's time for `planned` from the same model on the same world size at other batch
// sizes, or nothing where there is none.
std::optional<double> step_seconds_from_other_batches(const ConfigurationShape& planned,
                                                      const std::vector<MeasuredConfiguration>& measured) {
  std::vector<const MeasuredConfiguration*> candidates;
  for (const auto& m : measured)
    if (has_runs(m) && same_model_and_world(m.shape, planned)) candidates.push_back(&m);
  const MeasuredConfiguration* nearest = nearest_batch(candidates, planned.batch_per_rank);
  if (!nearest) return std::nullopt;
  const MeasuredConfiguration* second = nearest_batch(candidates, planned.batch_per_rank, nearest->shape.batch_per_rank);
  const double batch_ratio =
      static_cast<double>(planned.batch_per_rank) / static_cast<double>(nearest->shape.batch_per_rank);
  return seconds_per_step(*nearest) * std::pow(batch_ratio, batch_exponent(*nearest, second));
}

// A step's time for `planned` from its own measured runs (or those of a configuration with
// its id), or nothing where it has none.
std::optional<double> step_seconds_of_same_configuration(const ConfigurationShape& planned,
                                                         const std::vector<MeasuredConfiguration>& measured) {
  double sum = 0;
  int count = 0;
  for (const auto& m : measured)
    if (has_runs(m) && m.shape.id == planned.id) {
      sum += seconds_per_step(m);
      ++count;
    }
  if (count == 0) return std::nullopt;
  return sum / count;
}

// The mean time of a step over every measured run, whatever its configuration.
std::optional<double> mean_step_seconds(const std::vector<MeasuredConfiguration>& measured) {
  double seconds = 0, steps = 0;
  for (const auto& m : measured) {
    seconds += std::accumulate(m.run_seconds.begin(), m.run_seconds.end(), 0.0);
    steps += static_cast<double>(m.run_seconds.size()) * std::max(1, m.shape.steps_per_run);
  }
  if (steps == 0) return std::nullopt;
  return seconds / steps;
}

// The mean of a measured part of the configurations stored so far, 0 where none is.
double mean_of(const std::vector<MeasuredConfiguration>& measured,
               std::optional<double> MeasuredConfiguration::*part) {
  double sum = 0;
  int count = 0;
  for (const auto& m : measured)
    if (m.*part) {
      sum += *(m.*part);
      ++count;
    }
  return count == 0 ? 0.0 : std::max(0.0, sum / count);
}

}  // namespace

double cost_exponent(const std::vector<std::pair<double, double>>& timed) {
  std::vector<std::pair<double, double>> logs;
  for (const auto& [cost, seconds] : timed)
    if (cost > 0 && seconds > 0) logs.emplace_back(std::log(cost), std::log(seconds));
  if (logs.size() < 2) return 1.0;
  double mean_x = 0, mean_y = 0;
  for (const auto& [x, y] : logs) mean_x += x, mean_y += y;
  mean_x /= static_cast<double>(logs.size());
  mean_y /= static_cast<double>(logs.size());
  double sxx = 0, sxy = 0;
  for (const auto& [x, y] : logs) sxx += (x - mean_x) * (x - mean_x), sxy += (x - mean_x) * (y - mean_y);
  if (!(sxx > 0)) return 1.0;
  return std::clamp(sxy / sxx, 0.0, 1.0);
}

std::optional<double> extrapolated_step_seconds(double cost, const std::vector<std::pair<double, double>>& timed,
                                                double exponent) {
  if (!(cost > 0)) return std::nullopt;
  const std::pair<double, double>* nearest = nullptr;
  double nearest_distance = 0;
  for (const auto& entry : timed) {
    if (!(entry.first > 0) || !(entry.second > 0)) continue;
    const double distance = std::abs(std::log(cost / entry.first));
    if (!nearest || distance < nearest_distance) nearest = &entry, nearest_distance = distance;
  }
  if (!nearest) return std::nullopt;
  return nearest->second * std::pow(cost / nearest->first, exponent);
}

double typical_run_seconds(const MeasuredConfiguration& measured) {
  const auto& runs = measured.run_seconds;
  if (runs.empty()) return 0;
  return std::accumulate(runs.begin(), runs.end(), 0.0) / static_cast<double>(runs.size());
}

std::optional<EstimateBasis> estimate_basis(const ConfigurationShape& planned,
                                            const std::vector<MeasuredConfiguration>& measured) {
  if (step_seconds_of_same_configuration(planned, measured)) return EstimateBasis::same_configuration;
  if (step_seconds_from_other_batches(planned, measured)) return EstimateBasis::same_model_and_world;
  if (mean_step_seconds(measured)) return EstimateBasis::mean_step;
  return std::nullopt;
}

std::optional<double> estimate_run_seconds(const ConfigurationShape& planned,
                                           const std::vector<MeasuredConfiguration>& measured) {
  std::optional<double> step = step_seconds_of_same_configuration(planned, measured);
  if (!step) step = step_seconds_from_other_batches(planned, measured);
  if (!step) step = mean_step_seconds(measured);
  if (!step) return std::nullopt;
  return *step * planned.steps_per_run;
}

std::optional<double> estimate_seconds_left(const std::vector<PlannedConfiguration>& plan,
                                            const std::vector<MeasuredConfiguration>& measured) {
  if (!mean_step_seconds(measured)) return std::nullopt;
  const double setup = mean_of(measured, &MeasuredConfiguration::setup_seconds);
  const double wrap_up = mean_of(measured, &MeasuredConfiguration::wrap_up_seconds);
  double left = 0;
  for (const auto& p : plan) {
    if (p.stored) continue;
    if (p.runs_left > 0) left += p.runs_left * *estimate_run_seconds(p.shape, measured);
    if (!p.set_up) left += setup;
    left += wrap_up;
  }
  return left;
}

SweepEta::SweepEta(std::vector<PlannedConfiguration> plan) : plan_(std::move(plan)) {
  for (const auto& p : plan_) measured_.push_back(MeasuredConfiguration{p.shape, {}, std::nullopt, std::nullopt});
}

void SweepEta::skipped(size_t config) {
  plan_[config].runs_left = 0;
  plan_[config].stored = true;
}

void SweepEta::group_started(size_t first, size_t members, double now) {
  group_first_ = first;
  group_members_ = members;
  last_event_ = now;
}

void SweepEta::runs_began(double now) {
  stored_since_last_run_.clear();
  const size_t end = group_first_ + group_members_;
  for (size_t m = group_first_; m < end; ++m) {
    measured_[m].setup_seconds = (now - last_event_) / static_cast<double>(group_members_);
    plan_[m].set_up = true;
  }
  last_run_end_ = last_event_ = now;
}

void SweepEta::run_done(size_t config, double now) {
  measured_[config].run_seconds.push_back(now - last_event_);
  last_run_end_ = last_event_ = now;
  plan_[config].runs_left = std::max(0, plan_[config].runs_left - 1);
  stored_since_last_run_.clear();
}

bool SweepEta::any_awaiting_storage() const {
  for (const auto& p : plan_)
    if (p.set_up && p.runs_left == 0 && !p.stored) return true;
  return false;
}

// Configurations whose runs are over are stored one after the other once the work after
// their runs is done: interleaved twins after both have run, a paired window's members after
// its blocks. Each one's wrap-up is its share of the time from the last run to the last of
// them stored (a window's blocks belong to all of its members, not to the last twins).
void SweepEta::configuration_done(size_t config, double now) {
  plan_[config].runs_left = 0;
  plan_[config].stored = true;
  last_event_ = now;
  stored_since_last_run_.push_back(config);
  if (any_awaiting_storage()) return;
  const double share = (now - last_run_end_) / static_cast<double>(stored_since_last_run_.size());
  for (const size_t m : stored_since_last_run_) measured_[m].wrap_up_seconds = share;
  any_stored_ = true;
}

// What the work under way should take at most: the group's setup while its models are
// built, then the longest of its next runs (interleaved twins alternate, so either may be
// running), then the wrap-up of what is not stored.
double SweepEta::under_way_estimate() const {
  const double setup = mean_of(measured_, &MeasuredConfiguration::setup_seconds);
  const double wrap_up = mean_of(measured_, &MeasuredConfiguration::wrap_up_seconds);
  double setups = 0, longest_run = 0, wrap_ups = 0;
  for (size_t m = group_first_; m < group_first_ + group_members_; ++m) {
    const PlannedConfiguration& p = plan_[m];
    if (p.stored) continue;
    if (!p.set_up) setups += setup;
    if (p.runs_left > 0) longest_run = std::max(longest_run, estimate_run_seconds(p.shape, measured_).value_or(0.0));
    wrap_ups += wrap_up;
  }
  if (setups > 0) return setups;
  return longest_run > 0 ? longest_run : wrap_ups;
}

std::optional<double> SweepEta::seconds_left(double now) const {
  if (!any_stored_) return std::nullopt;
  const std::optional<double> left = estimate_seconds_left(plan_, measured_);
  if (!left) return std::nullopt;
  // Work that overruns its estimate takes nothing off what comes after it.
  const double under_way = std::min(now - last_event_, under_way_estimate());
  return std::max(0.0, *left - under_way);
}

}  // namespace ddpscale
