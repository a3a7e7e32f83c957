#include "trainer/study/sweep_runner.hpp"

#include "comm/check.hpp"
#include "comm/commbench.hpp"
#include "comm/mpi_context.hpp"
#include "models/model_registry.hpp"
#include "results/analysis/launch_precision.hpp"
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_format.hpp"
#include "results/store/run_store.hpp"
#include "results/store/text_io.hpp"
#include "trainer/engine/initial_model.hpp"
#include "trainer/engine/training_session.hpp"
#include "trainer/launch/cli_util.hpp"
#include "trainer/launch/device_choice.hpp"
#include "trainer/launch/heartbeat.hpp"
#include "trainer/launch/launch_prologue.hpp"
#include "trainer/launch/system_report.hpp"
#include "trainer/study/config_runner.hpp"
#include "trainer/study/fault_injection.hpp"
#include "trainer/study/launch_driver.hpp"
#include "trainer/study/memory_preflight.hpp"
#include "trainer/study/paired_blocks.hpp"
#include "trainer/study/run_summary.hpp"
#include "trainer/study/step_probe.hpp"
#include "trainer/study/stop_signals.hpp"
#include "trainer/study/stored_run_times.hpp"
#include "trainer/study/sweep_eta.hpp"
#include "trainer/study/train_options.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

// The sweep's barriers, and the rule that bounds them (docs/reliability.md, "Bounded waits").
// A rank that did the work a barrier waits for (it trained in the configuration's group,
// or rank 0 writing its file) gives up after --comm-timeout and takes the job down naming
// the barrier: every other rank either did the same work in step with it (the run's
// collectives end together) or was idle and is already waiting, so none has a reason to
// come more than --comm-timeout later; one that does not is gone or stuck.
// A rank idle during the work waits without a bound: it cannot tell a long run (a 1-rank
// configuration may train for hours, far beyond --comm-timeout) from a stuck one, and need
// not, since rank 0 works in every configuration and aborts the job for all if anyone
// fails to arrive. Not covered: rank 0 stuck inside a 1-rank run (no peer can see it, as
// in `ddpscale train` on one rank).
// Both sides sleep between tests: ranks idle during a world-size-1 configuration must not
// spin on a core that the measured rank needs (on CPU they share the cores).
void sweep_barrier(const MpiGroup& world, const std::string& name, bool did_the_work) {
  MPI_Request request = MPI_REQUEST_NULL;
  DDPSCALE_MPI_CHECK(MPI_Ibarrier(world.handle(), &request));
  if (did_the_work)
    wait_within_comm_timeout(request, name, WaitPolling::sleep);
  else
    wait_without_bound(request);
}

// Fault injection for the reliability tests (docs/reliability.md), read here and nowhere
// else: DDPSCALE_FAULT_STALL_RANK=R makes world rank R stop for good just before the sweep's
// barrier after the first configuration it stores, as a rank stuck there (alive, silent)
// would; the other ranks must give up after --comm-timeout. Unset in every real
// measurement; a set value is announced on stderr so it cannot go unnoticed.
int fault_stall_rank() {
  static const int rank = fault_injection_rank(
      "DDPSCALE_FAULT_STALL_RANK", "stops that rank before the sweep's first barrier after a stored configuration");
  return rank;
}

[[noreturn]] void stall_for_good(int rank, const std::string& barrier) {
  std::fprintf(stderr, "ddpscale: fault injection: rank %d stalls now, before the %s\n", rank, barrier.c_str());
  std::fflush(stderr);
  for (;;) pause();
}

// HDF5's messages can carry a newline (the ctime() of a failed write); the user gets one line.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

// Rank 0 decides, every rank learns the verdict: an empty string means "go on". Rank 0 only
// checks files or writes a small one before it, so every rank bounds the wait by
// --comm-timeout; `what` names the decision in the FATAL line.
std::string broadcast_verdict(const MpiGroup& world, std::string verdict, const std::string& what) {
  const std::string name = "sweep broadcast of rank 0's verdict (" + what + ")";
  int length = static_cast<int>(verdict.size());
  world.broadcast_within_comm_timeout(&length, 1, MPI_INT, 0, name, WaitPolling::sleep);
  verdict.resize(static_cast<size_t>(length));
  world.broadcast_within_comm_timeout(verdict.data(), length, MPI_CHAR, 0, name, WaitPolling::sleep);
  return verdict;
}

NcclProfile select_profile(const SweepSpec& spec, const std::string& requested) {
  if (spec.nccl_profiles.empty()) {
    if (!requested.empty() && requested != "default")
      throw UsageError("--nccl-profile " + requested + ": " + spec.path + " defines no NCCL profiles");
    return NcclProfile{};
  }
  if (requested.empty()) {
    if (spec.nccl_profiles.size() == 1) return spec.nccl_profiles.front();
    std::string names;
    for (const auto& p : spec.nccl_profiles) names += (names.empty() ? "" : ", ") + p.name;
    throw UsageError(spec.path + " defines " + std::to_string(spec.nccl_profiles.size()) + " NCCL profiles (" + names +
                     "); NCCL reads its environment once per process, so each profile is its own launch: pass "
                     "--nccl-profile NAME, or run scripts/sweep-nccl-profiles.sh " + spec.path + " OUT");
  }
  for (const auto& p : spec.nccl_profiles)
    if (p.name == requested) return p;
  throw UsageError("--nccl-profile " + requested + " is not defined in " + spec.path);
}

std::string config_name(const SweepConfig& c) {
  return "configuration " + c.options.model + " batch " + std::to_string(c.options.batch) + " world " +
         std::to_string(c.options.world_size);
}

// Every configuration's model (described once: a TorchScript file is loaded to be described),
// or a UsageError naming the first invalid configuration.
std::vector<ModelDescription> validate_configs(const std::vector<SweepConfig>& configs, int launched, bool on_cuda) {
  std::vector<ModelDescription> models;
  for (const auto& c : configs) {
    try {
      models.push_back(describe_model(c.options.model, model_options_from(c.options)));
      validate_train_options(c.options, launched, on_cuda);
    } catch (const std::exception& e) {
      throw UsageError(config_name(c) + ": " + e.what());
    }
  }
  return models;
}

// The launch the configurations are checked against. --dry-run measures nothing, so it
// needs no mpirun: it checks them as if the spec's widest world had been launched.
int ranks_to_check_against(const std::vector<SweepConfig>& configs, int launched, bool dry_run) {
  int ranks = launched;
  if (dry_run)
    for (const auto& c : configs) ranks = std::max(ranks, c.options.world_size);
  return ranks;
}

