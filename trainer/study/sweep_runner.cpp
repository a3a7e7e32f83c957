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
#include "trainer/command_line/cli_util.hpp"
#include "trainer/process/device_choice.hpp"
#include "trainer/process/launch_prologue.hpp"
#include "trainer/process/system_report.hpp"
#include "trainer/study/config_runner.hpp"
#include "trainer/study/fault_injection.hpp"
#include "trainer/study/launch_driver.hpp"
#include "trainer/study/memory_preflight.hpp"
#include "trainer/study/paired_blocks.hpp"
#include "trainer/study/run_summary.hpp"
#include "trainer/study/stop_signals.hpp"
#include "trainer/study/sweep_estimate.hpp"
#include "trainer/study/sweep_plan.hpp"
#include "trainer/study/sweep_progress.hpp"
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

// One launch of `ddpscale sweep`, step by step (run()): it runs the configurations and stores
// them, or drives the study's launches; every step is collective over the launched ranks,
// rank 0 (the leader) decides and writes, the others learn its verdicts. Its plan is checked
// and listed by study/sweep_plan.hpp, its time estimated by study/sweep_estimate.hpp and its
// progress printed by study/sweep_progress.hpp.
class SweepDriver {
 public:
  SweepDriver(const MpiContext& mpi, const DeviceChoice& device, const SweepSpec& spec, const SweepOptions& options)
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
        DryRunEstimate(spec_, configs_, models_, ids_, launches_, options_, device_).print();
      }
      return 0;
    }
    if (leader_ && (driving_ || launch_ == 0))
      if (const std::string note = unpaired_note(spec_, unpaired_n_rank_configurations(spec_, configs_, device_.cuda));
          !note.empty())
        std::fprintf(stderr, "[sweep] note: %s\n", note.c_str());
    if (driving_) return drive_every_launch();
    if (!agree_on_output()) return 2;
    install_stop_handlers(leader_);
    make_groups_and_communicators();
    if (!write_study_file()) return 1;
    window_memory_budget_ = agree_on_window_memory(mpi_, device_, *worlds_.rbegin());
    // Held for the launch's life, from before its first configuration's model: everything
    // the process allocates after it, the libraries' workspaces included, lands elsewhere.
    const torch::Tensor process_shift = hold_device_memory(process_shift_of_launch(spec_, launch_), torch_device_of(device_));
    SweepProgress progress(configs_.size(), runs_of_this_launch(), progress_plan(), leader_);
    account_for_skipped(progress);
    for (size_t i = 0; i < configs_.size(); ++i) {
      if (skip_[i]) continue;
      const size_t members = run_next(i, progress);
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
      check_launches(spec_, configs_, options_.launch, launches_, min_launches_, device_.cuda);
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
      return stopping_rule_change(options_, spec_);
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
              return stopping_rule_change(options_, spec_);
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

  // What the progress estimate plans: this launch's configurations in run order, then, where the
  // driver of the study started this launch and starts the later ones after it, the same
  // configurations again for each later launch (fresh processes build and run them anew).
  std::vector<PlannedConfiguration> progress_plan() const {
    const int last_launch = options_.later_launches_follow ? launches_ - 1 : launch_;
    return eta_plan(configs_, ids_, launch_, last_launch, launches_);
  }

  // The configurations --resume found complete count as done; the first line says so.
  void account_for_skipped(SweepProgress& progress) const {
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

  // Whether configurations i and i + 1 are twins whose runs interleave (both still to run).
  bool interleaved_twins_at(size_t i) const {
    return spec_.interleave_runs && i + 1 < configs_.size() && !skip_[i] && !skip_[i + 1] &&
           run_twins(configs_[i], configs_[i + 1], device_.cuda);
  }
  // Whether those twins are measured by the paired design.
  bool paired_twins_at(size_t i) const { return spec_.design == "paired" && interleaved_twins_at(i); }

  // Runs and stores what starts at configuration i: a window of twins under the paired
  // design, or configuration i alone, or i and its twin i + 1 interleaved run by run; returns
  // how many configurations that was, 0 after a write error was reported.
  size_t run_next(size_t i, SweepProgress& progress) {
    if (paired_twins_at(i)) return run_paired_window(i, progress);
    MembersRuns done = run_members(i, interleaved_twins_at(i) ? 2 : 1, progress);
    for (size_t m = 0; m < done.trained.size(); ++m)
      if (!store_member(i + m, done, m, nullptr, progress)) return 0;
    return done.trained.size();
  }

  // What the runs of one or two configurations left: rank 0's records and, on every rank,
  // whether it trained in each.
  struct MembersRuns {
    std::vector<ConfigRecord> records;  // rank 0 only, one per member
    std::vector<char> trained;
  };

  // The runs of configuration i, or of i and its twin i + 1 alternating run by run.
  MembersRuns run_members(size_t i, size_t members, SweepProgress& progress) {
    const bool interleave = members == 2;
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
      // A B B A ... from the first run of this launch's share, so a drift of the machine
      // moves both halves of the speedup; the next launch's continues it.
      const LaunchShare share = share_of(configs_[i]);
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
    MembersRuns done;
    done.records.resize(members);
    for (size_t m = 0; m < members; ++m) {
      done.trained.push_back(runs[m] != nullptr);
      if (runs[m] && leader_) done.records[m] = runs[m]->take_record();
    }
    return done;
  }

  // Stores member m of `done` (configuration `config`) with its paired blocks, if any, and
  // waits for every rank; false after a write error was reported.
  bool store_member(size_t config, MembersRuns& done, size_t m, const PairedOutcome* paired, SweepProgress& progress) {
    std::string note;
    if (done.trained[m] && leader_) {
      ConfigRecord record = std::move(done.records[m]);
      if (paired && paired->failure.empty() && configs_[config].options.world_size > 1)
        record.paired.push_back(paired->blocks);
      note = store(configs_[config], std::move(record));
    }
    const std::string barrier = "sweep barrier after configuration " + ids_[config] + " was stored";
    if (fault_stall_rank() == mpi_.rank()) stall_for_good(mpi_.rank(), barrier);
    // Its ranks trained (in the interleaved runs, they already met after the last run) and
    // rank 0 wrote its file: they bound the wait; the idle ones do not.
    sweep_barrier(mpi_.world(), barrier, done.trained[m] != 0);
    if (!agree_on_leaders_error(store_error_, "storing " + ids_[config], "\n")) return false;
    if (leader_) progress.config_done(config, ids_[config], note);
    return true;
  }

  // A window of twins under the paired design (trainer/study/paired_blocks.hpp): each
  // pair's runs, then its paired sessions join the window; once the window is full their
  // rounds take turns, and every member is stored. Returns the configurations it held.
  size_t run_paired_window(size_t i, SweepProgress& progress) {
    const size_t twins = paired_window_at(i);
    PairedWindow window;
    std::vector<MembersRuns> done;
    for (size_t t = 0; t < twins; ++t) {
      done.push_back(run_members(i + 2 * t, 2, progress));
      window.add(paired_setup(i + 2 * t));
    }
    progress.now_doing("the paired blocks of " + std::to_string(twins) + " speedup" + (twins > 1 ? "s" : "") +
                       ", their rounds taking turns");
    window.run();
    for (size_t t = 0; t < twins; ++t) {
      const PairedOutcome outcome = window.take(t);
      if (leader_) print_paired_outcome(ids_[i + 2 * t], outcome);
      for (size_t m = 0; m < 2; ++m)
        if (!store_member(i + 2 * t + m, done[t], m, &outcome, progress)) return 0;
    }
    return 2 * twins;
  }

  // How many twins from configuration i measure in one window: consecutive pairs of twins,
  // at most the spec's paired_window, within the memory kPairedWindowMemoryShare allows.
  size_t paired_window_at(size_t i) const {
    std::vector<int64_t> bytes;
    for (size_t j = i; paired_twins_at(j) && bytes.size() < static_cast<size_t>(spec_.paired_window); j += 2)
      bytes.push_back(paired_sessions_bytes(configs_[j].options, models_[j], configs_[j + 1].options, models_[j + 1]));
    return paired_window_length(bytes, window_memory_budget_, spec_.paired_window);
  }

  // The paired measurement of twins i and i + 1 (one of them the 1-rank configuration).
  PairedSetup paired_setup(size_t i) const {
    const bool first_is_one = configs_[i].options.world_size == 1;
    const SweepConfig& one = configs_[first_is_one ? i : i + 1];
    const SweepConfig& many = configs_[first_is_one ? i + 1 : i];
    const int n = many.options.world_size;
    PairedSetup setup;
    setup.one_rank = one.options;
    setup.n_ranks = many.options;
    setup.world = &mpi_.world();
    // Ranks outside the N-rank group have neither (they wait out its blocks).
    const auto group = groups_.find(n);
    const auto comm = comms_.find(n);
    setup.n_group = group == groups_.end() ? nullptr : group->second.get();
    setup.n_comm = comm == comms_.end() ? nullptr : comm->second.get();
    setup.device = device_;
    setup.launch = launch_;
    setup.budget_seconds = spec_.paired_seconds;
    return setup;
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
  int64_t window_memory_budget_ = 0;         // paired_window_length's budget (agree_on_window_memory)
  std::string store_error_;                  // rank 0: a configuration's file could not be written
  std::vector<std::string> without_ok_run_;  // rank 0: configurations whose every run failed
};

}  // namespace

int run_sweep(const MpiContext& mpi, const DeviceChoice& device, const SweepSpec& spec, const SweepOptions& options) {
  return SweepDriver(mpi, device, spec, options).run();
}

}  // namespace ddpscale
