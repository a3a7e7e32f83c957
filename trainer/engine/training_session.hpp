// One run: a model at its initial parameters, its optimizer, its data and (world size > 1)
// its gradient reducer; warm-up steps, then measured steps with every phase timed.
//
// --exec graph: after the warm-up (eager, on the session's own stream), one whole step
// (forward, backward with the bucketed NCCL allreduces, optimizer, zeroing the gradients) is
// captured as a CUDA graph and every measured step replays it. The batch is already
// device-resident and static; dropout draws new masks each replay (the graph advances
// LibTorch's CUDA generator); the fused Adam keeps its step count on the device. Only the
// whole step is timed: the phases inside the graph are not split (stored as 0).
#pragma once
#include "comm/communicator.hpp"
#include "devices/device_sampler.hpp"
#include "models/model_registry.hpp"
#include "results/store/run_record.hpp"
#include "trainer/engine/engine_options.hpp"

#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace ddpscale {

class BufferBroadcast;
class GradientReadyTimer;
class GradientReducer;
class InitialModel;
class OptimizerStep;
class StepClock;
class GraphStep;  // --exec graph (CUDA graph builds only)

// `mib` MiB of device memory, held while the returned tensor lives, so every buffer the
// caching allocator hands out after it lands at other addresses (--placement-shifts per run,
// --process-shift per process; docs/methodology.md, "Where the buffers land"). 0: nothing held.
torch::Tensor hold_device_memory(int mib, const torch::Device& device);

struct SessionSetup {
  EngineOptions options;
  int run_index = 0;
  int rank = 0;               // rank within the configuration's group
  int world_size = 1;
  torch::Device device = torch::kCPU;
  Communicator* comm = nullptr;  // null when world_size == 1: no communication code at all
  DeviceSampler* sampler = nullptr;  // samples the GPU during the measured steps (null: none)
  // The configuration's model, reset to its initial parameters (null: the session builds
  // its own from seed + run_index, as the tests' sessions do).
  InitialModel* initial_model = nullptr;
  // The floating-point type of parameters, gradients, allreduce and optimizer state. Studies
  // measure float32; the tests use float64 to check identities (2 ranks x b == 1 rank x 2b,
  // graph == eager) to ~1e-12, far below the size of any real error.
  torch::ScalarType precision = torch::kFloat;
  // Non-null: one eager step outside the measured ones records when each gradient became
  // ready in its backward (engine/gradient_timer.hpp) into it: the last warm-up step, or
  // with no warm-up an extra step after the measured ones. Set on every rank of a group or
  // on none: that extra step is collective.
  GradientTiming* gradient_timing = nullptr;
};

// --exec graph keeps the step's end and its loss once per block of this many measured replays
// (and at the last one), not after every replay: see replay_step.
constexpr int kGraphBlockSteps = 50;

// Whether measured step `step` (0-based, of `steps`) ends a block of kGraphBlockSteps.
bool ends_graph_block(int step, int steps);

class TrainingSession {
 public:
  explicit TrainingSession(const SessionSetup& setup);
  ~TrainingSession();

  // Runs warm-up then measured steps; fills timings (this rank), losses and wall time.
  // losses holds the loss of every loss_every()-th measured step and of the last one.
  void run(RankTimings& timings, std::vector<float>& losses);
  // 1 in eager mode; kGraphBlockSteps in graph mode, which keeps a block's end and loss only.
  int loss_every() const;
  // One untimed step (tests use it to compare parameters after K steps).
  void train_steps(int steps);
  // What every step does before its forward, on its own (tests compare the ranks' buffers
  // after it); nothing where no buffers are broadcast. Collective.
  void broadcast_buffers_from_rank0();

  Model& model() { return *model_; }
  size_t bucket_count() const;  // 0 without a reducer (world size 1)
  std::vector<torch::Tensor> parameters() const;
  // Sum of all parameters and of their absolute values, in float64: equal on every rank
  // when data parallelism kept the replicas identical.
  std::pair<double, double> parameter_checksum() const;

 private:
  // The constructor's steps, in the order it takes them.
  void hold_placement_shift();
  void create_model(uint64_t run_seed, const ModelOptions& model_options);
  void create_batch(uint64_t run_seed, const ModelOptions& model_options);
  void create_step_clock();
  void create_reducer();

  void step(int measured_index);
  // The step's work; returns the loss. Also what --exec graph captures.
  torch::Tensor step_body(StepClock* clock, bool first_measured_step);
  void capture_step();
  void replay_step(int measured_index);
  void untimed_step();
  void measure_gpu_busy(int steps, RankTimings& timings);
  void warm_up(int eager_steps);
  void time_gradients(const char* which_step);
  void zero_gradients();

  SessionSetup setup_;
  torch::Tensor placement_shift_;  // --placement-shifts: held first, for the session's life
  bool bf16_autocast_;  // --dtype bfloat16, decided once instead of by a string compare per step
  // bfloat16 on a TorchScript model: the graph executor runs the module operator by operator,
  // for the session's life (see the constructor).
  std::unique_ptr<torch::jit::GraphOptimizerEnabledGuard> torchscript_unoptimized_;
  std::shared_ptr<Model> model_;
  std::unique_ptr<OptimizerStep> optimizer_;
  std::vector<torch::Tensor> parameters_;  // the model's trainable ones, gathered once: optimizer, gradients, checksum
  std::unique_ptr<StepClock> clock_;
  std::unique_ptr<GradientReducer> reducer_;
  std::unique_ptr<BufferBroadcast> buffer_broadcast_;  // world size > 1, buffers, broadcast_buffers
  std::unique_ptr<GradientReadyTimer> gradient_timer_;  // during time_gradients' step only
  torch::Tensor inputs_, labels_;   // this rank's slice of the global batch, on the device
  torch::Tensor host_inputs_;       // pinned copy for --data host
  std::vector<torch::Tensor> losses_;
  std::unique_ptr<GraphStep> captured_;  // --exec graph; declared last, destroyed first
};

}  // namespace ddpscale
