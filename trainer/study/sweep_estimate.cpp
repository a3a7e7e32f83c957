#include "trainer/study/sweep_estimate.hpp"

#include "models/model_catalog.hpp"
#include "results/statistics/paired_design.hpp"
#include "results/store/run_store.hpp"
#include "results/store/text_io.hpp"
#include "trainer/process/device_choice.hpp"
#include "trainer/study/launch_driver.hpp"
#include "trainer/study/step_probe.hpp"
#include "trainer/study/stored_run_times.hpp"
#include "trainer/study/sweep_plan.hpp"
#include "trainer/study/sweep_progress.hpp"
#include "trainer/study/train_options.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

std::string format_exponent(double exponent) {
  char text[16];
  std::snprintf(text, sizeof text, "%.2f", exponent);
  return text;
}

std::string joined_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// Runs left, and configurations with runs left (each once, whatever its launches), in a plan.
std::pair<int, int> runs_in(const std::vector<PlannedConfiguration>& plan) {
  int runs = 0;
  std::set<std::string> configurations;
  for (const auto& p : plan)
    if (p.runs_left > 0) runs += p.runs_left, configurations.insert(p.shape.id);
  return {runs, static_cast<int>(configurations.size())};
}

size_t complete_of(const std::vector<PlannedConfiguration>& plan) {
  return static_cast<size_t>(std::count_if(plan.begin(), plan.end(), [](const auto& p) { return p.stored; }));
}

// How many of the configurations left were estimated on which basis.
std::string basis_counts(const std::vector<PlannedConfiguration>& plan,
                         const std::vector<MeasuredConfiguration>& measured) {
  std::set<std::string> by_basis[3];
  for (const auto& p : plan)
    if (p.runs_left > 0)
      if (const auto basis = estimate_basis(p.shape, measured)) by_basis[static_cast<int>(*basis)].insert(p.shape.id);
  return "configurations estimated from their own runs: " + std::to_string(by_basis[0].size()) +
         ", from the same model and world size at other batch sizes: " + std::to_string(by_basis[1].size()) +
         ", from the mean step of every run: " + std::to_string(by_basis[2].size());
}

// The probed estimate's note on the steps it extrapolated ("" when it timed every one).
std::string extrapolation_note(const std::vector<std::string>& extrapolated, double probe_seconds, double exponent) {
  if (extrapolated.empty()) return "";
  return "; " + std::to_string(extrapolated.size()) + " steps not timed (the probe stops after --probe-seconds " +
         round_trip_text(probe_seconds) + ", cheapest steps first, and steps no model over 200M parameters "
         "on a CPU) are extrapolated from the timed step nearest in parameters x batch, its own model's "
         "where one was timed, as (parameters x batch)^" + format_exponent(exponent) +
         " (fitted to the timed steps): " +
         joined_names(extrapolated);
}

}  // namespace

PlannedConfiguration planned_share(const std::vector<SweepConfig>& configs, const std::vector<std::string>& ids,
                                   size_t i, int k, int launches) {
  const TrainOptions& o = configs[i].options;
  const LaunchShare share = launch_share(o.runs, k, launches);
  PlannedConfiguration planned;
  planned.shape = {ids[i], o.model, o.world_size, batch_per_rank(o, o.world_size), o.warmup + o.steps};
  planned.runs_left = share.end - share.first;
  return planned;
}

std::vector<PlannedConfiguration> eta_plan(const std::vector<SweepConfig>& configs,
                                           const std::vector<std::string>& ids, int first_launch, int last_launch,
                                           int launches) {
  std::vector<PlannedConfiguration> plan;
  for (int k = first_launch; k <= last_launch; ++k)
    for (size_t i = 0; i < configs.size(); ++i) plan.push_back(planned_share(configs, ids, i, k, launches));
  return plan;
}

DryRunEstimate::DryRunEstimate(const SweepSpec& spec, const std::vector<SweepConfig>& configs,
                               const std::vector<ModelDescription>& models, const std::vector<std::string>& ids,
                               int launches, const SweepOptions& options, const DeviceChoice& device)
    : spec_(spec),
      configs_(configs),
      models_(models),
      ids_(ids),
      launches_(launches),
      options_(options),
      device_(device) {}