// The memory pre-flight of every configuration before the first run: a study that would
// be OOM-killed in its 40th configuration is refused now, naming every one that does not
// fit (with the first one's numbers), unless --no-memory-check. The machine is read once per
// world size (what ranks share depends on it), not once per configuration.
void check_configs_fit_in_memory(const std::vector<SweepConfig>& configs, const std::vector<ModelDescription>& models,
                                 const MpiContext& mpi, const DeviceChoice& device, bool enabled) {
  if (!enabled) return;
  std::map<int, FreeMemory> free_by_world;
  std::vector<std::string> misfits;
  std::string first_reason;
  for (size_t i = 0; i < configs.size(); ++i) {
    const int world = configs[i].options.world_size;
    if (mpi.rank() >= world) continue;  // this rank trains nothing there
    auto free = free_by_world.find(world);
    if (free == free_by_world.end()) free = free_by_world.emplace(world, read_free_memory(mpi, device, world)).first;
    const MemoryVerdict verdict = preflight_verdict(models[i], configs[i].options, world, free->second, true);
    if (verdict.fits) continue;
    misfits.push_back(configs[i].options.model + " batch " + std::to_string(configs[i].options.batch) + " world " +
                      std::to_string(world));
    if (first_reason.empty()) first_reason = verdict.message;
  }
  if (misfits.empty()) return;
  std::string names;
  for (const auto& m : misfits) names += (names.empty() ? "" : "; ") + m;
  throw UsageError(std::to_string(misfits.size()) + " of " + std::to_string(configs.size()) +
                   " configurations do not fit in memory (" + names + "); the first: " + first_reason +
                   " (or drop them from the spec; nothing was run)");
}

std::string config_file(const SweepOptions& options, const std::string& id, int launch, int launches) {
  return (fs::path(options.out_dir) / config_file_name(id, launch, launches)).string();
}

// The configuration's id from its model's description (params_of describes the model again).
std::string id_of(const SweepConfig& c, const ModelDescription& model, bool on_cuda) {
  ConfigParams p = config_params(c.options, c.options.world_size, model.parameters, on_cuda);
  p.nccl_profile = c.nccl_profile;
  return config_id(p);
}

ConfigParams params_of(const SweepConfig& c, bool on_cuda) {
  ConfigParams p = config_params(c.options, c.options.world_size,
                                 describe_model(c.options.model, model_options_from(c.options)).parameters, on_cuda);
  p.nccl_profile = c.nccl_profile;
  return p;
}

// Rank 0: which configurations launch `launch` of `launches` has already complete, or why the
// output folder is refused.
std::string plan_output(const SweepOptions& options, const std::vector<SweepConfig>& configs, bool on_cuda,
                        int launch, int launches, std::vector<int>& skip) {
  skip.assign(configs.size(), 0);
  std::error_code ec;
  const bool exists = fs::exists(options.out_dir, ec);
  if (exists && !fs::is_directory(options.out_dir, ec))
    return "--out " + options.out_dir + " exists and is not a directory";
  const bool has_results = exists && (fs::exists(fs::path(options.out_dir) / "study.h5") ||
                                      !list_config_files(options.out_dir).empty());
  if (has_results && !options.resume && !options.overwrite)
    return "--out " + options.out_dir + " already holds a study; pass --resume to continue it or --overwrite to "
           "replace it (nothing was changed)";
  fs::create_directories(options.out_dir, ec);
  if (ec) return "--out " + options.out_dir + ": cannot create the directory: " + ec.message();
  if (access(options.out_dir.c_str(), W_OK) != 0) return "--out " + options.out_dir + ": directory is not writable";
  // The folder holds results only: a writer killed outright leaves an unfinished file.
  try {
    remove_unfinished_writes(options.out_dir);
  } catch (const StoreError& e) {
    return e.what();
  }
  if (!options.resume || options.overwrite) return "";
  for (size_t i = 0; i < configs.size(); ++i) {
    const ConfigParams params = params_of(configs[i], on_cuda);
    const std::string path = config_file(options, config_id(params), launch, launches);
    if (!fs::exists(path)) continue;
    std::string difference;
    if (!config_file_matches(path, params, &difference))
      return path + " was measured with other settings than " + options.spec_path + " now asks for (" + difference +
             "); put the stored values back in the spec to continue the study, pass --overwrite to measure every "
             "configuration again, or give another --out";
    skip[i] = 1;
  }
  return "";
}

