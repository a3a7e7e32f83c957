// What a study measures, as plain data: no LibTorch, no HDF5. The trainer fills these,
// the run store (run_store.hpp) writes and reads them, the statistics reduce them.
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace ddpscale {

// The gradient bucket caps, defined here once for the engine (trainer/engine/gradient_reducer),
// the sweep's specs, `train`'s flags, the stored record and the predictor
// (prediction/gradient_buckets): PyTorch DDP's own (its reducer's kDefaultFirstBucketBytes,
// 1 MiB, small so that communication starts early in backward; kDefaultBucketBytesCap, 25 MiB).
inline constexpr double kDefaultFirstBucketMb = 1.0;
inline constexpr double kDefaultBucketMb = 25.0;

// The phases of one training step, in the order they happen. Times in microseconds.
enum class Phase : int { data = 0, forward, backward, allreduce_total, allreduce_exposed, optimizer, step };
constexpr int kPhaseCount = 7;
const char* phase_name(Phase phase);  // "data", "forward", ..., "step"

// One rank's timings for every measured step: phase_us[phase][step].
struct RankTimings {
  int rank = 0;
  std::vector<std::vector<float>> phase_us = std::vector<std::vector<float>>(kPhaseCount);
  double wall_seconds = 0;          // wall time of the measured steps on this rank
  int64_t peak_memory_bytes = 0;    // allocator high-water mark (0 where unknown, e.g. CPU)
  // NVML samples taken during the measured steps (empty on CPU).
  std::vector<float> gpu_utilization_pct;
  std::vector<float> gpu_memory_used_mib;
  std::vector<float> gpu_power_w;
  // GPU busy microseconds per step over the profiled steps after the measured ones
  // (--gpu-busy-steps): one value, or none where not measured.
  std::vector<float> gpu_busy_us;
  // The host-drift calibration taken on this rank just before the run (see
  // trainer/study/host_calibration.hpp): microseconds of a fixed host-only loop, and of a
  // fixed launch-bound kernel sequence on the rank's GPU (empty on CPU). One value each, or
  // none where not measured (files written before it existed).
  std::vector<float> calibration_host_us;
  std::vector<float> calibration_device_us;
  // The process that measured: its id (0 where not stored), so runs of different launches
  // are told apart by the processes that ran them.
  int64_t process_id = 0;
  // What the machine was doing around the run (docs/hdf5-schema.md, "Instruments"): one
  // series per name of kInstrumentNames, empty where not measured (a CPU rank has no GPU
  // clocks; files written before instruments existed have none).
  std::map<std::string, std::vector<float>> instruments;
};

// The instruments a rank records for each run, in the order they are stored:
// - cpu_cores: the distinct cores the process's threads last ran on at the end of the run;
// - cpu_mhz: the mean current frequency of those cores (cpufreq, else /proc/cpuinfo);
// - context_switches: voluntary and involuntary switches of the process during the run;
// - host_steal_ms: CPU time the hypervisor gave other guests during the run, all cores;
// - gpu_sm_clock_mhz, gpu_memory_clock_mhz: NVML clock samples during the measured steps;
// - gpu_clock_event_reasons: the OR of NVML's clock-event (throttle) reason bits seen;
// - gpu_cpu_affinity: the cores NVML names as close to the rank's GPU;
// - process_shift_mib: the MiB of device memory the process held first (0: none), the
//   layout its buffers drew (docs/methodology.md, "Where the buffers land");
// - cpu_mask: the cores of the process's CPU mask (sched_getaffinity), which the rank may run on;
// - intra_op_threads: LibTorch's intra-op threads of the rank (one value).
constexpr const char* kInstrumentNames[] = {"cpu_cores",          "cpu_mhz",          "context_switches",
                                            "host_steal_ms",      "gpu_sm_clock_mhz", "gpu_memory_clock_mhz",
                                            "gpu_clock_event_reasons", "gpu_cpu_affinity", "process_shift_mib",
                                            "cpu_mask",           "intra_op_threads"};
constexpr size_t kInstrumentCount = sizeof(kInstrumentNames) / sizeof(kInstrumentNames[0]);

enum class RunStatus { ok, failed };

// Measured steps in blocks of `block` (graph mode keeps one loss and one end mark per block),
// the last block possibly shorter: the last step of the block that `step` (0-based, of
// `steps`) falls in.
int last_step_of_block(int step, int block, int steps);

struct RunRecord {
  int index = 0;             // run k of the configuration
  // Which launch (fresh processes, communicators and CUDA contexts) ran it, 0-based; 0 in a
  // study of one launch and in files written before launches existed.
  int launch = 0;
  uint64_t seed = 0;         // seed + k: dropout and data (initial parameters: the configuration's seed)
  int64_t start_unix_ms = 0; // when the run started (Unix time, ms, rank 0's clock); 0 where not stored
  RunStatus status = RunStatus::ok;
  std::string failure;       // why, when failed ("NaN loss at step 17", "out of memory at batch 4096")
  double samples_per_second = 0;  // global samples / wall time of the measured steps, slowest rank
  std::vector<float> loss;   // rank 0's loss per measured step, or per block of loss_every steps
  // 1: loss[i] is step i's. k > 1 (graph mode): loss[i] is step min((i+1)*k, steps)-1's, the
  // end of a block of k replays (between which the measured loop enqueues nothing).
  int loss_every = 1;
  // The measured step (0-based, of `steps`) whose loss is loss[index]: see loss_every.
  int step_of_loss(int index, int steps) const;
  std::vector<RankTimings> ranks;  // index = rank within the configuration's group
};

// Everything that identifies a configuration; equal configs are the same experiment.
struct ConfigParams {
  std::string model;
  int64_t parameters = 0;
  int64_t batch_per_rank = 0;
  int64_t global_batch = 0;
  int world_size = 1;
  std::string scaling = "weak";     // weak | strong
  std::string optimizer = "adam";
  double learning_rate = 1e-3;
  std::string dtype = "float32";
  double bucket_mb = kDefaultBucketMb;
  bool overlap = true;
  std::string exec = "eager";
  std::string allreduce_dtype = "float32";  // float32 | bfloat16: what the gradients travel as
  std::string nccl_profile = "default";
  std::map<std::string, std::string> nccl_variables;  // the NCCL_* variables in effect
  int warmup_steps = 10;
  int measured_steps = 100;
  int runs = 50;
  uint64_t seed = 42;
  std::string device = "cpu";       // cpu | cuda
  std::string backend = "none";     // none (world 1) | mpi | nccl
  // torchscript:PATH models only (empty for built-in ones): the file's SHA-256, so --resume
  // refuses a file that changed, and the input it was fed ("3x224x224", "tokens:VOCAB:SEQ").
  std::string model_sha256;
  std::string model_input;
  // Rank 0's buffers (BatchNorm's running statistics) broadcast before each forward, as
  // PyTorch DDP's broadcast_buffers=True; false: each rank kept its own.
  bool broadcast_buffers = true;
  // Which data-parallel engine trained it: "ddpscale" (this tool's), or "pytorch-ddp"
  // (PyTorch's DistributedDataParallel, runs imported from scripts/gpu/pytorch_ddp_reference.py
  // by `ddpscale import-pytorch`), so one study holds both engines' answers side by side.
  std::string engine = "ddpscale";
};

constexpr const char* kEngineDdpscale = "ddpscale";
constexpr const char* kEnginePytorchDdp = "pytorch-ddp";

// One trainable parameter in the instrumented backward pass of GradientTiming.
struct ParameterGradient {
  std::string name;           // as the model registers it, e.g. "layers.0.weight"
  int64_t elements = 0;
  int64_t element_bytes = 4;  // of the parameter's dtype: what the reducer cuts buckets by
  // When its gradient became ready: microseconds from the start of backward to its gradient
  // accumulator's post hook (the moment the reducer marks it ready). NaN: it got none.
  double ready_us = std::numeric_limits<double>::quiet_NaN();
};

// When each trainable parameter's gradient became ready in backward, from one instrumented
// step of one run (docs/methodology.md, "Gradient timing"), on the group's rank 0. The
// predictor places buckets by it; empty where not recorded (files written before it existed).
struct GradientTiming {
  std::vector<ParameterGradient> parameters;  // in registration order
  double backward_us = std::numeric_limits<double>::quiet_NaN();  // that backward pass, start to end, same clock
  // "cuda_event": CUDA events on the compute stream (device time); "host": the host's steady clock.
  std::string clock;
  // Which step was instrumented: "last_warmup" (the last eager warm-up step of run `run`) or
  // "after_measured" (an extra step after the measured ones, where there is no warm-up).
  std::string step;
  int run = 0;
  bool recorded() const { return !parameters.empty(); }
};

// One pair of adjacent blocks of steps in the paired design (docs/methodology.md, "The paired
// speedup"): inside one live job, a block of 1-rank steps and a block of N-rank steps take
// turns, in an order drawn at random within each pair, so both blocks of a pair meet the
// host in the same state. Two kinds of A/A pair check the design: both blocks from the
// 1-rank session, or both from the N-rank session, taking turns the same way.
enum class PairKind : int { speedup = 0, same_one_rank = 1, same_n_ranks = 2 };
const char* pair_kind_name(PairKind kind);  // "speedup", "same_one_rank", "same_n_ranks"

struct BlockPair {
  PairKind kind = PairKind::speedup;
  // speedup: A is the 1-rank block, B the N-rank block. A/A: A and B are two blocks of the
  // same session, A the one the draw labelled first-in-principle (it ran first when a_first).
  bool a_first = true;
  double a_us = 0, b_us = 0;  // wall time of each block (N ranks: the slowest rank's)
  double start_s = 0;         // when the pair began, seconds after the paired measurement began
  int one_rank = 0;           // the rank whose 1-rank session ran the pair's 1-rank block(s) (0 for N/N)
};

// One launch's paired measurement of a configuration against its 1-rank twin, stored with
// the N-rank configuration.
struct PairedLaunch {
  int launch = 0;
  int block_steps = 0;  // steps per block, chosen from the pilot's autocorrelation
  // The pilot: 1-rank steps timed one by one just before the blocks; their median, and the
  // autocorrelation of their log step times at lags 1, 2, ... (index 0 is lag 1).
  double pilot_step_us = 0;
  std::vector<double> autocorrelation;
  // How many speedups' blocks took turns in the window this one measured in (1: alone);
  // each pair's start_s counts from the window's first pair.
  int window_speedups = 1;
  std::vector<BlockPair> pairs;  // in the order they ran
};

struct ConfigRecord {
  std::string id;  // stable name derived from the parameters, also the file name stem
  ConfigParams params;
  // A study of several launches stores each launch's runs of a configuration in a file of
  // its own (launch_file_name); the reader merges them (merge_launches). 1 and 0 otherwise.
  int launches = 1;
  int launch = 0;
  std::vector<RunRecord> runs;
  // Which build measured it and when it finished (ISO 8601): a resumed study can mix builds.
  // Empty for files written before these were stored.
  std::string git_commit;
  std::string finished_utc;
  GradientTiming gradient_timing;
  // The paired design's measurements, one per launch (N-rank configurations only; empty for
  // studies that measured with runs alone).
  std::vector<PairedLaunch> paired;
};

// Facts about the machine and software that produced a study.
struct StudyMetadata {
  std::string tool_version;
  std::string git_commit;
  std::string command_line;
  std::string spec_text;          // the YAML spec as given (empty for a single `train`)
  std::string created_utc;        // ISO 8601
  std::vector<std::string> hostnames;
  std::vector<std::string> gpu_names;
  std::string gpu_driver;
  std::string cuda_version;
  std::string nccl_version;
  std::string mpi_version;
  std::string torch_version;
  std::string hdf5_version;
  std::string link_topology;      // e.g. "GPU0-GPU1: NVLink (18 links), P2P yes"
  std::map<std::string, std::string> nccl_variables;
};

}  // namespace ddpscale