// --dry-run's estimate of the time the runs will take, by SweepEta's rule from the runs of
// a study in --out; where it holds none, from a probe of each configuration's step on this
// process alone (study/step_probe.hpp), which cannot see N ranks' communication.
void DryRunEstimate::print() const {
  const std::vector<MeasuredConfiguration> stored = run_times_in_study(options_.out_dir);
  size_t complete = 0;
  std::vector<PlannedConfiguration> plan = dry_run_plan(complete);
  const std::string skipping =
      complete == 0 ? "" : "; " + std::to_string(complete) + " configuration files complete in " + options_.out_dir +
                               " are left out, as --resume skips them";
  if (runs_in(plan).first == 0) {
    std::printf("# estimate: nothing to run%s\n", skipping.c_str());
    return;
  }
  if (const std::optional<double> seconds = estimate_seconds_left(plan, stored)) {
    std::printf("# estimate: about %s for %d runs of %d configurations, from the runs stored in %s (%s); model "
                "builds, storing and start-up not counted%s\n",
                clock_text(*seconds).c_str(), runs_in(plan).first, runs_in(plan).second, options_.out_dir.c_str(),
                basis_counts(plan, stored).c_str(), skipping.c_str());
    print_estimated_total(*seconds, plan, complete, stored);
    return;
  }
  print_probed_estimate(plan, skipping);
}

// No run stored: each configuration's model and per-rank batch stepped a few times here,
// the cheapest first (parameters x batch), for at most --probe-seconds in all. A step not
// timed (over the budget, or a model too large to step on a CPU in a dry run) is
// extrapolated from the timed one nearest in parameters x batch (its own model's where one
// was timed: each model's cheapest step is timed first), and the line names those steps, so
// the estimate covers every configuration and ends in a total.
void DryRunEstimate::print_probed_estimate(std::vector<PlannedConfiguration>& plan, const std::string& skipping) const {
  if (options_.probe_seconds <= 0) {
    std::printf("# estimate: none: no run is stored in %s and --probe-seconds 0 times no step%s\n",
                options_.out_dir.c_str(), skipping.c_str());
    return;
  }
  const ProbeCandidates candidates = probe_candidates(plan);
  double probing = 0;
  std::map<std::string, double> step_seconds = time_steps(candidates, probing);  // by probe_key
  const size_t timed_steps = step_seconds.size();
  double exponent = 0;
  const std::vector<std::string> extrapolated = extrapolate_untimed(candidates, step_seconds, exponent);
  // No step timed at all leaves nothing to extrapolate from: the estimate is unavailable.
  for (size_t i = 0; i < plan.size(); ++i)
    if (plan[i].runs_left > 0 && !step_seconds.count(probe_key(configs_[i % configs_.size()].options)))
      plan[i].runs_left = 0;
  const std::vector<MeasuredConfiguration> probed = probed_run_times(
      plan, configs_.size(), [&](size_t i) { return step_seconds.at(probe_key(configs_[i].options)); });
  const std::optional<double> seconds = estimate_seconds_left(plan, probed);
  const std::string left_out = extrapolation_note(extrapolated, options_.probe_seconds, exponent);
  if (!seconds) {
    std::printf("# estimate: unavailable: no run is stored in %s and no step could be timed here%s%s\n",
                options_.out_dir.c_str(), left_out.c_str(), skipping.c_str());
    return;
  }
  std::printf("# estimate: about %s for %d runs of %d configurations, from %zu step times probed on this process "
              "alone (one rank, %s of probing); runs of N ranks add their communication and, where ranks share "
              "cores, wait for them, so take this as a floor; model builds, storing and start-up not "
              "counted%s%s\n",
              clock_text(*seconds).c_str(), runs_in(plan).first, runs_in(plan).second, timed_steps,
              clock_text(probing).c_str(), left_out.c_str(), skipping.c_str());
  print_estimated_total(*seconds, plan, complete_of(plan), probed);
}