// "1:02:03": hours, minutes and seconds.
std::string clock_text(double seconds) {
  char text[32];
  const long s = std::lround(seconds);
  std::snprintf(text, sizeof(text), "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return text;
}

// Rank 0's progress lines: one when a configuration is stored (and, on a terminal, one line
// redrawn after every run) and, between those, one at least every kHeartbeat
// (heartbeat_interval) naming what is running, so a long configuration or a launch starting
// up is never silence. The eta is
// SweepEta's, from the run times measured so far (docs/methodology.md, "Progress and its
// estimate"); "?" until a configuration has finished.
class Progress {
 public:
  static constexpr std::chrono::seconds kHeartbeat{10};

  Progress(size_t total_configs, size_t total_runs, std::vector<PlannedConfiguration> plan, bool leader)
      : total_configs_(total_configs),
        total_runs_(total_runs),
        eta_(std::move(plan)),
        start_(std::chrono::steady_clock::now()),
        tty_(isatty(STDERR_FILENO) != 0),
        heartbeat_(heartbeat_interval(kHeartbeat), [this] { return beat(); }, leader) {}

  void run_done(size_t config) {
    const auto lock = heartbeat_.lock();
    ++runs_;
    eta_.run_done(config, seconds_since_start());
    if (tty_) print('\r');
  }
  void config_done(size_t config, const std::string& id, const std::string& note) {
    const auto lock = heartbeat_.lock();
    ++configs_;
    eta_.configuration_done(config, seconds_since_start());
    if (tty_) std::fprintf(stderr, "\r\033[K");
    print('\n', id + " " + note);
  }
  void skipped(size_t config, size_t runs) {
    const auto lock = heartbeat_.lock();
    ++configs_;
    runs_ += runs;
    eta_.skipped(config);
  }
  // Configurations first .. first + members - 1 begin (interleaved twins, or one alone).
  void now_running(size_t first, size_t members, const std::string& what) {
    const auto lock = heartbeat_.lock();
    running_ = what;
    eta_.group_started(first, members, seconds_since_start());
  }
  void runs_began() {
    const auto lock = heartbeat_.lock();
    eta_.runs_began(seconds_since_start());
  }

 private:
  double seconds_since_start() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  // Called with the heartbeat's lock held.
  void print(char end, const std::string& what = "") {
    const double elapsed = seconds_since_start();
    const std::optional<double> eta = eta_.seconds_left(elapsed);
    std::fprintf(stderr, "[sweep] configs %zu/%zu  runs %zu/%zu  elapsed %s  eta %s%s%s%c", configs_, total_configs_,
                 runs_, total_runs_, clock_text(elapsed).c_str(), eta ? clock_text(*eta).c_str() : "?",
                 what.empty() ? "" : "  ", what.c_str(), end);
    std::fflush(stderr);
    if (end == '\n') heartbeat_.printed();
  }
  bool beat() {
    if (tty_) std::fprintf(stderr, "\r\033[K");
    print('\n', running_.empty() ? "" : "running " + running_);
    return true;
  }
  size_t total_configs_, total_runs_;
  size_t configs_ = 0, runs_ = 0;
  SweepEta eta_;
  std::chrono::steady_clock::time_point start_;
  bool tty_;
  std::string running_;  // the configuration (or pair) under way
  Heartbeat heartbeat_;  // rank 0 only; last, so its thread starts after everything it reads
};

// The study-start curve's time per message size: on GPUs every size still runs nccl-tests'
// 5 + 20 ops; between CPU ranks the large sizes run fewer (comm/commbench.hpp).
constexpr double kStudyCommBenchSecondsPerSize = 0.25;

CommBenchTable quick_commbench(Communicator& comm, const MpiGroup& group) {
  CommBenchOptions options;
  options.min_bytes = 1024;
  options.max_bytes = size_t(64) << 20;
  options.factor = 4;
  options.seconds_per_size = kStudyCommBenchSecondsPerSize;
  CommBenchTable table;
  for (const auto& row : run_commbench(comm, group, options)) {
    table.bytes.push_back(static_cast<double>(row.bytes));
    table.time_us.push_back(row.time_us);
    table.algbw_gbs.push_back(row.algbw_gbs);
    table.busbw_gbs.push_back(row.busbw_gbs);
  }
  return table;
}

// A 1-rank configuration and an N-rank one that the report compares (study_analysis's
// twin_key) and that start from the same model: the pair a sweep may interleave.
bool run_twins(const SweepConfig& a, const SweepConfig& b, bool on_cuda) {
  const TrainOptions& x = a.options;
  const TrainOptions& y = b.options;
  if ((x.world_size == 1) == (y.world_size == 1) || x.runs != y.runs || x.seed != y.seed) return false;
  return twin_key(params_of(a, on_cuda)) == twin_key(params_of(b, on_cuda));
}

// --dry-run: what the spec expands to, in the order it would run, and how much training
// that is (steps are per rank; every configuration also builds its model once).
void print_plan(const SweepSpec& spec, const std::vector<SweepConfig>& configs, bool on_cuda, int launches) {
  std::printf("# %s: %zu configurations in run order\n", spec.name.c_str(), configs.size());
  std::printf("%-4s %-72s %5s %8s %9s\n", "#", "configuration", "runs", "steps", "samples");
  long long total_runs = 0, total_steps = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    const TrainOptions& o = configs[i].options;
    const long long steps = static_cast<long long>(o.runs) * (o.warmup + o.steps);
    const ConfigParams p = config_params(o, o.world_size, 0, on_cuda);
    std::printf("%-4zu %-72s %5d %8lld %9lld\n", i + 1, config_id(p).c_str(), o.runs, steps,
                steps * static_cast<long long>(p.global_batch));
    total_runs += o.runs;
    total_steps += steps;
  }
  std::printf("# total: %lld runs, %lld steps (warm-up included)\n", total_runs, total_steps);
  if (launches > 1)
    std::printf("# launches: %d: each configuration's runs are split over %d launches, each with fresh processes, "
                "communicators and contexts; odd launches run the configurations in reverse order\n",
                launches, launches);
  if (const int least = min_launches_for(spec, launches); least > 0)
    std::printf("# launches until precise: every comparison runs %d launches, then more only while its speedup's "
                "95%% interval is wider than ±%s (target_half_width), %d at most: the totals above are the most "
                "this study runs\n",
                least, short_percent(spec.target_half_width).c_str(), launches);
  if (!spec.process_shifts_mib.empty()) {
    std::string amounts;
    for (int mib : spec.process_shifts_mib) amounts += (amounts.empty() ? "" : ", ") + std::to_string(mib);
    std::printf("# process shifts: launch k's processes hold the (k-1 mod %zu)-th of %s MiB of device memory "
                "from before their first configuration's model to the launch's end (process_shifts_mib)\n",
                spec.process_shifts_mib.size(), amounts.c_str());
  }
  if (spec.interleave_runs)
    std::printf("# order: each 1-rank configuration and its N-rank twin next to it alternate run by run "
                "(A B B A ...; interleave_runs: true, the default)\n");
  else
    std::printf("# order: each configuration's runs back to back (interleave_runs: false)\n");
}

// One launch of `ddpscale sweep`, step by step (run()); every step is collective over the
// launched ranks, rank 0 (the leader) decides and writes, the others learn its verdicts.
class SweepLaunch {
 public:
  SweepLaunch(const MpiContext& mpi, const DeviceChoice& device, const SweepSpec& spec, const SweepOptions& options)
      : mpi_(mpi),
        device_(device),
        spec_(spec),
        options_(options),
        leader_(mpi.rank() == 0),
        launches_(launches_for(spec, device.cuda)),
        launch_(std::max(0, options.launch)),
        driving_(launches_ > 1 && options.launch < 0),
        min_launches_(min_launches_for(spec, launches_)) {}

  int run() {
    if (!expand_configurations()) return 2;
    if (options_.dry_run) {
      if (leader_) {
        print_plan(spec_, configs_, device_.cuda, launches_);
        print_estimate();
      }
      return 0;
    }
    if (driving_) return drive_every_launch();
    if (!agree_on_output()) return 2;
    install_stop_handlers(leader_);
    make_groups_and_communicators();
    if (!write_study_file()) return 1;
    // Held for the launch's life, from before its first configuration's model: everything
    // the process allocates after it, the libraries' workspaces included, lands elsewhere.
    const torch::Tensor process_shift = hold_device_memory(process_shift_of_launch(spec_, launch_), torch_device_of(device_));
    Progress progress(configs_.size(), runs_of_this_launch(), eta_plan(), leader_);
    account_for_skipped(progress);
    for (size_t i = 0; i < configs_.size(); ++i) {
      if (skip_[i]) continue;
      const size_t members = run_configuration_or_twins(i, progress);
      if (members == 0) return 1;
      i += members - 1;
    }
    return report_end();
  }

