// A study's grid, read from YAML: models x batch sizes x world sizes x the other
// dimensions, expanded into the ordered list of configurations a sweep runs.
// Every key is documented in experiments/README.md.
#pragma once
#include "comm/nccl_profile.hpp"
#include "results/store/run_record.hpp"
#include "results/statistics/paired_design.hpp"
#include "trainer/study/train_options.hpp"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpscale {

// "spec.yaml:12: key 'batch_sizes': expected a list of positive integers".
class SpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Values that replace the study's for some models (e.g. fewer steps for the largest sizes).
struct SpecOverride {
  std::vector<std::string> models;
  int runs = -1, warmup = -1, steps = -1;  // -1 = keep
  std::vector<int64_t> batch_sizes;         // empty = keep
};

// A TorchScript model's own input in `models:` ({model: torchscript:PATH, input_shape: ...,
// classes: ...}): replaces the top-level input_shape / input / classes for that model.
struct ModelInput {
  std::string input_shape, input;  // one of them, or neither (keep the top level's)
  int64_t classes = 0;             // 0 = keep
};

struct SweepSpec {
  std::string path;
  std::string text;  // the file as read, stored with the study
  std::string name;
  std::vector<std::string> models;
  std::map<std::string, ModelInput> model_inputs;  // by model name, from mappings in `models:`
  std::vector<int64_t> batch_sizes;
  std::vector<int> world_sizes;
  std::vector<std::string> scaling = {"weak"};
  std::vector<double> bucket_mb = {kDefaultBucketMb};
  std::vector<bool> overlap = {true};
  std::vector<std::string> dtypes = {"float32"};  // canonical names (canonical_dtype)
  std::vector<std::string> execs = {"eager"};     // eager | graph
  std::vector<std::string> allreduce_dtypes = {"float32"};  // canonical names; world size 1 runs the first only
  std::vector<NcclProfile> nccl_profiles;  // empty = the default profile only
  // Run a 1-rank configuration and its N-rank twin next to it in alternation (A B B A ...)
  // instead of one after the other: a machine whose speed drifts then moves both halves of
  // the speedup alike (docs/methodology.md, "Order of a study"). On by default: a speedup
  // whose halves met different host speeds is not a measurement of the speedup.
  bool interleave_runs = true;
  // How many launches (fresh processes, communicators and CUDA contexts) share each
  // configuration's runs: what differs between launches is part of what a user's rerun
  // meets, so the interval must sample it (docs/methodology.md, "Launches"). 0: the default,
  // kDefaultLaunchesGpu on GPUs and kDefaultLaunchesCpu on CPU (launches_for).
  int launches = 0;
  // Launches until precise: from launch min_launches + 1 on, a launch measures only the
  // comparisons whose speedup interval is still wider than +-target_half_width of the speedup
  // (results/analysis/launch_precision.hpp), and the study ends once none is; `launches` is then the
  // most it runs. 0: off, every launch measures every configuration.
  double target_half_width = 0;
  int min_launches = 0;  // 0: kDefaultMinLaunches (results/analysis/launch_precision.hpp), or `launches` where fewer
  // GPU: launch k's processes hold process_shifts_mib[k mod n] MiB of device memory for the
  // launch's life, from before its first configuration's model (as --process-shift does for
  // one configuration), so the launches draw n layouts of what a process allocates instead of
  // one (docs/methodology.md, "Where the buffers land").
  // Empty: nothing held.
  std::vector<int> process_shifts_mib;
  // How a speedup is measured (docs/methodology.md, "The paired speedup"): "paired", blocks of
  // 1-rank and N-rank steps taking turns inside each launch, milliseconds apart, so both
  // sides meet the host in the same state; or "runs", whole runs of each side compared over
  // launches. The runs are measured either way: they give the phase breakdown and, beside the
  // paired blocks, the solo check.
  std::string design = "paired";
  // Seconds of paired blocks per configuration and launch (at least kMinRounds rounds).
  double paired_seconds = kDefaultPairedSeconds;
  // How many speedups' paired blocks take turns in one window (trainer/study/paired_blocks.hpp).
  int paired_window = kDefaultPairedWindow;
  // false: skip the memory pre-flight (study/memory_preflight.hpp), as --no-memory-check does.
  bool memory_check = true;
  TrainOptions base;                       // runs, warmup, steps, optimizer, lr, seed, model options
  std::vector<SpecOverride> overrides;
};

constexpr int kDefaultLaunchesGpu = 3;
constexpr int kDefaultLaunchesCpu = 1;
// The launches a study runs on this device: the spec's, or the device's default.
int launches_for(const SweepSpec& spec, bool on_cuda);
// The launches every configuration runs before target_half_width may stop it (0 without a target).
int min_launches_for(const SweepSpec& spec, int launches);

// The MiB launch `launch` (0-based) holds first: process_shifts_mib[launch mod n], 0 without shifts.
int process_shift_of_launch(const SweepSpec& spec, int launch);

// Throws SpecError naming file, line and key for a missing/unreadable file, YAML syntax
// errors, unknown keys, wrong types and bad values.
SweepSpec load_sweep_spec(const std::string& path);
SweepSpec parse_sweep_spec(const std::string& text, const std::string& path_for_messages);

struct SweepConfig {
  TrainOptions options;        // world_size set
  std::string nccl_profile;    // profile name
};

// The grid in run order. Order: for each model, batch size and the other dimensions, the
// world sizes run in alternating direction from one batch size to the next (1,2 then
// 2,1: an ABBA pattern), so a slow drift of the machine does not line up with one world size.
std::vector<SweepConfig> expand_sweep(const SweepSpec& spec, const std::string& nccl_profile);

// The ConfigParams fields expand_sweep varies (their names in results/store/config_fields.hpp):
// the test checks them against the table's Sweep::dimension rows.
std::vector<std::string> swept_fields();

}  // namespace ddpscale
