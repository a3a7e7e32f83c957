// Everything `ddpscale train` (and each configuration of a sweep) is told, validated the
// same way on every rank before any collective.
#pragma once
#include "results/store/run_record.hpp"
#include "trainer/engine/engine_options.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ddpscale {

// What the engine reads for one run (EngineOptions: model, optimizer, DDP settings, steps)
// plus how a configuration runs. The batch the scaling holds fixed as the world grows is one
// of two fields (set_fixed_batch): batch_per_rank under weak scaling, global_batch under
// strong, the other 0; the engine gets the batch per rank of a world size (engine_options()).
struct TrainOptions : EngineOptions {
  std::string scaling = "weak";     // weak | strong
  int64_t global_batch = 0;         // strong scaling: samples per step over all ranks; weak: 0
  int world_size = 0;               // ranks that train; 0 = every launched rank
  int runs = 5;
  // Runs time phases in the pattern on, off, off, on (repeated), so the clock's own cost is
  // measured between neighbouring runs of one launch, where the machine's drift cancels.
  bool alternate_phase_timing = false;
  // NVML readings (utilisation, memory, power) every 100 ms during the measured steps; off:
  // no sampling thread at all, to measure what it costs or to keep NVML off a shared GPU.
  bool gpu_sampling = true;
  // Run k holds placement_shifts_mib[k % n] MiB of device memory before its model is made,
  // so the runs put their buffers at different addresses and the spread across runs covers
  // where they land (docs/methodology.md, "Where the buffers land"). Empty: no shift.
  std::vector<int> placement_shifts_mib;
  // MiB of device memory held from before the configuration's initial model is made until its
  // runs end (--process-shift). It also moves what a process makes once and keeps (library
  // handles and their workspaces), which a per-run shift after the first run cannot: on an H100
  // per-run shifts left cuDNN's persistent LSTM kernel where it was, and four of these amounts
  // moved it by 1.7-2.0% on both sides (docs/methodology.md, "Where the buffers land").
  // take_turns.py gives each set of fresh processes its own amount. 0: none.
  int process_shift_mib = 0;
  // Each run waits for the line "go" on standard input and its run line, flushed, says it is
  // done, so a driver can alternate this process's runs with another program's on the same
  // GPU (scripts/gpu/take_turns.py): both meet the same host within a second, where separate
  // launches minutes apart meet a host whose speed has moved (docs/methodology.md, "Taking
  // turns"). "stop" or the end of input ends the configuration after the runs so far.
  bool take_turns = false;
};

// Which of `placements` (> 0) run `run_index` holds first: index mod n, so every placement
// runs equally often. The one rule for the engine's shift and the summary's grouping.
size_t placement_of_run(size_t placements, int run_index);

// A shift is memory held on the GPU; the bound only catches a typo (GiB for MiB) before the
// allocation fails in every run.
constexpr int kMostShiftMib = 65536;

// The MiB run `run_index` holds first (TrainOptions::placement_shifts_mib), -1 without shifts.
int placement_shift_of_run(const TrainOptions& options, int run_index);

// Whether run `run_index` times its phases: every run, none, or (alternate_phase_timing)
// runs 0 and 3 of every 4.
bool phase_timed_run(const TrainOptions& options, int run_index);

// Whether this build has the CUDA graph step (--exec graph): a CUDA build configured with
// -DDDPSCALE_CUDA_GRAPHS=ON.
bool built_with_cuda_graphs();

// "float32" or "bfloat16" for any accepted spelling (float32, fp32; bfloat16, bf16), so a
// configuration has one name; throws UsageError naming the choices otherwise.
std::string canonical_dtype(const std::string& name);

// Throws UsageError (cli_util.hpp) with a one-line message. `launched_ranks` is the size
// of the launch, `on_cuda` whether ranks train on GPUs.
void validate_train_options(const TrainOptions& options, int launched_ranks, bool on_cuda);

// The TorchScript input contract: a torchscript:PATH model needs exactly one of
// --input-shape and --input, well formed; other models take neither. Throws UsageError.
// (Whether the file loads and its forward accepts the input: describe_model.)
void validate_model_input(const EngineOptions& options);

// The world size the options ask for, given the launch.
int effective_world_size(const TrainOptions& options, int launched_ranks);
int64_t batch_per_rank(const TrainOptions& options, int world_size);
int64_t global_batch(const TrainOptions& options, int world_size);

// --batch-size and a spec's batch_sizes name the batch the scaling holds fixed: per rank
// under weak scaling, global under strong. Sets that field from options.scaling (so set the
// scaling first) and zeroes the other, so neither holds a value that means nothing.
void set_fixed_batch(TrainOptions& options, int64_t batch);
// That batch: batch_per_rank under weak scaling, global_batch under strong.
int64_t fixed_batch(const TrainOptions& options);

// The record of the configuration's parameters, as stored and compared on --resume.
ConfigParams config_params(const TrainOptions& options, int world_size, int64_t parameters, bool on_cuda);

// "adam-fused" where the fused CUDA kernel will run, else "adam" / "sgd".
std::string resolved_optimizer(const TrainOptions& options, bool on_cuda);

// What the training session of run `run_index` on `world_size` ranks reads: the batch per
// rank, whether this run times its phases (phase_timed_run), the rest as given.
EngineOptions engine_options(const TrainOptions& options, int world_size, int run_index);


}  // namespace ddpscale
