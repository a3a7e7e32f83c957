// What one training session reads: the model, its optimizer, the DDP settings and how many
// steps to time. The study's TrainOptions (study/train_options.hpp) extends it with how a
// configuration runs (runs, scaling, world size) and gives each run its own by
// engine_options() (batch per rank, whether this run times its phases).
#pragma once
#include "models/model_catalog.hpp"
#include "results/store/run_record.hpp"

#include <cstdint>
#include <string>

namespace ddpscale {

struct EngineOptions {
  std::string model = "mlp-medium";
  int64_t seq_len = 0, features = 0, vocab = 0, classes = 0;  // 0 = the model's documented default
  bool dropout = true;
  // torchscript:PATH models (models/torchscript_model.hpp): what forward takes per sample,
  // one of the two: --input-shape 3x224x224 (float inputs) or --input tokens:VOCAB:SEQ.
  std::string input_shape, input;
  int64_t batch_per_rank = 32;      // samples each rank trains on per step; the global batch is this x world size
  uint64_t seed = 42;               // initial parameters; run k draws data and dropout from seed + k
  std::string optimizer = "adam";   // adam | sgd
  std::string optimizer_impl = "auto";  // auto (fused Adam on GPUs) | libtorch | fused
  double lr = 1e-3;
  double bucket_mb = kDefaultBucketMb;
  double first_bucket_mb = kDefaultFirstBucketMb;
  bool overlap = true;
  // PyTorch DDP's broadcast_buffers: rank 0's buffers (BatchNorm's running statistics) on
  // every rank before each forward. false: each rank keeps its own, as broadcast_buffers=False.
  bool broadcast_buffers = true;
  bool phase_timing = true;         // time every phase of a step, or whole steps only
  std::string data = "device";      // device | host (pinned host batch copied every step, timed as "data")
  std::string dtype = "float32";    // float32 | bfloat16 (autocast forward; see mixed_precision.hpp)
  std::string exec = "eager";       // eager | graph (the whole step as one CUDA graph; see training_session.hpp)
  std::string allreduce_dtype = "float32";  // float32 | bfloat16: gradients cast for the allreduce only
  int warmup = 10;
  int steps = 100;
  int gpu_busy_steps = 0;           // > 0: after the measured steps, profile this many for the GPU-busy floor
  std::string gpu_kernels;          // non-empty: each rank writes the profiled steps' kernel table (kernel_table_path)
  std::string gpu_trace;            // non-empty: each rank writes the profiled steps' Kineto trace (trace_path)
  // >= 0 (--placement-shifts): the session empties the allocator's cache, then holds this
  // many MiB of device memory before anything else it allocates, so its parameters,
  // optimizer state, batch and graph pool land elsewhere (docs/methodology.md, "Where the
  // buffers land"). -1: neither.
  int placement_shift_mib = -1;
};

// The model options the session builds its model with (0 fields keep the model's defaults).
ModelOptions model_options_from(const EngineOptions& options);

// "adam-fused" where the fused CUDA kernel will run, else "adam" / "sgd".
std::string resolved_optimizer(const std::string& optimizer, const std::string& optimizer_impl, bool on_cuda);

// Where rank `rank` writes its kernel table for --gpu-kernels PREFIX: PREFIX.rank<R>.csv.
std::string kernel_table_path(const std::string& prefix, int rank);

// Where rank `rank` writes its trace for --gpu-trace PREFIX: PREFIX.rank<R>.json.
std::string trace_path(const std::string& prefix, int rank);

}  // namespace ddpscale
