#include "trainer/study/memory_preflight.hpp"

#include "comm/mpi_context.hpp"
#include "models/catalog/model_shapes.hpp"
#include "trainer/command_line/cli_util.hpp"
#include "trainer/process/device_choice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#ifdef DDPSCALE_CUDA
#include <cuda_runtime.h>
#endif

namespace ddpscale {
namespace {

constexpr int64_t kFloatBytes = 4;

int64_t or_default(int64_t value, int64_t fallback) { return value > 0 ? value : fallback; }

// Floats one sample keeps for backward in an MLP. The description gives the parameter count,
// not the widths: with hidden layers of about equal width w (P ~ 3 w^2 for four of them, as
// mlp@ builds them), each keeps its Linear output, ReLU output and dropout mask (3 w).
double mlp_floats_per_sample(int64_t parameters) {
  const double width = std::sqrt(static_cast<double>(parameters) / 3.0);
  return 4 * 3 * width;
}

// Per time step and layer: the gates (4 LSTM, 3 GRU) and the hidden and cell states.
double recurrent_floats_per_sample(const std::string& cell, const EngineOptions& o) {
  RecurrentShape shape;  // the built-in lstm and gru are this shape (models/catalog/model_shapes.hpp)
  const int64_t seq_len = or_default(o.seq_len, shape.seq_len);
  const int64_t gates = cell == "lstm" ? 4 : 3;
  return static_cast<double>(seq_len * shape.layers * shape.hidden * (gates + 2));
}

// The shape size families pick for this many parameters stands in for any transformer of
// that size (exact for transformer@N). Per block and position: q, k, v, attention output,
// its projection, two residual sums with their norms (about 10 d), the feed-forward's hidden
// layer with its ReLU and dropout (3 ff); per head, the scores, softmax and dropout mask
// (3 S per position).
double transformer_floats_per_sample(int64_t parameters, const EngineOptions& o) {
  const TransformerShape fixed;
  TransformerShape s;
  try {
    s = transformer_for_size(parameters, or_default(o.vocab, fixed.vocab), or_default(o.seq_len, fixed.seq_len),
                             or_default(o.classes, fixed.classes));
  } catch (const std::invalid_argument&) {
    return 0;  // no shape of this size with these fixed parts: leave activations out
  }
  const double per_position = 10.0 * s.d_model + 3.0 * s.ff + 3.0 * s.heads * s.seq_len;
  return static_cast<double>(s.layers) * s.seq_len * per_position + 2.0 * s.seq_len * s.d_model;
}

int64_t activation_bytes(const ModelDescription& model, const TrainOptions& options, int64_t batch) {
  double floats = 0;
  if (model.family == "mlp")
    floats = mlp_floats_per_sample(model.parameters);
  else if (model.family == "lstm" || model.family == "gru")
    floats = recurrent_floats_per_sample(model.family, options);
  else if (model.family == "transformer")
    floats = transformer_floats_per_sample(model.parameters, options);
  // bfloat16 autocast keeps most of forward's outputs in 2 bytes.
  const double bytes_per_float = options.dtype == "bfloat16" ? 2.0 : 4.0;
  return static_cast<int64_t>(floats * bytes_per_float * static_cast<double>(batch));
}

std::string read_text(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// The configuration's ranks on this host: CPU ranks there share its RAM.
int training_ranks_on_this_host(const MpiContext& mpi, int world_size) {
  int ranks = 0;
  for (int r = 0; r < world_size && r < mpi.size(); ++r)
    if (mpi.hostnames()[static_cast<size_t>(r)] == mpi.hostname()) ++ranks;
  return std::max(ranks, 1);
}

// Page cache the kernel reclaims before it kills: memory.stat's inactive_file (v2) or
// total_inactive_file (v1). Without it, limit minus usage would count a container's cached
// files as taken.
int64_t reclaimable_bytes(const std::string& memory_stat) {
  std::istringstream lines(memory_stat);
  std::string key;
  long long value = 0, own = 0;
  while (lines >> key >> value) {
    if (key == "total_inactive_file") return value;  // v1: the hierarchy's, which its usage counts
    if (key == "inactive_file") own = value;
  }
  return own;
}

// The lower of the cgroup's headroom (v2 at this process's own cgroup or the mount's root,
// else v1) and `free`; a container's limit binds long before the host's MemAvailable.
void lower_to_cgroup_limit(FreeMemory& free, const std::string& host) {
  struct Files {
    std::string dir, limit, usage;
  };
  std::vector<Files> candidates;
  if (const auto path = cgroup_v2_path(read_text("/proc/self/cgroup")))
    candidates.push_back({"/sys/fs/cgroup" + *path, "memory.max", "memory.current"});
  candidates.push_back({"/sys/fs/cgroup", "memory.max", "memory.current"});
  candidates.push_back({"/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes"});
  for (const auto& files : candidates) {
    const auto headroom = cgroup_headroom(read_text(files.dir + "/" + files.limit), read_text(files.dir + "/" + files.usage),
                                          reclaimable_bytes(read_text(files.dir + "/memory.stat")));
    if (!headroom) continue;
    if (*headroom < free.bytes) {
      free.bytes = *headroom;
      free.where = "host " + host + " (cgroup limit minus usage, " + files.dir + "/" + files.limit + ")";
    }
    return;
  }
}

}  // namespace

MemoryEstimate estimate_training_memory(const ModelDescription& model, const TrainOptions& options, int world_size) {
  MemoryEstimate e;
  e.weights = model.weight_bytes_fp32;
  e.gradients = model.weight_bytes_fp32;
  // The project's SGD has no momentum (optimizer_step.cpp): no state. Adam keeps two moments.
  e.optimizer_state = options.optimizer == "adam" ? model.adam_state_bytes_fp32 : 0;
  if (world_size > 1) {
    // The bucket being filled holds its parameters' gradients twice while autograd's own
    // tensors are copied in (up to --bucket-mb); a bf16 allreduce adds a half-size copy of
    // every bucket.
    const auto bucket = static_cast<int64_t>(options.bucket_mb * 1024 * 1024);
    e.gradient_buckets = std::min(bucket, e.gradients);
    if (options.allreduce_dtype == "bfloat16") e.gradient_buckets += e.gradients / 2;
  }
  e.activations_estimated = model.family != "torchscript";
  e.activations = activation_bytes(model, options, batch_per_rank(options, world_size));
  return e;
}

std::string human_bytes(int64_t bytes) {
  constexpr double kMiB = 1024.0 * 1024.0, kGiB = kMiB * 1024.0;
  char text[48];
  if (static_cast<double>(bytes) >= kGiB)
    std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / kGiB);
  else
    std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / kMiB);
  return text;
}