 private:
  // The spec's configurations for this launch's NCCL profile, validated on every rank;
  // false after a usage error was reported.
  bool expand_configurations() {
    std::string usage_error;
    try {
      const NcclProfile profile = select_profile(spec_, options_.nccl_profile);
      apply_nccl_profile(profile);
      configs_ = expand_sweep(spec_, profile.name);
      check_launches();
      // Odd launches take the configurations in reverse order, so no configuration always
      // runs first after a launch starts (twins stay next to each other).
      if (launch_ % 2 == 1) std::reverse(configs_.begin(), configs_.end());
      for (SweepConfig& c : configs_) c.options.process_shift_mib = process_shift_of_launch(spec_, launch_);
      models_ = validate_configs(configs_, ranks_to_check_against(configs_, mpi_.size(), options_.dry_run), device_.cuda);
      // Not for --dry-run, which only lists the plan, nor for the driver of launches, which
      // measures nothing itself (each launch checks before its first run).
      check_configs_fit_in_memory(configs_, models_, mpi_, device_,
                                  options_.memory_check && spec_.memory_check && !options_.dry_run && !driving_);
      for (size_t i = 0; i < configs_.size(); ++i) ids_.push_back(id_of(configs_[i], models_[i], device_.cuda));
    } catch (const std::exception& e) {
      usage_error = e.what();
    }
    return !any_rank_has_usage_error(mpi_, "ddpscale sweep", usage_error);
  }

  // Every launch needs a run of every configuration, and --launch names one of them.
  void check_launches() const {
    if (options_.launch >= launches_)
      throw UsageError("--launch " + std::to_string(options_.launch + 1) + ": " + spec_.path + " has " +
                       std::to_string(launches_) + " launch" + (launches_ == 1 ? "" : "es") +
                       " (launches:), so --launch goes from 1 to " + std::to_string(launches_));
    for (const SweepConfig& c : configs_)
      if (c.options.runs < launches_)
        throw UsageError(config_name(c) + ": " + std::to_string(c.options.runs) + " runs cannot be split over " +
                         std::to_string(launches_) + " launches; give at least as many runs as launches (runs: " +
                         std::to_string(launches_) + " or more), or fewer launches (launches: " +
                         std::to_string(c.options.runs) + ")");
    if (spec_.target_half_width > 0 && launches_ < 2)
      throw UsageError(spec_.path + ": target_half_width stops adding launches once each speedup's interval over "
                       "the launches so far is that precise, so it needs launches: (the most the study runs) of 2 "
                       "or more; " + std::to_string(launches_) + " launch" + (launches_ == 1 ? " is" : "es are") +
                       " planned here (e.g. launches: 40 with runs: 80)");
    check_process_shifts();
    if (min_launches_ > launches_)
      throw UsageError(spec_.path + ": min_launches: " + std::to_string(min_launches_) + " is more than launches: " +
                       std::to_string(launches_) + "; give launches (the most) at least min_launches (the fewest)");
  }

  // process_shifts_mib gives the launches their layouts in turn, so each amount must come
  // up equally often; on a CPU there is no device memory to hold.
  void check_process_shifts() const {
    const size_t n = spec_.process_shifts_mib.size();
    if (n == 0) return;
    for (int mib : spec_.process_shifts_mib)
      if (mib > kMostShiftMib)
        throw UsageError(spec_.path + ": process_shifts_mib " + std::to_string(mib) + ": each shift is 0 to " +
                         std::to_string(kMostShiftMib) + " MiB");
    if (launches_ % static_cast<int>(n) != 0)
      throw UsageError(spec_.path + ": process_shifts_mib gives " + std::to_string(n) + " amounts for " +
                       std::to_string(launches_) + " launches: make launches: a multiple of " + std::to_string(n) +
                       ", so every amount is held by as many launches");
    if (!device_.cuda)
      throw UsageError(spec_.path + ": process_shifts_mib moves where GPU buffers land; on a CPU there are none "
                       "(leave the key out, or run the study on GPUs)");
  }

  // Which configurations launch k still needs (rank 0): those --resume does not find
  // complete and, where the spec has a target_half_width, from launch min_launches + 1 on,
  // those whose comparisons are not yet that precise over the launches before k
  // (results/analysis/launch_precision.hpp). Under --overwrite the files a settled configuration
  // may still have from an earlier study in --out are removed, so they cannot join this one.
  std::string plan_launch(const SweepOptions& options, int k, std::vector<int>& skip, LaunchPrecision* precision) const {
    if (std::string error = plan_output(options, configs_, device_.cuda, k, launches_, skip); !error.empty())
      return error;
    if (min_launches_ == 0 || k < min_launches_) return "";
    LaunchPrecision found;
    try {
      if (!precision_reader_) precision_reader_.emplace(options.out_dir);
      found = precision_reader_->before_launch(k, launches_, spec_.target_half_width);
    } catch (const StoreError& e) {
      return std::string(e.what()) + " (while judging whether launch " + std::to_string(k + 1) + " is needed)";
    }
    for (size_t i = 0; i < configs_.size(); ++i) {
      if (!found.settled.count(ids_[i])) continue;
      skip[i] = 1;
      if (options.overwrite) remove_earlier_studys_file(options, ids_[i], k);
    }
    if (precision) *precision = found;
    return "";
  }

  // Under --overwrite, launch k's file of a configuration this study will not measure there
  // (it met the target) may be an earlier study's: removed, so it cannot join this one.
  void remove_earlier_studys_file(const SweepOptions& options, const std::string& id, int k) const {
    std::error_code ignored;
    fs::remove(config_file(options, id, k, launches_), ignored);
  }

