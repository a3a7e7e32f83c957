// Memory pre-flight: a configuration whose training state cannot fit in the memory the rank
// has free is refused before its model is built, with both numbers, instead of being
// OOM-killed minutes later (or taking the machine's swap with it). What is counted and why:
// docs/methodology.md, "Memory pre-flight".
//
// The arithmetic (estimate_training_memory, memory_verdict) is pure and unit-tested; only
// read_free_memory looks at the machine.
#pragma once
#include "models/model_catalog.hpp"
#include "trainer/study/train_options.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace ddpscale {

class MpiContext;
struct DeviceChoice;

// What one rank's training holds at its peak, in bytes.
struct MemoryEstimate {
  int64_t weights = 0;           // fp32 parameters (ModelDescription::weight_bytes_fp32, as `ddpscale models` prints)
  int64_t gradients = 0;         // one fp32 gradient per parameter (they live in the DDP buckets)
  int64_t optimizer_state = 0;   // Adam: two moments (ModelDescription::adam_state_bytes_fp32); SGD: none
  int64_t gradient_buckets = 0;  // DDP working space beyond the gradients (world size > 1)
  int64_t activations = 0;       // what forward keeps for backward at this batch per rank (estimate)
  bool activations_estimated = true;  // false: a TorchScript model, whose layers are not known here
  int64_t total() const { return weights + gradients + optimizer_state + gradient_buckets + activations; }
};

// The estimate for `model` trained with `options` on `world_size` ranks (batch per rank as
// batch_per_rank() gives it). Allocates nothing: transformer@2B costs nothing to estimate.
MemoryEstimate estimate_training_memory(const ModelDescription& model, const TrainOptions& options, int world_size);

// The memory a rank may use and where that number comes from.
struct FreeMemory {
  int64_t bytes = 0;
  std::string where;  // "host vm (MemAvailable in /proc/meminfo)", "GPU 0 (cudaMemGetInfo)"
  int ranks_sharing = 1;  // ranks of the configuration that draw on it (CPU ranks on one host share its RAM)
};

struct MemoryVerdict {
  bool fits = true;
  std::string message;  // why not, with both numbers and what to do; empty when it fits
};

// Whether `ranks_sharing` ranks holding `estimate` each fit into `free`. `what` names the
// configuration ("transformer@2B batch 32"). Pure.
MemoryVerdict memory_verdict(const std::string& what, const MemoryEstimate& estimate, const FreeMemory& free);

// "29.8 GiB" (or "512.0 MiB" below 1 GiB).
std::string human_bytes(int64_t bytes);

// Parsers of what read_free_memory reads, pure so they are tested on fixed text.
// MemAvailable of /proc/meminfo in bytes.
std::optional<int64_t> mem_available_from_meminfo(const std::string& meminfo);
// A cgroup's limit minus its usage, from the limit file's text ("max" = none: nullopt;
// v1's "no limit" is a number near 2^63, also nullopt) and the usage file's text, less the
// page cache the kernel would reclaim first (memory.stat's inactive_file).
std::optional<int64_t> cgroup_headroom(const std::string& limit_text, const std::string& usage_text,
                                       int64_t reclaimable = 0);
// The cgroup v2 path of this process from /proc/self/cgroup ("0::/user.slice/x" -> "/user.slice/x").
std::optional<std::string> cgroup_v2_path(const std::string& proc_self_cgroup);

// This rank's free memory: on GPU cudaMemGetInfo of its device; on CPU MemAvailable from
// /proc/meminfo, or the cgroup (v2, else v1) limit minus usage where that is lower, shared
// by the configuration's ranks on this host (the first `world_size` ranks of the launch).
FreeMemory read_free_memory(const MpiContext& mpi, const DeviceChoice& device, int world_size);

// The pre-flight's verdict for one configuration given the free memory: what
// check_memory_fits decides once it has read the machine. Pure. `enabled` false
// (--no-memory-check, memory_check: false in a spec) accepts anything.
MemoryVerdict preflight_verdict(const ModelDescription& model, const TrainOptions& options, int world_size,
                                const FreeMemory& free, bool enabled);

// The whole pre-flight of one configuration on this rank: throws UsageError with
// memory_verdict's message when it does not fit. Call it inside the ranks' agreement on
// usage errors (agree_on_device's check, or a sweep's validation), so every rank refuses
// together with the failing rank's numbers. Ranks outside the world size train nothing
// and pass; `enabled` false reads nothing and passes.
void check_memory_fits(const ModelDescription& model, const TrainOptions& options, int world_size,
                       const MpiContext& mpi, const DeviceChoice& device, bool enabled);

}  // namespace ddpscale