MemoryVerdict memory_verdict(const std::string& what, const MemoryEstimate& e, const FreeMemory& free) {
  const int64_t needed = e.total() * free.ranks_sharing;
  if (needed <= free.bytes) return {};
  std::string text = what + " does not fit in memory: it needs an estimated " + human_bytes(e.total()) + " per rank";
  if (free.ranks_sharing > 1)
    text += " x " + std::to_string(free.ranks_sharing) + " ranks sharing it = " + human_bytes(needed);
  text += " (weights " + human_bytes(e.weights) + ", gradients " + human_bytes(e.gradients) + ", optimizer state " +
          human_bytes(e.optimizer_state) + ", gradient buckets " + human_bytes(e.gradient_buckets) + ", activations " +
          (e.activations_estimated ? human_bytes(e.activations) : std::string("not estimated for TorchScript")) +
          "), but " + free.where + " has " + human_bytes(free.bytes) +
          " free; use a smaller model or batch, more ranks (strong scaling) or fewer ranks per host, or pass "
          "--no-memory-check to try anyway";
  return {false, text};
}

std::optional<int64_t> mem_available_from_meminfo(const std::string& meminfo) {
  std::istringstream lines(meminfo);
  std::string line;
  while (std::getline(lines, line)) {
    long long kib = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %lld kB", &kib) == 1) return static_cast<int64_t>(kib) * 1024;
  }
  return std::nullopt;
}

std::optional<int64_t> cgroup_headroom(const std::string& limit_text, const std::string& usage_text,
                                       int64_t reclaimable) {
  long long limit = 0, usage = 0;
  if (std::sscanf(limit_text.c_str(), "%lld", &limit) != 1) return std::nullopt;  // "max", or no such file
  if (std::sscanf(usage_text.c_str(), "%lld", &usage) != 1) return std::nullopt;
  // cgroup v1 writes "no limit" as the largest page-aligned long (9223372036854771712).
  if (limit >= (1LL << 62)) return std::nullopt;
  return std::max<int64_t>(0, limit - std::max<int64_t>(0, usage - reclaimable));
}

std::optional<std::string> cgroup_v2_path(const std::string& proc_self_cgroup) {
  std::istringstream lines(proc_self_cgroup);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return std::nullopt;
}

FreeMemory read_free_memory(const MpiContext& mpi, const DeviceChoice& device, int world_size) {
  FreeMemory free;
#ifdef DDPSCALE_CUDA
  if (device.cuda) {
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaSetDevice(device.device_index) != cudaSuccess || cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess)
      throw UsageError("memory pre-flight: cudaMemGetInfo failed on GPU " + std::to_string(device.device_index) +
                       " (pass --no-memory-check to skip the check)");
    free.bytes = static_cast<int64_t>(free_bytes);
    free.where = "GPU " + std::to_string(device.device_index) + " of host " + mpi.hostname() + " (cudaMemGetInfo)";
    return free;
  }
#else
  (void)device;
#endif
  const auto available = mem_available_from_meminfo(read_text("/proc/meminfo"));
  free.bytes = available ? *available : INT64_MAX;
  free.where = "host " + mpi.hostname() + " (MemAvailable in /proc/meminfo)";
  lower_to_cgroup_limit(free, mpi.hostname());
  free.ranks_sharing = training_ranks_on_this_host(mpi, world_size);
  return free;
}

MemoryVerdict preflight_verdict(const ModelDescription& model, const TrainOptions& options, int world_size,
                                const FreeMemory& free, bool enabled) {
  if (!enabled) return {};
  const std::string what = model.name + " at batch " + std::to_string(batch_per_rank(options, world_size)) +
                           " per rank (" + options.optimizer + ")";
  return memory_verdict(what, estimate_training_memory(model, options, world_size), free);
}

void check_memory_fits(const ModelDescription& model, const TrainOptions& options, int world_size,
                       const MpiContext& mpi, const DeviceChoice& device, bool enabled) {
  if (!enabled || mpi.rank() >= world_size) return;
  const MemoryVerdict verdict =
      preflight_verdict(model, options, world_size, read_free_memory(mpi, device, world_size), enabled);
  if (!verdict.fits) throw UsageError(verdict.message);
}

}  // namespace ddpscale
