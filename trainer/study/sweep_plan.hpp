// A sweep's plan before anything runs: the NCCL profile a launch takes, its configurations
// checked (options, launches, memory), their ids and stored files, which of them --out already
// holds, which pairs of them are twins, and the plan --dry-run lists. Rank 0 or every rank
// calls these as study/sweep_runner.cpp says; none of them communicates except the memory
// check, which reads the machine's free memory collectively.
#pragma once
#include "comm/nccl_profile.hpp"
#include "results/store/run_record.hpp"
#include "trainer/study/sweep_options.hpp"
#include "trainer/study/sweep_spec.hpp"

#include <string>
#include <vector>

namespace ddpscale {

class MpiContext;
struct DeviceChoice;
struct ModelDescription;

// The spec's NCCL profile that --nccl-profile `requested` names ("": the only one), or a UsageError.
NcclProfile select_profile(const SweepSpec& spec, const std::string& requested);

// "configuration MODEL batch B world W": how usage errors name a configuration.
std::string config_name(const SweepConfig& c);

// Every configuration's model, or a UsageError naming the first invalid configuration.
std::vector<ModelDescription> validate_configs(const std::vector<SweepConfig>& configs, int launched, bool on_cuda);

// The number of ranks the configurations are checked against (--dry-run: the widest world).
int ranks_to_check_against(const std::vector<SweepConfig>& configs, int launched, bool dry_run);

// Every launch needs a run of every configuration, --launch (0-based `requested_launch`, -1:
// every launch) names one of them, and the spec's launch keys agree; a UsageError otherwise.
void check_launches(const SweepSpec& spec, const std::vector<SweepConfig>& configs, int requested_launch, int launches,
                    int min_launches, bool on_cuda);

// The memory pre-flight of every configuration (collective over the launched ranks), a
// UsageError naming those that do not fit; nothing when `enabled` is false.
void check_configs_fit_in_memory(const std::vector<SweepConfig>& configs, const std::vector<ModelDescription>& models,
                                 const MpiContext& mpi, const DeviceChoice& device, bool enabled);

// The path of configuration `id`'s file of launch `launch` of `launches` in --out.
std::string config_file(const SweepOptions& options, const std::string& id, int launch, int launches);

// The configuration's id from its model's description.
std::string id_of(const SweepConfig& c, const ModelDescription& model, bool on_cuda);

// The configuration's stored parameters (describes its model again).
ConfigParams params_of(const SweepConfig& c, bool on_cuda);

// Rank 0: which configurations launch `launch` of `launches` has already complete (skip[i]
// = 1), or why the output folder is refused ("" when it is accepted).
std::string plan_output(const SweepOptions& options, const std::vector<SweepConfig>& configs, bool on_cuda,
                        int launch, int launches, std::vector<int>& skip);

// A 1-rank configuration and an N-rank one that the report compares and that start from the
// same model: the pair a sweep may interleave.
bool run_twins(const SweepConfig& a, const SweepConfig& b, bool on_cuda);

// Under the paired design, the N-rank configurations that no 1-rank twin stands next to in run
// order (a 1-rank configuration pairs with one twin: with world_sizes [1, 2, 4] the 4-rank
// ones are measured in runs alone); empty under the run design.
std::vector<std::string> unpaired_n_rank_configurations(const SweepSpec& spec, const std::vector<SweepConfig>& configs,
                                                        bool on_cuda);

// The note --dry-run and the sweep's start print for those ("" when there are none).
std::string unpaired_note(const SweepSpec& spec, const std::vector<std::string>& unpaired);

// --dry-run's listing of the configurations in run order and the training they amount to.
void print_plan(const SweepSpec& spec, const std::vector<SweepConfig>& configs, bool on_cuda, int launches);

// Rank 0: a study continued from --out must keep the stopping rule it began with (the
// launches so far were stopped by it, and the report states the one in study.h5's spec): ""
// or why not, with what to do.
std::string stopping_rule_change(const SweepOptions& options, const SweepSpec& spec);

}  // namespace ddpscale
