#include "trainer/study/sweep_plan.hpp"

#include "comm/mpi_context.hpp"
#include "models/model_catalog.hpp"
#include "results/analysis/launch_precision.hpp"
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_format.hpp"
#include "results/store/run_store.hpp"
#include "trainer/engine/engine_options.hpp"
#include "trainer/command_line/cli_util.hpp"
#include "trainer/process/device_choice.hpp"
#include "trainer/study/memory_preflight.hpp"
#include "trainer/study/train_options.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

// process_shifts_mib gives the launches their layouts in turn, so each amount must come
// up equally often; on a CPU there is no device memory to hold.
void check_process_shifts(const SweepSpec& spec, int launches, bool on_cuda) {
  const size_t n = spec.process_shifts_mib.size();
  if (n == 0) return;
  for (int mib : spec.process_shifts_mib)
    if (mib > kMostShiftMib)
      throw UsageError(spec.path + ": process_shifts_mib " + std::to_string(mib) + ": each shift is 0 to " +
                       std::to_string(kMostShiftMib) + " MiB");
  if (launches % static_cast<int>(n) != 0)
    throw UsageError(spec.path + ": process_shifts_mib gives " + std::to_string(n) + " amounts for " +
                     std::to_string(launches) + " launches: make launches: a multiple of " + std::to_string(n) +
                     ", so every amount is held by as many launches");
  if (!on_cuda)
    throw UsageError(spec.path + ": process_shifts_mib moves where GPU buffers land; on a CPU there are none "
                     "(leave the key out, or run the study on GPUs)");
}

}  // namespace

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
  return "configuration " + c.options.model + " batch " + std::to_string(fixed_batch(c.options)) + " world " +
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
    misfits.push_back(configs[i].options.model + " batch " + std::to_string(fixed_batch(configs[i].options)) + " world " +
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

// A 1-rank configuration and an N-rank one that the report compares (study_analysis's
// twin_key) and that start from the same model: the pair a sweep may interleave.
bool run_twins(const SweepConfig& a, const SweepConfig& b, bool on_cuda) {
  const TrainOptions& x = a.options;
  const TrainOptions& y = b.options;
  if ((x.world_size == 1) == (y.world_size == 1) || x.runs != y.runs || x.seed != y.seed) return false;
  return twin_key(params_of(a, on_cuda)) == twin_key(params_of(b, on_cuda));
}

// The sweep takes configurations in order, two at a time where the first two are twins
// (SweepDriver::run_next): the same walk, keeping the N-rank ones it takes alone.
std::vector<std::string> unpaired_n_rank_configurations(const SweepSpec& spec, const std::vector<SweepConfig>& configs,
                                                        bool on_cuda) {
  std::vector<std::string> unpaired;
  if (spec.design != "paired" || !spec.interleave_runs) return unpaired;
  for (size_t i = 0; i < configs.size(); ++i) {
    if (i + 1 < configs.size() && run_twins(configs[i], configs[i + 1], on_cuda)) {
      ++i;
      continue;
    }
    if (configs[i].options.world_size > 1) unpaired.push_back(config_name(configs[i]));
  }
  return unpaired;
}

std::string unpaired_note(const SweepSpec& spec, const std::vector<std::string>& unpaired) {
  if (unpaired.empty()) return "";
  std::string note = std::to_string(unpaired.size()) + " N-rank configuration" + (unpaired.size() == 1 ? "" : "s") +
                     " of " + spec.path + " ha" + (unpaired.size() == 1 ? "s" : "ve") +
                     " no 1-rank twin of " + (unpaired.size() == 1 ? "its" : "their") + " own to take turns with (" + unpaired.front() +
                     (unpaired.size() > 1 ? ", ..." : "") +
                     "): a 1-rank configuration pairs with one N-rank twin, so with several world sizes above 1 "
                     "the others are measured in whole runs over launches, with wider intervals; for every "
                     "speedup paired, give each N a spec of its own (world_sizes: [1, N])";
  return note;
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
  if (const std::string note = unpaired_note(spec, unpaired_n_rank_configurations(spec, configs, on_cuda));
      !note.empty())
    std::printf("# not paired: %s\n", note.c_str());
  else
    std::printf("# order: each configuration's runs back to back (interleave_runs: false)\n");
}

// Every launch needs a run of every configuration, and --launch names one of them.
void check_launches(const SweepSpec& spec, const std::vector<SweepConfig>& configs, int requested_launch, int launches,
                    int min_launches, bool on_cuda) {
  if (requested_launch >= launches)
    throw UsageError("--launch " + std::to_string(requested_launch + 1) + ": " + spec.path + " has " +
                     std::to_string(launches) + " launch" + (launches == 1 ? "" : "es") +
                     " (launches:), so --launch goes from 1 to " + std::to_string(launches));
  for (const SweepConfig& c : configs)
    if (c.options.runs < launches)
      throw UsageError(config_name(c) + ": " + std::to_string(c.options.runs) + " runs cannot be split over " +
                       std::to_string(launches) + " launches; give at least as many runs as launches (runs: " +
                       std::to_string(launches) + " or more), or fewer launches (launches: " +
                       std::to_string(c.options.runs) + ")");
  if (spec.target_half_width > 0 && launches < 2)
    throw UsageError(spec.path + ": target_half_width stops adding launches once each speedup's interval over "
                     "the launches so far is that precise, so it needs launches: (the most the study runs) of 2 "
                     "or more; " + std::to_string(launches) + " launch" + (launches == 1 ? " is" : "es are") +
                     " planned here (e.g. launches: 40 with runs: 80)");
  check_process_shifts(spec, launches, on_cuda);
  if (min_launches > launches)
    throw UsageError(spec.path + ": min_launches: " + std::to_string(min_launches) + " is more than launches: " +
                     std::to_string(launches) + "; give launches (the most) at least min_launches (the fewest)");
}

std::string stopping_rule_change(const SweepOptions& options, const SweepSpec& spec) {
  if (!options.resume || options.overwrite || !fs::exists(fs::path(options.out_dir) / kStudyFileName))
    return "";
  LaunchRule stored;
  try {
    stored = launch_rule_of_spec(read_study(options.out_dir).spec_text);
  } catch (const StoreError& e) {
    return e.what();
  }
  const LaunchRule asked{spec.target_half_width, spec.min_launches};
  if (stored.target_half_width == asked.target_half_width && stored.min_launches == asked.min_launches) return "";
  const auto rule_text = [](const LaunchRule& r) {
    char target[32];
    std::snprintf(target, sizeof(target), "%g", r.target_half_width);
    return r.target_half_width > 0 ? "target_half_width " + std::string(target) +
                                         (r.min_launches > 0 ? ", min_launches " + std::to_string(r.min_launches) : "")
                                   : std::string("no target_half_width");
  };
  return options.out_dir + " was begun with " + rule_text(stored) + " (its study.h5), and " + spec.path +
         " now asks for " + rule_text(asked) + "; put the first back to continue the study, pass --overwrite to "
         "measure it again under the new rule, or give another --out";
}

}  // namespace ddpscale