  // Rank 0: a study continued from --out must keep the stopping rule it began with: the
  // launches so far stopped by it, and the report states the one in study.h5's spec.
  std::string check_stopping_rule_unchanged() const {
    if (!options_.resume || options_.overwrite || !fs::exists(fs::path(options_.out_dir) / kStudyFileName))
      return "";
    LaunchRule stored;
    try {
      stored = launch_rule_of_spec(read_study(options_.out_dir).spec_text);
    } catch (const StoreError& e) {
      return e.what();
    }
    const LaunchRule asked{spec_.target_half_width, spec_.min_launches};
    if (stored.target_half_width == asked.target_half_width && stored.min_launches == asked.min_launches) return "";
    const auto rule_text = [](const LaunchRule& r) {
      char target[32];
      std::snprintf(target, sizeof(target), "%g", r.target_half_width);
      return r.target_half_width > 0 ? "target_half_width " + std::string(target) +
                                           (r.min_launches > 0 ? ", min_launches " + std::to_string(r.min_launches) : "")
                                     : std::string("no target_half_width");
    };
    return options_.out_dir + " was begun with " + rule_text(stored) + " (its study.h5), and " + spec_.path +
           " now asks for " + rule_text(asked) + "; put the first back to continue the study, pass --overwrite to "
           "measure it again under the new rule, or give another --out";
  }

  // The driver's view of launch k before it starts (study/launch_driver.hpp).
  LaunchOutlook outlook_of_launch(int k) const {
    LaunchOutlook outlook;
    std::vector<int> skip;
    LaunchPrecision precision;
    // The driver starts each launch with --resume (or --overwrite): it continues the study
    // the launches before it began.
    SweepOptions as_launched = options_;
    as_launched.resume = !options_.overwrite;
    outlook.error = plan_launch(as_launched, k, skip, &precision);
    if (!outlook.error.empty()) return outlook;
    const size_t left = static_cast<size_t>(std::count(skip.begin(), skip.end(), 0));
    outlook.needed = left > 0;
    if (min_launches_ == 0 || k < min_launches_) return outlook;
    const std::string target = "±" + short_percent(spec_.target_half_width);
    const std::string within = std::to_string(precision.within_target) + " of " +
                               std::to_string(precision.comparisons) + " speedups' 95% intervals within " + target +
                               " after " + std::to_string(k) + " launches";
    const bool every_config_settled = std::all_of(ids_.begin(), ids_.end(),
                                                  [&](const std::string& id) { return precision.settled.count(id) > 0; });
    if (every_config_settled) {
      outlook.study_precise = true;
      outlook.note = within + " (the spec's target_half_width)";
      if (options_.overwrite)
        for (int later = k + 1; later < launches_; ++later)
          for (const std::string& id : ids_) remove_earlier_studys_file(options_, id, later);
      return outlook;
    }
    outlook.note = within + "; " + (outlook.needed ? "measuring " + std::to_string(left) + " of " +
                                                         std::to_string(skip.size()) + " configurations, widest ±" +
                                                         short_percent(precision.widest_open)
                                                   : "complete, skipped");
    return outlook;
  }

  // The driver of a study of several launches: rank 0 accepts or refuses --out, finds the
  // launches already complete (--resume) and starts the others one after the other.
  int drive_every_launch() {
    const std::string refusal = on_leader([&] {
      for (int k = 0; k < launches_; ++k) {
        std::vector<int> skip;
        // Odd launches store the same configurations; the order does not matter here.
        if (std::string error = plan_output(options_, configs_, device_.cuda, k, launches_, skip); !error.empty())
          return error;
      }
      return check_stopping_rule_unchanged();
    });
    if (!agree_on_leaders_error(refusal, "the output folder")) return 2;
    // Whether a launch is needed is decided right before it, from what the launches before
    // it stored (a precise comparison stops adding launches).
    return drive_launches(mpi_, options_, launches_, [&](int k) { return outlook_of_launch(k); });
  }

  // Rank 0 accepts or refuses --out and finds the configurations already done (--resume);
  // every rank learns both. False after a refusal was reported.
  bool agree_on_output() {
    skip_.assign(configs_.size(), 0);
    if (!agree_on_leaders_error(
            on_leader([&] {
              // --out refused first (a study there without --resume), then a changed rule.
              if (std::string error = plan_launch(options_, launch_, skip_, nullptr); !error.empty()) return error;
              return check_stopping_rule_unchanged();
            }),
            "the output folder"))
      return false;
    mpi_.world().broadcast_within_comm_timeout(skip_.data(), static_cast<int>(skip_.size()), MPI_INT, 0,
                                               "sweep broadcast of the configurations already done", WaitPolling::sleep);
    return true;
  }

  // One group and one communicator per world size, made once: creating an NCCL
  // communicator costs far more than a configuration's short runs.
  void make_groups_and_communicators() {
    for (const auto& c : configs_) worlds_.insert(c.options.world_size);
    for (int w : worlds_) {
      groups_[w] = mpi_.world().split(mpi_.rank() < w ? 0 : -1);
      if (groups_[w]) comms_[w] = make_training_communicator(*groups_[w], device_);
    }
  }

  // study.h5: the study's metadata, its spec and an allreduce sweep. A resumed study keeps
  // the one of its first launch: measure only when one will be written. Rank 0 looks and
  // writes, every rank learns. False after a write error was reported.
  bool write_study_file() {
    const StudyMetadata metadata = collect_study_metadata(mpi_, options_.command_line);
    const int widest = *worlds_.rbegin();
    // Under --overwrite, the first launch replaces study.h5 and the later ones keep it.
    int new_study = leader_ && ((options_.overwrite && launch_ == 0) ||
                                !fs::exists(fs::path(options_.out_dir) / kStudyFileName));
    mpi_.world().broadcast_within_comm_timeout(&new_study, 1, MPI_INT, 0, "sweep broadcast of whether study.h5 is new",
                                               WaitPolling::sleep);
    CommBenchTable bench;
    if (new_study && options_.commbench && widest > 1 && groups_[widest])
      bench = quick_commbench(*comms_[widest], *groups_[widest]);
    if (!new_study) return agree_on_leaders_error("", "study.h5");
    return agree_on_leaders_error(on_leader([&] {
      StoringGuard storing;
      StudyMetadata with_spec = metadata;
      with_spec.spec_text = spec_.text;
      write_study(options_.out_dir, with_spec, bench);
      return std::string();
    }), "study.h5");
  }

  // This launch's share of a configuration's runs.
  LaunchShare share_of(const SweepConfig& c) const { return launch_share(c.options.runs, launch_, launches_); }
  size_t runs_here(const SweepConfig& c) const {
    const LaunchShare share = share_of(c);
    return static_cast<size_t>(share.end - share.first);
  }

  size_t runs_of_this_launch() const {
    size_t total_runs = 0;
    for (const auto& c : configs_) total_runs += runs_here(c);
    return total_runs;
  }