// The steps to probe, one per probe_key (twins of N ranks share their 1-rank probe), each
// model's cheapest step first, then the rest cheapest first: a step not timed is
// extrapolated from its own model's where it can be, which carries a model's fixed costs.
DryRunEstimate::ProbeCandidates DryRunEstimate::probe_candidates(const std::vector<PlannedConfiguration>& plan) const {
  ProbeCandidates candidates;
  for (size_t i = 0; i < plan.size(); ++i)
    if (plan[i].runs_left > 0)
      candidates.first_of_key.emplace(probe_key(configs_[i % configs_.size()].options), i % configs_.size());
  for (const auto& [key, i] : candidates.first_of_key)
    candidates.by_cost.emplace_back(
        static_cast<double>(models_[i].parameters) *
            static_cast<double>(batch_per_rank(configs_[i].options, configs_[i].options.world_size)),
        key);
  std::sort(candidates.by_cost.begin(), candidates.by_cost.end());
  std::set<std::string> models_first;
  std::stable_partition(candidates.by_cost.begin(), candidates.by_cost.end(), [&](const auto& entry) {
    return models_first.insert(configs_[candidates.first_of_key.at(entry.second)].options.model).second;
  });
  return candidates;
}

// The candidates' steps timed in order until --probe-seconds have passed, by probe_key; on a
// CPU, models over kLargestProbedOnCpu parameters are not stepped. `probing_seconds`: the time it took.
std::map<std::string, double> DryRunEstimate::time_steps(const ProbeCandidates& candidates,
                                                         double& probing_seconds) const {
  constexpr int64_t kLargestProbedOnCpu = 200'000'000;
  std::map<std::string, double> step_seconds;
  const auto started = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  for (const auto& [cost, key] : candidates.by_cost) {
    const size_t i = candidates.first_of_key.at(key);
    if (elapsed() > options_.probe_seconds || (!device_.cuda && models_[i].parameters > kLargestProbedOnCpu)) continue;
    const TrainOptions& o = configs_[i].options;
    std::fprintf(stderr, "[sweep] --dry-run: timing 2 steps of %s at batch %lld per rank on this process\n",
                 o.model.c_str(), static_cast<long long>(batch_per_rank(o, o.world_size)));
    step_seconds[key] = probe_step_seconds(o, device_);
  }
  probing_seconds = elapsed();
  return step_seconds;
}

// Adds to `step_seconds` the steps not timed, extrapolated from the timed ones (`exponent`:
// the cost exponent fitted to them); returns those steps as "model at batch B per rank".
std::vector<std::string> DryRunEstimate::extrapolate_untimed(const ProbeCandidates& candidates,
                                                             std::map<std::string, double>& step_seconds,
                                                             double& exponent) const {
  const auto model_of = [&](const std::string& key) { return configs_[candidates.first_of_key.at(key)].options.model; };
  std::map<std::string, std::vector<std::pair<double, double>>> timed_by_model;  // cost, seconds
  std::vector<std::pair<double, double>> timed;
  for (const auto& [cost, key] : candidates.by_cost)
    if (step_seconds.count(key)) {
      timed.emplace_back(cost, step_seconds.at(key));
      timed_by_model[model_of(key)].emplace_back(cost, step_seconds.at(key));
    }
  exponent = cost_exponent(timed);
  std::vector<std::string> extrapolated;  // each once
  for (const auto& [cost, key] : candidates.by_cost) {
    if (step_seconds.count(key)) continue;
    const auto own = timed_by_model.find(model_of(key));
    const std::optional<double> guess =
        extrapolated_step_seconds(cost, own != timed_by_model.end() ? own->second : timed, exponent);
    if (!guess) continue;
    step_seconds[key] = *guess;
    const TrainOptions& o = configs_[candidates.first_of_key.at(key)].options;
    extrapolated.push_back(o.model + " at batch " + std::to_string(batch_per_rank(o, o.world_size)));
  }
  return extrapolated;
}

