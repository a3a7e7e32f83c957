#include "trainer/study/train_options.hpp"

#include "models/model_catalog.hpp"
#include "models/torchscript_catalog.hpp"
#include "trainer/command_line/cli_util.hpp"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <sstream>

namespace ddpscale {

int effective_world_size(const TrainOptions& options, int launched_ranks) {
  return options.world_size > 0 ? options.world_size : launched_ranks;
}

int64_t batch_per_rank(const TrainOptions& options, int world_size) {
  return options.scaling == "strong" ? options.global_batch / world_size : options.batch_per_rank;
}

int64_t global_batch(const TrainOptions& options, int world_size) {
  return options.scaling == "strong" ? options.global_batch : options.batch_per_rank * world_size;
}

void set_fixed_batch(TrainOptions& options, int64_t batch) {
  const bool strong = options.scaling == "strong";
  options.global_batch = strong ? batch : 0;
  options.batch_per_rank = strong ? 0 : batch;
}

int64_t fixed_batch(const TrainOptions& options) {
  return options.scaling == "strong" ? options.global_batch : options.batch_per_rank;
}

std::string canonical_dtype(const std::string& name) {
  if (name == "float32" || name == "fp32") return "float32";
  if (name == "bfloat16" || name == "bf16") return "bfloat16";
  throw UsageError("--dtype '" + name + "' is not float32 (fp32) or bfloat16 (bf16)");
}

bool built_with_cuda_graphs() {
#ifdef DDPSCALE_CUDA_GRAPHS
  return true;
#else
  return false;
#endif
}

// A CUDA graph replays kernels with the arguments they were captured with: everything that
// changes from step to step must live on the device. LibTorch's own Adam keeps its step
// count on the host (its bias correction would be frozen at the captured step); the fused
// Adam's count is a device tensor, and SGD has no count.
static void validate_exec(const TrainOptions& o, bool on_cuda) {
  if (o.exec == "eager") return;
  if (o.exec != "graph") throw UsageError("--exec '" + o.exec + "' is not eager or graph");
  if (!built_with_cuda_graphs())
    throw UsageError("--exec graph: this build has no CUDA graph mode (it needs a CUDA build configured with "
                     "-DDDPSCALE_CUDA_GRAPHS=ON)");
  if (!on_cuda) throw UsageError("--exec graph captures the step as a CUDA graph: it needs GPUs (--device cuda)");
  if (o.optimizer == "adam" && o.optimizer_impl == "libtorch")
    throw UsageError("--exec graph needs an optimizer whose state lives on the GPU: --optimizer sgd, or adam with "
                     "--optimizer-impl auto or fused (LibTorch's Adam counts its steps on the host)");
  if (o.data == "host") throw UsageError("--exec graph replays a device-resident batch: use --data device");
  if (o.warmup < 2)
    throw UsageError("--exec graph needs --warmup 2 or more: eager steps before the capture (the libraries' "
                     "workspaces must exist by then) and one replay after it");
}

// --gpu-kernels and --gpu-trace write what the profiled steps saw, into a folder that must exist.
static void check_profile_output(const std::string& flag, const std::string& what, const std::string& prefix,
                                 int gpu_busy_steps) {
  if (prefix.empty()) return;
  if (gpu_busy_steps == 0)
    throw UsageError(flag + " " + what + " the profiled steps: add --gpu-busy-steps 20 (or more)");
  const auto folder = std::filesystem::path(prefix).parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder))
    throw UsageError(flag + " " + prefix + ": the folder " + folder.string() + " does not exist (create it first)");
}

static void validate_process_shift(const TrainOptions& o, bool on_cuda) {
  if (o.process_shift_mib == 0) return;
  if (!on_cuda)
    throw UsageError("--process-shift moves where GPU buffers land; on CPU there are none (leave it out)");
  if (o.process_shift_mib < 0 || o.process_shift_mib > kMostShiftMib)
    throw UsageError("--process-shift " + std::to_string(o.process_shift_mib) + ": give 0 to " +
                     std::to_string(kMostShiftMib) + " MiB");
}