  // What the estimate plans: this launch's configurations in run order, then, where the
  // driver of the study started this launch and starts the later ones after it, the same
  // configurations again for each later launch (fresh processes build and run them anew).
  std::vector<PlannedConfiguration> eta_plan() const {
    const int last_launch = options_.later_launches_follow ? launches_ - 1 : launch_;
    std::vector<PlannedConfiguration> plan;
    for (int k = launch_; k <= last_launch; ++k)
      for (size_t i = 0; i < configs_.size(); ++i) plan.push_back(planned_share(i, k));
    return plan;
  }

  // Configuration i's share of launch k, as the estimate plans it.
  PlannedConfiguration planned_share(size_t i, int k) const {
    const TrainOptions& o = configs_[i].options;
    const LaunchShare share = launch_share(o.runs, k, launches_);
    PlannedConfiguration planned;
    planned.shape = {ids_[i], o.model, o.world_size, batch_per_rank(o, o.world_size), o.warmup + o.steps};
    planned.runs_left = share.end - share.first;
    return planned;
  }

  // --dry-run's estimate of the time the runs will take, by SweepEta's rule from the runs of
  // a study in --out; where it holds none, from a probe of each configuration's step on this
  // process alone (study/step_probe.hpp), which cannot see N ranks' communication.
  void print_estimate() const {
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
      print_estimated_total(*seconds, plan, complete);
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
  void print_probed_estimate(std::vector<PlannedConfiguration>& plan, const std::string& skipping) const {
    if (options_.probe_seconds <= 0) {
      std::printf("# estimate: none: no run is stored in %s and --probe-seconds 0 times no step%s\n",
                  options_.out_dir.c_str(), skipping.c_str());
      return;
    }
    constexpr int64_t kLargestProbedOnCpu = 200'000'000;
    const double probe_seconds = options_.probe_seconds;
    std::map<std::string, size_t> first_of_key;  // probe_key -> a configuration that has it
    for (size_t i = 0; i < plan.size(); ++i)
      if (plan[i].runs_left > 0) first_of_key.emplace(probe_key(configs_[i % configs_.size()].options), i % configs_.size());
    std::vector<std::pair<double, std::string>> by_cost;
    for (const auto& [key, i] : first_of_key)
      by_cost.emplace_back(static_cast<double>(models_[i].parameters) *
                               static_cast<double>(batch_per_rank(configs_[i].options, configs_[i].options.world_size)),
                           key);
    // Each model's cheapest step first, then the rest cheapest first: a step not timed is
    // extrapolated from its own model's where it can be, which carries a model's fixed costs.
    std::sort(by_cost.begin(), by_cost.end());
    std::set<std::string> models_first;
    std::stable_partition(by_cost.begin(), by_cost.end(), [&](const auto& entry) {
      return models_first.insert(configs_[first_of_key.at(entry.second)].options.model).second;
    });
    std::map<std::string, double> step_seconds;  // by probe_key: twins of N ranks share their 1-rank probe
    const auto started = std::chrono::steady_clock::now();
    const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
    for (const auto& [cost, key] : by_cost) {
      const size_t i = first_of_key.at(key);
      if (elapsed() > probe_seconds || (!device_.cuda && models_[i].parameters > kLargestProbedOnCpu)) continue;
      const TrainOptions& o = configs_[i].options;
      std::fprintf(stderr, "[sweep] --dry-run: timing 2 steps of %s at batch %lld per rank on this process\n",
                   o.model.c_str(), static_cast<long long>(batch_per_rank(o, o.world_size)));
      step_seconds[key] = probe_step_seconds(o, device_);
    }
    const double probing = elapsed();
    const size_t timed_steps = step_seconds.size();
    const auto model_of = [&](const std::string& key) { return configs_[first_of_key.at(key)].options.model; };
    std::map<std::string, std::vector<std::pair<double, double>>> timed_by_model;  // cost, seconds
    std::vector<std::pair<double, double>> timed;
    for (const auto& [cost, key] : by_cost)
      if (step_seconds.count(key)) {
        timed.emplace_back(cost, step_seconds.at(key));
        timed_by_model[model_of(key)].emplace_back(cost, step_seconds.at(key));
      }
    const double exponent = cost_exponent(timed);
    std::vector<std::string> extrapolated;  // "model at batch B per rank", each once
    for (const auto& [cost, key] : by_cost) {
      if (step_seconds.count(key)) continue;
      const auto own = timed_by_model.find(model_of(key));
      const std::optional<double> guess =
          extrapolated_step_seconds(cost, own != timed_by_model.end() ? own->second : timed, exponent);
      if (!guess) continue;
      step_seconds[key] = *guess;
      const TrainOptions& o = configs_[first_of_key.at(key)].options;
      extrapolated.push_back(o.model + " at batch " + std::to_string(batch_per_rank(o, o.world_size)));
    }
    // No step timed at all leaves nothing to extrapolate from: the estimate is unavailable.
    for (size_t i = 0; i < plan.size(); ++i)
      if (plan[i].runs_left > 0 && !step_seconds.count(probe_key(configs_[i % configs_.size()].options)))
        plan[i].runs_left = 0;
    const std::vector<MeasuredConfiguration> probed = probed_run_times(
        plan, configs_.size(), [&](size_t i) { return step_seconds.at(probe_key(configs_[i].options)); });
    const std::optional<double> seconds = estimate_seconds_left(plan, probed);
    const std::string left_out =
        extrapolated.empty()
            ? ""
            : "; " + std::to_string(extrapolated.size()) + " steps not timed (the probe stops after --probe-seconds " +
                  round_trip_text(probe_seconds) + ", cheapest steps first, and steps no model over 200M parameters "
                  "on a CPU) are extrapolated from the timed step nearest in parameters x batch, its own model's "
                  "where one was timed, as (parameters x batch)^" + format_exponent(exponent) +
                  " (fitted to the timed steps): " +
                  joined_names(extrapolated);
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
    print_estimated_total(*seconds, plan, complete_of(plan));
  }

  static size_t complete_of(const std::vector<PlannedConfiguration>& plan) {
    return static_cast<size_t>(std::count_if(plan.begin(), plan.end(), [](const auto& p) { return p.stored; }));
  }

  // The estimate's last line: the time of every run the study still has, and of the paired
  // blocks its twins still have (docs/methodology.md, "The paired speedup"), in one figure.
  void print_estimated_total(double seconds, const std::vector<PlannedConfiguration>& plan, size_t complete) const {
    const auto [runs, configurations] = runs_in(plan);
    const int paired = paired_measurements_left(plan);
    // Each pair of twins, each launch: paired_seconds of blocks after a pilot of at most
    // kPilotMostSeconds (results/statistics/paired_design.hpp).
    const double paired_seconds = paired * (spec_.paired_seconds + kPilotMostSeconds);
    const std::string paired_text =
        paired == 0 ? ""
                    : " and " + std::to_string(paired) + " paired measurements of twins (about " +
                          round_trip_text(spec_.paired_seconds + kPilotMostSeconds) + " s each)";
    std::printf("# estimated total: about %s for all %d runs of the %d configurations %s%s\n",
                clock_text(seconds + paired_seconds).c_str(), runs, configurations,
                complete == 0 ? "in the spec" : "left to run", paired_text.c_str());
  }

  // Twins (a 1-rank configuration and its N-rank one, next to each other) the paired design
  // still measures, once per launch in which neither is complete: as run_configuration_or_twins
  // pairs them.
  int paired_measurements_left(const std::vector<PlannedConfiguration>& plan) const {
    if (spec_.design != "paired" || !spec_.interleave_runs) return 0;
    int left = 0;
    const size_t n = configs_.size();
    for (size_t i = 0; i + 1 < n; ++i) {
      if (!run_twins(configs_[i], configs_[i + 1], device_.cuda)) continue;
      for (int k = 0; k < launches_; ++k)
        if (plan[k * n + i].runs_left > 0 && plan[k * n + i + 1].runs_left > 0) ++left;
      ++i;  // the twin is taken
    }
    return left;
  }

  static std::string format_exponent(double exponent) {
    char text[16];
    std::snprintf(text, sizeof text, "%.2f", exponent);
    return text;
  }

  static std::string joined_names(const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
  }

  // Runs left, and configurations with runs left (each once, whatever its launches), in a plan.
  static std::pair<int, int> runs_in(const std::vector<PlannedConfiguration>& plan) {
    int runs = 0;
    std::set<std::string> configurations;
    for (const auto& p : plan)
      if (p.runs_left > 0) runs += p.runs_left, configurations.insert(p.shape.id);
    return {runs, static_cast<int>(configurations.size())};
  }

  // What --dry-run's estimate plans: every launch's share of every configuration, less the
  // configuration files already complete in --out (counted in `complete`) unless --overwrite.
  std::vector<PlannedConfiguration> dry_run_plan(size_t& complete) const {
    std::vector<PlannedConfiguration> plan;
    complete = 0;
    for (int k = 0; k < launches_; ++k)
      for (size_t i = 0; i < configs_.size(); ++i) {
        PlannedConfiguration planned = planned_share(i, k);
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

  ConfigParams params_with_model(size_t i) const {
    const TrainOptions& o = configs_[i].options;
    ConfigParams p = config_params(o, o.world_size, models_[i].parameters, device_.cuda);
    p.nccl_profile = configs_[i].nccl_profile;
    return p;
  }

  // How many of the configurations left were estimated on which basis.
  static std::string basis_counts(const std::vector<PlannedConfiguration>& plan,
                                  const std::vector<MeasuredConfiguration>& measured) {
    std::set<std::string> by_basis[3];
    for (const auto& p : plan)
      if (p.runs_left > 0)
        if (const auto basis = estimate_basis(p.shape, measured)) by_basis[static_cast<int>(*basis)].insert(p.shape.id);
    return "configurations estimated from their own runs: " + std::to_string(by_basis[0].size()) +
           ", from the same model and world size at other batch sizes: " + std::to_string(by_basis[1].size()) +
           ", from the mean step of every run: " + std::to_string(by_basis[2].size());
  }

  // The configurations --resume found complete count as done; the first line says so.
  void account_for_skipped(Progress& progress) const {
    for (size_t i = 0; i < configs_.size(); ++i)
      if (skip_[i]) progress.skipped(i, runs_here(configs_[i]));
    const std::string launch_text = launches_ > 1 ? ", launch " + std::to_string(launch_ + 1) + " of " +
                                                        std::to_string(launches_) + " (pid " +
                                                        std::to_string(getpid()) + ")"
                                                  : "";
    if (leader_)
      std::fprintf(stderr, "[sweep] %s: %zu configurations (%zu already done), %zu runs%s, profile %s, out %s\n",
                   spec_.name.c_str(), configs_.size(), static_cast<size_t>(std::count(skip_.begin(), skip_.end(), 1)),
                   runs_of_this_launch(), launch_text.c_str(),
                   configs_.empty() ? "default" : configs_.front().nccl_profile.c_str(), options_.out_dir.c_str());
  }

  // Runs configuration i, or i and its twin i + 1 interleaved, and stores them; returns how
  // many configurations that was, 0 after a write error was reported.
  size_t run_configuration_or_twins(size_t i, Progress& progress) {
    // With interleave_runs, a 1-rank configuration and its N-rank twin next to it alternate
    // run by run (A B B A ...), so a drift of the machine moves both halves of the speedup.
    const bool interleave = spec_.interleave_runs && i + 1 < configs_.size() && !skip_[i + 1] &&
                            run_twins(configs_[i], configs_[i + 1], device_.cuda);
    const size_t members = interleave ? 2 : 1;
    const auto on_run_done_of = [&progress](size_t config) {
      return [&progress, config](const RunRecord&) { progress.run_done(config); };
    };
    progress.now_running(i, members, ids_[i] + (interleave ? " and " + ids_[i + 1] : ""));
    std::vector<std::unique_ptr<ConfigurationRuns>> runs(members);
    std::shared_ptr<InitialModel> shared_model;  // twins start from the same parameters: one copy
    for (size_t m = 0; m < members; ++m) {
      const TrainOptions& o = configs_[i + m].options;
      if (!groups_[o.world_size]) continue;
      if (!shared_model) shared_model = make_initial_model(o, device_);
      const LaunchShare share = share_of(configs_[i + m]);
      runs[m] = std::make_unique<ConfigurationRuns>(o, *groups_[o.world_size], comms_[o.world_size].get(), device_,
                                                    shared_model, share.first, share.end);
    }
    progress.runs_began();
    if (interleave) {
      const LaunchShare share = share_of(configs_[i]);
      // A B B A ... from the first run of this launch's share; the next launch's continues it.
      for (int k = share.first; k < share.end; ++k)
        for (size_t j = 0; j < 2; ++j) {
          const size_t m = k % 2 == 0 ? j : 1 - j;
          if (runs[m]) runs[m]->run_next(on_run_done_of(i + m));
          // the other twin's ranks wait for this run
          sweep_barrier(mpi_.world(), "sweep barrier after run " + std::to_string(k + 1) + " of " + ids_[i + m],
                        runs[m] != nullptr);
        }
    } else if (runs[0]) {
      runs[0]->run_remaining(on_run_done_of(i));
    }
    std::optional<PairedOutcome> paired;
    if (interleave && spec_.design == "paired") paired = measure_twins_paired(i);
    for (size_t m = 0; m < members; ++m) {
      std::string note;
      if (runs[m] && leader_) {
        ConfigRecord record = runs[m]->take_record();
        if (paired && paired->failure.empty() && configs_[i + m].options.world_size > 1)
          record.paired.push_back(paired->blocks);
        note = store(configs_[i + m], std::move(record));
      }
      const std::string barrier = "sweep barrier after configuration " + ids_[i + m] + " was stored";
      if (fault_stall_rank() == mpi_.rank()) stall_for_good(mpi_.rank(), barrier);
      // Its ranks trained (in the interleaved loop above, they already met after the last
      // run) and rank 0 wrote its file: they bound the wait; the idle ones do not.
      sweep_barrier(mpi_.world(), barrier, runs[m] != nullptr);
      if (!agree_on_leaders_error(store_error_, "storing " + ids_[i + m], "\n")) return 0;
      if (leader_) progress.config_done(i + m, ids_[i + m], note);
    }
    return members;
  }

  // The paired design's blocks of twins i and i + 1 (one of them the 1-rank configuration),
  // after their runs: collective over every launched rank.
  PairedOutcome measure_twins_paired(size_t i) {
    const bool first_is_one = configs_[i].options.world_size == 1;
    const SweepConfig& one = configs_[first_is_one ? i : i + 1];
    const SweepConfig& many = configs_[first_is_one ? i + 1 : i];
    const int n = many.options.world_size;
    PairedSetup setup;
    setup.one_rank = one.options;
    setup.n_ranks = many.options;
    setup.world = &mpi_.world();
    setup.n_group = groups_[n].get();
    setup.n_comm = comms_[n].get();
    setup.device = device_;
    setup.launch = launch_;
    setup.budget_seconds = spec_.paired_seconds;
    PairedOutcome outcome = measure_paired(setup);
    if (leader_ && !outcome.failure.empty())
      std::fprintf(stderr, "[sweep] %s: no paired blocks (%s); its speedup is the runs'\n", ids_[i].c_str(),
                   outcome.failure.c_str());
    else if (leader_)
      std::fprintf(stderr, "[sweep] paired blocks: %zu pairs of %d steps against 1 rank (pilot: %.0f us a step, lag-1 "
                   "autocorrelation %.2f)\n",
                   outcome.blocks.pairs.size(), outcome.blocks.block_steps, outcome.blocks.pilot_step_us,
                   outcome.blocks.autocorrelation.empty() ? std::nan("") : outcome.blocks.autocorrelation[0]);
    return outcome;
  }

  // Rank 0 stores a finished configuration; returns its summary line for the progress output.
  std::string store(const SweepConfig& config, ConfigRecord record) {
    record.params.nccl_profile = config.nccl_profile;
    record.params.nccl_variables = nccl_variables_in_effect();
    record.launch = launch_;
    record.launches = launches_;
    for (RunRecord& run : record.runs) run.launch = launch_;
    record.id = config_id(record.params);
    record.git_commit = build_git_commit();
    record.finished_utc = utc_now_iso8601();
    StoringGuard storing;
    const bool any_ok = std::any_of(record.runs.begin(), record.runs.end(),
                                    [](const RunRecord& run) { return run.status == RunStatus::ok; });
    if (!any_ok) without_ok_run_.push_back(record.id);
    try {
      write_config(options_.out_dir, record);
      return config_summary_line(record);
    } catch (const std::exception& e) {
      store_error_ = one_line(e.what());
      return std::string();
    }
  }

  // Runs `work` on rank 0 only and returns its error ("" none); what it throws becomes a
  // one-line error. Other ranks return "".
  std::string on_leader(const std::function<std::string()>& work) const {
    if (!leader_) return "";
    try {
      return work();
    } catch (const std::exception& e) {
      return one_line(e.what());
    }
  }

  // Every rank learns rank 0's error; rank 0 prints one as "ddpscale sweep: <error>" (after
  // `before`). True when there was none.
  bool agree_on_leaders_error(const std::string& error, const std::string& what, const char* before = "") const {
    const std::string verdict = broadcast_verdict(mpi_.world(), error, what);
    if (verdict.empty()) return true;
    if (leader_) std::fprintf(stderr, "%sddpscale sweep: %s\n", before, verdict.c_str());
    return false;
  }

  int report_end() const {
    if (leader_)
      std::fprintf(stderr, "[sweep] done: %zu configurations in %s\n", configs_.size(), options_.out_dir.c_str());
    if (leader_ && !without_ok_run_.empty()) {
      std::fprintf(stderr, "[sweep] %zu configuration(s) have no successful run (their failures are stored; "
                           "`ddpscale report` lists them), e.g. %s\n", without_ok_run_.size(),
                   without_ok_run_.front().c_str());
      return 3;
    }
    return 0;
  }

  const MpiContext& mpi_;
  const DeviceChoice& device_;
  const SweepSpec& spec_;
  const SweepOptions& options_;
  const bool leader_;
  const int launches_;  // launches of the study (launches_for)
  const int launch_;    // the one this process measures (0 for the driver, which measures none)
  const bool driving_;  // these processes start the launches instead of measuring
  const int min_launches_;  // launches before target_half_width may stop a comparison (0: no target)
  // Rank 0: the stored launches' records, read once each across the driver's questions.
  mutable std::optional<LaunchPrecisionReader> precision_reader_;
  std::vector<SweepConfig> configs_;
  std::vector<ModelDescription> models_;  // configs_[i]'s model
  std::vector<std::string> ids_;          // configs_[i]'s config_id, which names it in barriers and progress
  std::vector<int> skip_;  // 1: already complete in --out (--resume)
  std::set<int> worlds_;
  std::map<int, std::unique_ptr<MpiGroup>> groups_;  // null where this rank is not a member
  std::map<int, std::unique_ptr<Communicator>> comms_;
  std::string store_error_;                  // rank 0: a configuration's file could not be written
  std::vector<std::string> without_ok_run_;  // rank 0: configurations whose every run failed
};

}  // namespace

int run_sweep(const MpiContext& mpi, const DeviceChoice& device, const SweepSpec& spec, const SweepOptions& options) {
  return SweepLaunch(mpi, device, spec, options).run();
}

}  // namespace ddpscale
