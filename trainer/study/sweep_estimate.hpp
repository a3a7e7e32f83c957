// How long a sweep's runs will take, before and while they run: the plan SweepEta's progress
// estimate counts down (eta_plan), and --dry-run's estimate, from the runs of a study already
// in --out or, where it holds none, from steps probed on this process alone
// (docs/methodology.md, "Progress and its estimate"). Rank 0 only; nothing here communicates.
#pragma once
#include "trainer/study/sweep_eta.hpp"
#include "trainer/study/sweep_options.hpp"
#include "trainer/study/sweep_spec.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ddpscale {

struct ConfigParams;
struct DeviceChoice;
struct ModelDescription;

// Configuration i's share of launch k of `launches`, as the estimates plan it; ids[i] names configs[i].
PlannedConfiguration planned_share(const std::vector<SweepConfig>& configs, const std::vector<std::string>& ids,
                                   size_t i, int k, int launches);

// What the progress estimate plans: launches first_launch to last_launch, each with every
// configuration in run order (fresh processes build and run them anew).
std::vector<PlannedConfiguration> eta_plan(const std::vector<SweepConfig>& configs,
                                           const std::vector<std::string>& ids, int first_launch, int last_launch,
                                           int launches);

// --dry-run's estimate of the time the runs will take, printed on stdout after the plan.
class DryRunEstimate {
 public:
  // configs in run order, models[i] and ids[i] configs[i]'s model and config_id.
  DryRunEstimate(const SweepSpec& spec, const std::vector<SweepConfig>& configs,
                 const std::vector<ModelDescription>& models, const std::vector<std::string>& ids, int launches,
                 const SweepOptions& options, const DeviceChoice& device);

  void print() const;

 private:
  // The configurations with runs left by probe_key, and those keys in the order they are probed.
  struct ProbeCandidates {
    std::map<std::string, size_t> first_of_key;            // probe_key -> a configuration that has it
    std::vector<std::pair<double, std::string>> by_cost;  // (parameters x batch per rank, probe_key)
  };

  void print_probed_estimate(std::vector<PlannedConfiguration>& plan, const std::string& skipping) const;
  ProbeCandidates probe_candidates(const std::vector<PlannedConfiguration>& plan) const;
  std::map<std::string, double> time_steps(const ProbeCandidates& candidates, double& probing_seconds) const;
  std::vector<std::string> extrapolate_untimed(const ProbeCandidates& candidates,
                                               std::map<std::string, double>& step_seconds, double& exponent) const;
  void print_estimated_total(double seconds, const std::vector<PlannedConfiguration>& plan, size_t complete,
                             const std::vector<MeasuredConfiguration>& measured) const;
  std::vector<size_t> paired_measurements_left(const std::vector<PlannedConfiguration>& plan) const;
  double paired_measurement_seconds_of(const std::vector<PlannedConfiguration>& plan, size_t p,
                                       const std::vector<MeasuredConfiguration>& measured) const;
  std::vector<PlannedConfiguration> dry_run_plan(size_t& complete) const;
  ConfigParams params_with_model(size_t i) const;

  const SweepSpec& spec_;
  const std::vector<SweepConfig>& configs_;
  const std::vector<ModelDescription>& models_;
  const std::vector<std::string>& ids_;
  const int launches_;
  const SweepOptions& options_;
  const DeviceChoice& device_;
};

}  // namespace ddpscale