static void validate_placement_shifts(const TrainOptions& o, bool on_cuda) {
  if (o.placement_shifts_mib.empty()) return;
  if (!on_cuda)
    throw UsageError("--placement-shifts-mib moves where GPU buffers land; on CPU there are none (leave it out)");
  for (int mib : o.placement_shifts_mib)
    if (mib < 0 || mib > kMostShiftMib)
      throw UsageError("--placement-shifts-mib " + std::to_string(mib) + ": each shift is 0 to " +
                       std::to_string(kMostShiftMib) + " MiB");
  if (o.runs % static_cast<int>(o.placement_shifts_mib.size()) != 0)
    throw UsageError("--placement-shifts-mib gives " + std::to_string(o.placement_shifts_mib.size()) +
                     " placements for " + std::to_string(o.runs) +
                     " runs: make --runs a multiple of it, so every placement runs equally often");
}

void validate_train_options(const TrainOptions& o, int launched_ranks, bool on_cuda) {
  auto positive = [](const char* what, int64_t value) {
    if (value <= 0) throw UsageError(std::string("--") + what + " must be positive, got " + std::to_string(value));
  };
  positive("batch-size", fixed_batch(o));
  positive("runs", o.runs);
  positive("steps", o.steps);
  if (o.warmup < 0) throw UsageError("--warmup must not be negative, got " + std::to_string(o.warmup));
  if (o.scaling != "weak" && o.scaling != "strong")
    throw UsageError("--scaling '" + o.scaling + "' is not weak or strong");
  if (o.optimizer != "adam" && o.optimizer != "sgd")
    throw UsageError("--optimizer '" + o.optimizer + "' is not adam or sgd");
  if (!(o.lr > 0) || !std::isfinite(o.lr)) throw UsageError("--lr must be a positive number");
  if (o.optimizer_impl != "auto" && o.optimizer_impl != "libtorch" && o.optimizer_impl != "fused")
    throw UsageError("--optimizer-impl '" + o.optimizer_impl + "' is not auto, libtorch or fused");
  if (o.optimizer_impl == "fused" && (o.optimizer != "adam" || !on_cuda))
    throw UsageError("--optimizer-impl fused is PyTorch's fused Adam kernel: it needs --optimizer adam on GPUs");
  if (!(o.bucket_mb > 0) || !std::isfinite(o.bucket_mb)) throw UsageError("--bucket-mb must be a positive number");
  if (!(o.first_bucket_mb > 0) || !std::isfinite(o.first_bucket_mb))
    throw UsageError("--first-bucket-mb must be a positive number");
  if (o.data != "device" && o.data != "host") throw UsageError("--data '" + o.data + "' is not device or host");
  if (o.data == "host" && !on_cuda)
    throw UsageError("--data host copies a pinned host batch to the GPU each step; on CPU there is nothing to copy");
  if (o.alternate_phase_timing && !o.phase_timing)
    throw UsageError("--alternate-phase-timing times every other pair of runs; with --no-phase-timing there is nothing to alternate");
  if (canonical_dtype(o.allreduce_dtype) != o.allreduce_dtype)
    throw UsageError("--allreduce-dtype '" + o.allreduce_dtype + "': spell it float32 or bfloat16");
  if (o.gpu_busy_steps < 0) throw UsageError("--gpu-busy-steps must not be negative");
  if (o.gpu_busy_steps > 0 && !on_cuda)
    throw UsageError("--gpu-busy-steps measures the GPU's kernel time; on CPU there is none (leave it at 0)");
  validate_placement_shifts(o, on_cuda);
  validate_process_shift(o, on_cuda);
  check_profile_output("--gpu-kernels", "lists the kernels of", o.gpu_kernels, o.gpu_busy_steps);
  check_profile_output("--gpu-trace", "writes the trace of", o.gpu_trace, o.gpu_busy_steps);
  canonical_dtype(o.dtype);  // throws UsageError naming the choices
  validate_exec(o, on_cuda);
  if (o.world_size < 0) throw UsageError("--world-size must not be negative");
  const int world = effective_world_size(o, launched_ranks);
  // Standard input reaches rank 0 only, and a rank waiting in a collective for rank 0's turn
  // would meet the communication timeout while the other program runs.
  if (o.take_turns && world != 1)
    throw UsageError("--take-turns hands one process its runs through standard input: launch 1 rank, not " +
                     std::to_string(world));
  if (world > launched_ranks)
    throw UsageError("--world-size " + std::to_string(world) + " is larger than the " +
                     std::to_string(launched_ranks) + " ranks launched (mpirun -np " + std::to_string(world) + " ...)");
  if (o.scaling == "strong" && o.global_batch % world != 0)
    throw UsageError("--scaling strong splits the global batch " + std::to_string(o.global_batch) + " over " +
                     std::to_string(world) + " ranks, but it does not divide evenly; pick a multiple of " +
                     std::to_string(world));
  if (o.seq_len < 0 || o.features < 0 || o.vocab < 0 || o.classes < 0)
    throw UsageError("--seq-len, --features, --vocab and --classes must not be negative");
  validate_model_input(o);
}

