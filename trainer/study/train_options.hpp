// Everything `ddpscale train` (and each configuration of a sweep) is told, validated the
// same way on every rank before any collective.
#pragma once
#include <cstdint>
#include <string>

#include "engine/engine_options.hpp"
#include "run_record.hpp"

namespace ddpscale {

struct TrainOptions {
  std::string model = "mlp-medium";
  int64_t seq_len = 0, features = 0, vocab = 0, classes = 0;  // 0 = the model's documented default
  bool dropout = true;
  int64_t batch = 32;               // per rank (weak scaling) or global (strong scaling)
  std::string scaling = "weak";     // weak | strong
  int world_size = 0;               // ranks that train; 0 = every launched rank
  int runs = 5;
  int warmup = 10;
  int steps = 100;
  uint64_t seed = 42;
  std::string optimizer = "adam";   // adam | sgd
  std::string optimizer_impl = "auto";  // auto (fused Adam on GPUs) | libtorch | fused
  double lr = 1e-3;
  double bucket_mb = 25.0;
  double first_bucket_mb = 1.0;    // PyTorch's default: communication starts early in backward
  bool overlap = true;
  bool phase_timing = true;
  // Runs time phases in the pattern on, off, off, on (repeated), so the clock's own cost is
  // measured between neighbouring runs of one launch, where the machine's drift cancels.
  bool alternate_phase_timing = false;
  std::string data = "device";      // device | host (pinned host batch copied every step, timed as "data")
  std::string dtype = "float32";   // float32 | bfloat16 (autocast forward; see mixed_precision.hpp)
  std::string exec = "eager";      // eager | graph (the whole step as one CUDA graph; see training_session.hpp)
  std::string allreduce_dtype = "float32";  // float32 | bfloat16: gradients cast for the allreduce only
  int gpu_busy_steps = 0;          // > 0: after the measured steps, profile this many for the GPU-busy floor (gpu_busy.hpp)
  std::string gpu_kernels;         // non-empty: each rank writes the profiled steps' kernel table (kernel_table_path)
};

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

// The world size the options ask for, given the launch.
int effective_world_size(const TrainOptions& options, int launched_ranks);
int64_t batch_per_rank(const TrainOptions& options, int world_size);
int64_t global_batch(const TrainOptions& options, int world_size);

// The record of the configuration's parameters, as stored and compared on --resume.
ConfigParams config_params(const TrainOptions& options, int world_size, int64_t parameters, bool on_cuda);

// "adam-fused" where the fused CUDA kernel will run, else "adam" / "sgd".
std::string resolved_optimizer(const TrainOptions& options, bool on_cuda);

// The model options a configuration builds its model with (0 fields keep the model's defaults).
ModelOptions model_options_from(const TrainOptions& options);

// What the training session of run `run_index` on `world_size` ranks reads: the batch per
// rank, whether this run times its phases (phase_timed_run), the rest as given.
EngineOptions engine_options(const TrainOptions& options, int world_size, int run_index);

// A stable, file-name-safe id: "mlp-medium_b32_w2_weak_adam_fp32_bk25_ov_default".
std::string config_id(const ConfigParams& params);

}  // namespace ddpscale
