// How long the rest of a sweep will take, from the run times measured so far
// (docs/methodology.md, "Progress and its estimate"). Plain data in, seconds out: no MPI,
// no clock, no files, so the rule can be checked on a plan whose run times are known.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddpscale {

// What sets the cost of a configuration's runs, as the estimate compares configurations.
struct ConfigurationShape {
  std::string id;  // config_id: equal ids train the same thing (steps and runs aside)
  std::string model;
  int world_size = 1;
  int64_t batch_per_rank = 1;
  int steps_per_run = 1;  // warm-up + measured steps
};

// A configuration the sweep still has to run, or is running.
struct PlannedConfiguration {
  ConfigurationShape shape;
  int runs_left = 0;
  bool set_up = false;  // its model is built: its runs have begun
  bool stored = false;  // done: nothing of it is left
};

// What a configuration took on this machine.
struct MeasuredConfiguration {
  ConfigurationShape shape;
  std::vector<double> run_seconds;  // each finished run, in the order they ran
  // Empty until measured, and where not measured (a stored study keeps only its runs):
  // its setup, from its start to its first run's (building its model; interleaved twins
  // share one build and its time);
  std::optional<double> setup_seconds;
  // its wrap-up, from its last run's end to its file stored (writing, barriers).
  std::optional<double> wrap_up_seconds;
};

// A run's typical time: the mean of its runs (the first one's extra gradient-timing step is
// one step of the configuration's hundreds, so it is not set apart).
double typical_run_seconds(const MeasuredConfiguration& measured);

// How a planned configuration's run time is estimated, best first.
enum class EstimateBasis {
  same_configuration,    // its own measured runs (or those of one with its id), per step
  same_model_and_world,  // the same model on the same world size at other batch sizes
  mean_step,             // the mean time of a step over every measured run
};

// The basis the estimate uses for `planned`, or nothing where no run was measured at all.
std::optional<EstimateBasis> estimate_basis(const ConfigurationShape& planned,
                                            const std::vector<MeasuredConfiguration>& measured);

// The estimated time of one run of `planned`, or nothing where no run was measured at all.
std::optional<double> estimate_run_seconds(const ConfigurationShape& planned,
                                           const std::vector<MeasuredConfiguration>& measured);

// Seconds until every planned configuration is stored: each run left at its estimated time,
// plus the mean measured setup of each configuration not set up and the mean measured
// wrap-up of each not stored (0 where none is measured). Nothing where no run was measured
// at all.
std::optional<double> estimate_seconds_left(const std::vector<PlannedConfiguration>& plan,
                                            const std::vector<MeasuredConfiguration>& measured);

// How a step's seconds grow with its cost (parameters x batch per rank) among the timed steps
// (pairs of cost and seconds): the least-squares slope of log(seconds) on log(cost), held to
// [0, 1] (a step's arithmetic grows at most in proportion to its cost; small steps are mostly
// fixed costs, which do not grow); 1 where fewer than two distinct costs were timed.
double cost_exponent(const std::vector<std::pair<double, double>>& timed);

// A step of cost `cost` that was not timed, from the steps that were: the timed step nearest
// in log(cost), scaled by (cost / its cost)^exponent. Rough for a model far from every timed
// one (its memory traffic and threading differ), which the dry run says; nothing where no
// step was timed or a cost is not positive.
std::optional<double> extrapolated_step_seconds(double cost, const std::vector<std::pair<double, double>>& timed,
                                                double exponent = 1.0);

// A sweep's estimate as it goes: told when each configuration starts, each run ends and each
// configuration is stored, it measures their times and estimates what is left. Times are
// seconds on any steady clock, given by the caller. Configuration i of the plan is the
// sweep's i-th; entries after the sweep's own configurations stand for later launches.
class SweepEta {
 public:
  explicit SweepEta(std::vector<PlannedConfiguration> plan);

  void skipped(size_t config);  // already complete (--resume): nothing left, nothing measured
  // Configurations first .. first + members - 1 begin, together (interleaved twins) or alone.
  void group_started(size_t first, size_t members, double now);
  void runs_began(double now);  // the group's models are built
  void run_done(size_t config, double now);
  void configuration_done(size_t config, double now);  // stored
  // The time left, less what the work under way has already taken; nothing until a
  // configuration has been stored (before, no wrap-up has been seen, and one run says
  // little of the runs of others).
  std::optional<double> seconds_left(double now) const;

 private:
  double under_way_estimate() const;
  bool any_awaiting_storage() const;  // a configuration whose runs are over, not yet stored

  std::vector<PlannedConfiguration> plan_;
  std::vector<MeasuredConfiguration> measured_;  // by the plan's index
  size_t group_first_ = 0, group_members_ = 0;
  double last_run_end_ = 0;  // the group's last run's end (its runs' start before any run)
  double last_event_ = 0;    // when the work under way began
  bool any_stored_ = false;
  std::vector<size_t> stored_since_last_run_;  // they share the time since the last run
};

}  // namespace ddpscale