void validate_model_input(const EngineOptions& o) {
  if (!is_torchscript_model(o.model)) {
    // An unknown name first: "resnet18.pt" with --input-shape is the user's own model
    // without its torchscript: prefix, which describe_model's message says.
    if (!o.input_shape.empty() || !o.input.empty()) describe_model(o.model, ModelOptions{});
    if (!o.input_shape.empty() || !o.input.empty())
      throw UsageError("--input-shape and --input describe a torchscript:PATH model's input; " + o.model +
                       " has its own (--features, --seq-len, --vocab)");
    return;
  }
  const std::string path = torchscript_path(o.model);
  if (o.input_shape.empty() == o.input.empty())
    throw UsageError("--model " + o.model + ": give one of --input-shape 3x224x224 (float inputs, batch axis left " +
                     "out) or --input tokens:VOCAB:SEQ (int64 token ids)" +
                     (o.input.empty() ? "" : std::string(", not both")));
  if (!o.input.empty() && o.input.rfind("tokens:", 0) != 0)
    throw UsageError("--input '" + o.input + "' is not tokens:VOCAB:SEQ (float inputs: --input-shape)");
  if (!o.input_shape.empty() && o.input_shape.rfind("tokens:", 0) == 0)
    throw UsageError("--input-shape '" + o.input_shape + "': token ids are --input " + o.input_shape);
  try {
    parse_torchscript_input(o.input.empty() ? o.input_shape : o.input);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string(o.input.empty() ? "--input-shape " : "--input ") + e.what());
  }
}

bool phase_timed_run(const TrainOptions& o, int run_index) {
  if (!o.phase_timing) return false;
  if (!o.alternate_phase_timing) return true;
  const int position = run_index % 4;
  return position == 0 || position == 3;
}

ConfigParams config_params(const TrainOptions& o, int world_size, int64_t parameters, bool on_cuda) {
  ConfigParams p;
  // A TorchScript model is named by its file's stem and identified by the file's SHA-256.
  p.model = is_torchscript_model(o.model) ? torchscript_stem(o.model) : o.model;
  if (is_torchscript_model(o.model)) {
    p.model_sha256 = torchscript_sha256(torchscript_path(o.model));
    p.model_input = model_options_from(o).input;
  }
  p.parameters = parameters;
  p.batch_per_rank = batch_per_rank(o, world_size);
  p.global_batch = global_batch(o, world_size);
  p.world_size = world_size;
  p.scaling = o.scaling;
  p.optimizer = resolved_optimizer(o, on_cuda);
  p.learning_rate = o.lr;
  p.dtype = o.dtype;
  p.exec = o.exec;
  // One rank has no allreduce: its record says float32 whatever was asked, so it stays the
  // 1-rank twin of every allreduce precision.
  p.allreduce_dtype = world_size > 1 ? o.allreduce_dtype : "float32";
  p.bucket_mb = o.bucket_mb;
  p.overlap = o.overlap;
  p.broadcast_buffers = o.broadcast_buffers;
  p.warmup_steps = o.warmup;
  p.measured_steps = o.steps;
  p.runs = o.runs;
  p.seed = o.seed;
  p.device = on_cuda ? "cuda" : "cpu";
  p.backend = world_size == 1 ? "none" : (on_cuda ? "nccl" : "mpi");
  return p;
}

std::string resolved_optimizer(const TrainOptions& o, bool on_cuda) {
  return resolved_optimizer(o.optimizer, o.optimizer_impl, on_cuda);
}

size_t placement_of_run(size_t placements, int run_index) { return static_cast<size_t>(run_index) % placements; }

int placement_shift_of_run(const TrainOptions& o, int run_index) {
  if (o.placement_shifts_mib.empty()) return -1;
  return o.placement_shifts_mib[placement_of_run(o.placement_shifts_mib.size(), run_index)];
}

EngineOptions engine_options(const TrainOptions& o, int world_size, int run_index) {
  EngineOptions e = o;
  e.placement_shift_mib = placement_shift_of_run(o, run_index);
  e.batch_per_rank = batch_per_rank(o, world_size);
  e.phase_timing = phase_timed_run(o, run_index);
  e.dtype = canonical_dtype(o.dtype);
  return e;
}

}  // namespace ddpscale