// The estimate's last line: the time of every run the study still has, and of the paired
// blocks its twins still have (docs/methodology.md, "The paired speedup"), in one figure.
void DryRunEstimate::print_estimated_total(double seconds, const std::vector<PlannedConfiguration>& plan,
                                           size_t complete, const std::vector<MeasuredConfiguration>& measured) const {
  const auto [runs, configurations] = runs_in(plan);
  const std::vector<size_t> twins = paired_measurements_left(plan);
  double paired_seconds = 0;
  for (const size_t p : twins) paired_seconds += paired_measurement_seconds_of(plan, p, measured);
  const std::string paired_text =
      twins.empty() ? ""
                    : " and " + std::to_string(twins.size()) + " paired measurements of twins (about " +
                          round_trip_text(std::round(10 * paired_seconds / static_cast<double>(twins.size())) / 10) +
                          " s each: paired_seconds " + round_trip_text(spec_.paired_seconds) +
                          " or the least 3 rounds at the twins' steps, whichever is longer)";
  std::printf("# estimated total: about %s for all %d runs of the %d configurations %s%s\n",
              clock_text(seconds + paired_seconds).c_str(), runs, configurations,
              complete == 0 ? "in the spec" : "left to run", paired_text.c_str());
}

// Twins (a 1-rank configuration and its N-rank one, next to each other) the paired design
// still measures, once per launch in which neither is complete, as SweepDriver::paired_twins_at
// pairs them: the plan's index of each measurement's first twin.
std::vector<size_t> DryRunEstimate::paired_measurements_left(const std::vector<PlannedConfiguration>& plan) const {
  std::vector<size_t> left;
  if (spec_.design != "paired" || !spec_.interleave_runs) return left;
  const size_t n = configs_.size();
  for (size_t i = 0; i + 1 < n; ++i) {
    if (!run_twins(configs_[i], configs_[i + 1], device_.cuda)) continue;
    for (int k = 0; k < launches_; ++k)
      if (plan[k * n + i].runs_left > 0 && plan[k * n + i + 1].runs_left > 0) left.push_back(k * n + i);
    ++i;  // the twin is taken
  }
  return left;
}

// One paired measurement of the twins at plan[p] and plan[p + 1], from their estimated steps
// (results/statistics/paired_design.hpp); its budget and pilot alone where no step is known.
double DryRunEstimate::paired_measurement_seconds_of(const std::vector<PlannedConfiguration>& plan, size_t p,
                                                     const std::vector<MeasuredConfiguration>& measured) const {
  const auto step_of = [&](const PlannedConfiguration& c) {
    const std::optional<double> run = estimate_run_seconds(c.shape, measured);
    return run ? *run / std::max(1, c.shape.steps_per_run) : 0.0;
  };
  const bool first_is_one = plan[p].shape.world_size == 1;
  const double one = step_of(plan[first_is_one ? p : p + 1]), many = step_of(plan[first_is_one ? p + 1 : p]);
  const int warmup = configs_[p % configs_.size()].options.warmup;
  return paired_measurement_seconds(spec_.paired_seconds, one, many, warmup);
}

// What --dry-run's estimate plans: every launch's share of every configuration, less the
// configuration files already complete in --out (counted in `complete`) unless --overwrite.
std::vector<PlannedConfiguration> DryRunEstimate::dry_run_plan(size_t& complete) const {
  std::vector<PlannedConfiguration> plan;
  complete = 0;
  for (int k = 0; k < launches_; ++k)
    for (size_t i = 0; i < configs_.size(); ++i) {
      PlannedConfiguration planned = planned_share(configs_, ids_, i, k, launches_);
      const std::string path = config_file(options_, ids_[i], k, launches_);
      if (!options_.overwrite && fs::exists(path) && config_file_matches(path, params_with_model(i))) {
        planned.runs_left = 0;
        planned.stored = true;
        ++complete;
      }
      plan.push_back(planned);
    }
  return plan;
}

ConfigParams DryRunEstimate::params_with_model(size_t i) const {
  const TrainOptions& o = configs_[i].options;
  ConfigParams p = config_params(o, o.world_size, models_[i].parameters, device_.cuda);
  p.nccl_profile = configs_[i].nccl_profile;
  return p;
}
}  // namespace ddpscale
