#include "trainer/engine/training_session.hpp"

#include "models/torchscript_model.hpp"
#include "trainer/engine/buffer_broadcast.hpp"
#include "trainer/engine/gpu_busy.hpp"
#include "trainer/engine/gradient_reducer.hpp"
#include "trainer/engine/gradient_timer.hpp"
#include "trainer/engine/initial_model.hpp"
#include "trainer/engine/mixed_precision.hpp"
#include "trainer/engine/nvtx_range.hpp"
#include "trainer/engine/optimizer_step.hpp"
#include "trainer/engine/step_clock.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#ifdef DDPSCALE_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include "comm/gpu_check.hpp"
#include "comm/nccl_communicator.hpp"
#endif
#ifdef DDPSCALE_CUDA_GRAPHS
#include "trainer/engine/graph_step.hpp"
#endif
#include <torch/version.h>
#if TORCH_VERSION_MAJOR >= 2
#include <c10/core/AutogradState.h>
#endif

namespace ddpscale {

// Runs the backward pass on the thread that calls it, not on autograd's worker thread for
// the GPU. With one GPU per process the worker does nothing the caller could not, and
// handing the pass to it and back costs two thread wake-ups per step: host time an eager
// step pays in full (docs/benchmarks.md). LibTorch 1.x (the CPU build) has no switch and
// runs a CPU backward on the calling thread anyway.
class BackwardOnCallingThread {
 public:
  BackwardOnCallingThread() {
#if TORCH_VERSION_MAJOR >= 2
    c10::AutogradState::get_tls_state().set_multithreading_enabled(false);
#endif
  }
  ~BackwardOnCallingThread() {
#if TORCH_VERSION_MAJOR >= 2
    c10::AutogradState::get_tls_state().set_multithreading_enabled(previous_);
#endif
  }
  BackwardOnCallingThread(const BackwardOnCallingThread&) = delete;
  BackwardOnCallingThread& operator=(const BackwardOnCallingThread&) = delete;

 private:
#if TORCH_VERSION_MAJOR >= 2
  bool previous_ = c10::AutogradState::get_tls_state().get_multithreading_enabled();
#endif
};

#ifndef DDPSCALE_CUDA_GRAPHS
// Never created without CUDA graphs (validate_train_options refuses --exec graph): the
// session reads the same in every build.
class GraphStep {
 public:
  bool captured() const { return false; }
  void replay() {}
  torch::Tensor loss() const { return {}; }
};
#endif

#ifdef DDPSCALE_CUDA
static NcclCommunicator* nccl_of(Communicator* comm) { return comm ? dynamic_cast<NcclCommunicator*>(comm) : nullptr; }
#endif

static void synchronize_device(const torch::Device& device) {
#ifdef DDPSCALE_CUDA
  if (device.is_cuda()) DDPSCALE_CUDA_CHECK(cudaDeviceSynchronize());
#else
  (void)device;
#endif
}

torch::Tensor hold_device_memory(int mib, const torch::Device& device) {
  if (mib <= 0) return {};
  return torch::empty({static_cast<int64_t>(mib) << 20}, torch::TensorOptions().dtype(torch::kUInt8).device(device));
}

TrainingSession::TrainingSession(const SessionSetup& setup)
    : setup_(setup), bf16_autocast_(setup.options.dtype == "bfloat16") {
  const auto& o = setup_.options;
  hold_placement_shift();
#ifdef DDPSCALE_CUDA_GRAPHS
  if (o.exec == "graph") captured_ = std::make_unique<GraphStep>(setup_.device);
#endif
  // Autocast reaches a TorchScript model's operators through the dispatcher (the JIT's own
  // autocast pass is off, models/torchscript_model.cpp). The executor's optimised graph would
  // replace autograd with the JIT's symbolic derivatives, which know nothing of autocast: a
  // bfloat16 gradient then meets a float32 weight ("expected scalar type BFloat16 but found
  // Float" from linear's backward, from the third step on). Unoptimised, every operator runs
  // and is differentiated as in an eager model; scripts/gpu/pytorch_ddp_reference.py does the same.
  if (bf16_autocast_ && is_torchscript_model(o.model))
    torchscript_unoptimized_ = std::make_unique<torch::jit::GraphOptimizerEnabledGuard>(false);
  const uint64_t run_seed = o.seed + static_cast<uint64_t>(setup_.run_index);
  const ModelOptions model_options = model_options_from(o);
  create_model(run_seed, model_options);
  create_batch(run_seed, model_options);
  const bool fused = resolved_optimizer(o.optimizer, o.optimizer_impl, setup_.device.is_cuda()) == "adam-fused";
  optimizer_ = make_optimizer(o.optimizer, fused, o.lr, parameters_);
  create_step_clock();
  if (setup_.world_size > 1) create_reducer();
  // Dropout differs per rank, as it does in real data-parallel training.
  torch::manual_seed(run_seed * 1000003ULL + static_cast<uint64_t>(setup_.rank) + 1);
  zero_gradients();
}

void TrainingSession::hold_placement_shift() {
  const auto& o = setup_.options;
  // Before anything else the session allocates: a kernel can run several percent faster or
  // slower by where its buffers land (cuDNN's persistent LSTM on an H100, docs/methodology.md,
  // "Where the buffers land"), so runs that hold different amounts first measure that spread too.
  // The cache is emptied first, also for a shift of 0: otherwise the previous run's freed
  // blocks serve this run at the same addresses whatever it holds (PyTorch's runs with a
  // shift but a kept cache all took 2.703-2.709 ms over four shifts on the H100, where a
  // shift made first in a fresh process moved them 2.0%).
  if (o.placement_shift_mib >= 0 && setup_.device.is_cuda()) {
#ifdef DDPSCALE_CUDA
    c10::cuda::CUDACachingAllocator::emptyCache();
#endif
    placement_shift_ = hold_device_memory(o.placement_shift_mib, setup_.device);
  }
}

void TrainingSession::create_model(uint64_t run_seed, const ModelOptions& model_options) {
  const auto& o = setup_.options;
  // Same seed on every rank, and rank 0's values are broadcast anyway.
  if (setup_.initial_model) {
    model_ = setup_.initial_model->fresh();
  } else {
    torch::manual_seed(run_seed);
    model_ = build_model(o.model, model_options);
    model_->to(setup_.device);
  }
  if (setup_.precision != torch::kFloat) model_->to(setup_.precision);
  model_->train();
  // Frozen parameters (requires_grad false, possible in a TorchScript file) are neither
  // averaged nor stepped; every built-in model trains all of its parameters.
  for (const auto& p : model_->parameters())
    if (p.requires_grad()) parameters_.push_back(p);
}

void TrainingSession::create_batch(uint64_t run_seed, const ModelOptions& model_options) {
  const auto& o = setup_.options;
  // Every rank generates the global batch and keeps its own slice, so N ranks with batch
  // b see exactly the data of one rank with batch N*b (the equivalence the tests check).
  const int64_t local = o.batch_per_rank;
  const int64_t global = o.batch_per_rank * setup_.world_size;
  SyntheticBatch batch = make_synthetic_batch(o.model, model_options, global, run_seed, torch::kCPU);
  inputs_ = batch.inputs.narrow(0, local * setup_.rank, local).contiguous();
  if (inputs_.is_floating_point()) inputs_ = inputs_.to(setup_.precision);  // token ids stay int64
  // Pinning and .to() keep a dense tensor's strides, so the layout reaches the device.
  inputs_ = model_->in_reading_layout(inputs_);
  if (o.data == "host") {
    host_inputs_ = inputs_.pin_memory();
    inputs_ = host_inputs_.to(setup_.device);
  } else {
    inputs_ = inputs_.to(setup_.device);
  }
  labels_ = batch.labels.narrow(0, local * setup_.rank, local).contiguous().to(setup_.device);
}

// --phase-timing's clock: CUDA events on the compute and NCCL streams on a GPU, host time otherwise.
void TrainingSession::create_step_clock() {
  const auto& o = setup_.options;
  [[maybe_unused]] void* comm_stream = nullptr;
#ifdef DDPSCALE_CUDA
  if (setup_.device.is_cuda()) {
    void* compute = c10::cuda::getCurrentCUDAStream(setup_.device.index()).stream();
    if (NcclCommunicator* nccl = nccl_of(setup_.comm)) {
      nccl->set_compute_stream(compute);
      comm_stream = nccl->stream();
    }
    if (o.phase_timing) clock_ = make_cuda_step_clock(o.steps, compute, comm_stream);
  }
#endif
  if (!clock_ && o.phase_timing) clock_ = make_host_step_clock(o.steps);
}

// World size > 1: the gradient reducer over the trainable parameters (rank 0's values broadcast
// to every rank) and, where asked, the buffers' broadcast.
void TrainingSession::create_reducer() {
  const auto& o = setup_.options;
  std::vector<torch::Tensor> params;
  std::vector<std::string> names;
  for (const auto& item : model_->named_parameters()) {
    if (!item.value().requires_grad()) continue;
    names.push_back(item.key());
    params.push_back(item.value());
  }
  ReducerOptions reducer_options;
  reducer_options.bucket_mb = o.bucket_mb;
  reducer_options.first_bucket_mb = o.first_bucket_mb;
  reducer_options.overlap = o.overlap;
  reducer_options.bfloat16_allreduce = o.allreduce_dtype == "bfloat16";
  // Gathered in graph mode too: inside the capture autograd's gradients come from the graph's
  // pool and the bucket is fixed, so a replay's cat reads and writes the captured addresses.
  reducer_options.gradients_stay_in_buckets = false;
  reducer_ = std::make_unique<GradientReducer>(params, names, *setup_.comm, reducer_options, clock_.get());
  reducer_->broadcast_parameters();
  const auto buffers = model_->buffers();
  if (o.broadcast_buffers && !buffers.empty())
    buffer_broadcast_ = std::make_unique<BufferBroadcast>(buffers, *setup_.comm);
}

TrainingSession::~TrainingSession() = default;

std::vector<torch::Tensor> TrainingSession::parameters() const { return parameters_; }

size_t TrainingSession::bucket_count() const { return reducer_ ? reducer_->bucket_count() : 0; }

// One rank resets every .grad, eager and graph alike, as PyTorch's zero_grad(set_to_none=True)
// does: autograd then hands over its own gradient tensors, with no zero fill and no add
// kernel. Inside a capture those tensors come from the graph's private memory pool, so
// every replay writes them at the same addresses and the captured optimizer reads them
// there; the reset itself is host work only and leaves nothing in the graph.
void TrainingSession::zero_gradients() {
  if (reducer_) {
    reducer_->prepare_for_backward();
  } else {
    for (auto& p : parameters_) p.mutable_grad().reset();
  }
}

void TrainingSession::broadcast_buffers_from_rank0() {
  if (buffer_broadcast_) buffer_broadcast_->broadcast_from_rank0();
}

void TrainingSession::step(int measured_index) {
  StepClock* clock = measured_index >= 0 ? clock_.get() : nullptr;
  if (clock_) clock_->select_step(measured_index);
  const NvtxRange step_range(measured_index >= 0 ? "step" : "warm-up step");
  auto loss = step_body(clock, measured_index == 0);
  if (measured_index >= 0) losses_.push_back(loss.detach());
}

torch::Tensor TrainingSession::step_body(StepClock* clock, bool first_measured_step) {
  // Only marks that bound a non-empty phase (see step_clock.hpp): each costs host time.
  if (clock && first_measured_step) clock->mark(Mark::step_start);
  if (host_inputs_.defined()) {
    const NvtxRange range("data");
    inputs_.copy_(host_inputs_, /*non_blocking=*/true);
    if (clock) clock->mark(Mark::data_end);
  }
  torch::Tensor loss;
  {
    const NvtxRange range("forward");
    // PyTorch DDP's default (broadcast_buffers=True): rank 0's buffers (BatchNorm's running
    // statistics) before every forward; built-in models have none.
    broadcast_buffers_from_rank0();
    const AutocastScope autocast(bf16_autocast_, setup_.device);
    loss = model_->training_loss(inputs_, labels_);
    if (clock) clock->mark(Mark::forward_end);
  }
  {
    const NvtxRange range("backward");
    const BackwardOnCallingThread on_this_thread;
    if (gradient_timer_) gradient_timer_->backward_started();
    loss.backward();
    if (gradient_timer_) gradient_timer_->backward_ended();
    if (clock) clock->mark(Mark::backward_end);
  }
  if (reducer_) {
    const NvtxRange range("allreduce wait");
    reducer_->finish_backward();
    if (clock) clock->mark(Mark::reduce_end);
  }
  {
    const NvtxRange range("optimizer");
    optimizer_->step();
    zero_gradients();
    if (clock) clock->mark(Mark::step_end);
  }
  return loss;
}

// Captures one step as a CUDA graph. Capture records work without running it, so the model
// is exactly where the warm-up left it.
void TrainingSession::capture_step() {
#ifdef DDPSCALE_CUDA_GRAPHS
  synchronize_device(setup_.device);
  NcclCommunicator* nccl = nccl_of(setup_.comm);
  if (nccl) nccl->pause_stall_watchdog();
  if (clock_) clock_->select_step(-1);  // the reducer's communication marks stay out of the graph
  captured_->capture([this] { return step_body(nullptr, false); });
  if (nccl) nccl->watch_stream(captured_->stream());  // the graph's collectives run there
#endif
}

// Between two replays the measured loop enqueues nothing, except at the end of each block of
// kGraphBlockSteps replays: the block's end (a CUDA event) and the last replay's loss (a
// copy). Any operation between two replays cost 2-3 us of GPU time per step on an H200,
// event and copy alike, and so did either as a node inside the graph (docs/benchmarks.md),
// about 2% of a small model's step; once per block it costs 0.1%.
void TrainingSession::replay_step(int measured_index) {
  StepClock* clock = measured_index >= 0 ? clock_.get() : nullptr;
  if (clock_) clock_->select_step(measured_index);
  const NvtxRange step_range(measured_index >= 0 ? "step (graph)" : "warm-up step (graph)");
  if (clock && measured_index == 0) clock->mark(Mark::step_start);
  captured_->replay();
  if (measured_index >= 0 && ends_graph_block(measured_index, setup_.options.steps)) {
    if (clock) clock->mark(Mark::step_end);
    losses_.push_back(captured_->loss().detach().clone());
  }
}

bool ends_graph_block(int step, int steps) { return last_step_of_block(step, kGraphBlockSteps, steps) == step; }

// Inside a graph the phases are not split: only the step's total is kept, and each step of
// a block holds the block's mean.
static void keep_block_step_times(RankTimings& timings) {
  for (int p = 0; p < kPhaseCount; ++p)
    if (static_cast<Phase>(p) != Phase::step)
      std::fill(timings.phase_us[static_cast<size_t>(p)].begin(), timings.phase_us[static_cast<size_t>(p)].end(), 0.0f);
  spread_block_totals(timings.phase_us[static_cast<size_t>(Phase::step)], kGraphBlockSteps);
}

int TrainingSession::loss_every() const { return captured_ ? kGraphBlockSteps : 1; }

// An untimed step in the session's mode: a replay once the step is captured, else eager.
void TrainingSession::untimed_step() {
  if (captured_ && captured_->captured())
    replay_step(-1);
  else
    step(-1);
}

void TrainingSession::train_steps(int steps) {
  for (int s = 0; s < steps; ++s) {
    if (captured_ && !captured_->captured()) {
      step(-1);  // the warm-up the capture needs; counts as the first step
      capture_step();
    } else {
      untimed_step();
    }
  }
  synchronize_device(setup_.device);
}

void TrainingSession::run(RankTimings& timings, std::vector<float>& losses) {
  const auto& o = setup_.options;
  if (captured_) {
    // Eager steps first (cuBLAS workspaces, optimizer state and the allocator's blocks must
    // exist before capture), then the capture, then one replay: the first launch of a graph
    // also uploads it to the device, which the measured steps should not pay.
    warm_up(o.warmup - 1);
    capture_step();
    replay_step(-1);
  } else {
    warm_up(o.warmup);
  }
  synchronize_device(setup_.device);
  if (setup_.comm) setup_.comm->barrier();
  losses_.clear();
  if (setup_.sampler) setup_.sampler->start();
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < o.steps; ++s) {
    if (captured_)
      replay_step(s);
    else
      step(s);
  }
  synchronize_device(setup_.device);
  timings.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (setup_.sampler) {
    setup_.sampler->stop();
    uint64_t reasons = 0;  // every reason seen during the measured steps
    for (const DeviceSample& sample : setup_.sampler->samples()) {
      timings.gpu_utilization_pct.push_back(sample.utilization_pct);
      timings.gpu_memory_used_mib.push_back(sample.memory_used_mib);
      timings.gpu_power_w.push_back(sample.power_w);
      timings.instruments["gpu_sm_clock_mhz"].push_back(sample.sm_clock_mhz);
      timings.instruments["gpu_memory_clock_mhz"].push_back(sample.memory_clock_mhz);
      reasons |= sample.clock_event_reasons;
    }
    if (!setup_.sampler->samples().empty())
      timings.instruments["gpu_clock_event_reasons"] = {static_cast<float>(reasons)};
  }
  if (clock_) clock_->read(o.steps, timings);
  if (clock_ && captured_) keep_block_step_times(timings);
  // No warm-up step to time (eager, --warmup 0): one more step, after what it must not change.
  if (setup_.gradient_timing && o.warmup == 0) time_gradients("after_measured");
  if (o.gpu_busy_steps > 0) measure_gpu_busy(o.gpu_busy_steps, timings);
  const auto trajectory = torch::stack(losses_).to(torch::kCPU, torch::kFloat).contiguous();
  losses.assign(trajectory.data_ptr<float>(), trajectory.data_ptr<float>() + trajectory.numel());
}

// Eager warm-up steps; the last one times the gradients where asked (SessionSetup), so the
// measured steps follow exactly the steps they would without it.
void TrainingSession::warm_up(int eager_steps) {
  for (int s = 0; s < eager_steps; ++s) {
    if (setup_.gradient_timing && s + 1 == eager_steps)
      time_gradients("last_warmup");
    else
      step(-1);
  }
}

// One untimed eager step whose backward records each gradient's ready time; the host waits
// for the device before reading it, as it does after the warm-up anyway.
void TrainingSession::time_gradients(const char* which_step) {
  gradient_timer_ = make_gradient_ready_timer(setup_.device, parameters_.size());
  {
    const GradientTimingScope listening(*gradient_timer_, reducer_.get(), parameters_);
    step(-1);
  }
  *setup_.gradient_timing = gradient_timing_record(*model_, *gradient_timer_);
  setup_.gradient_timing->step = which_step;
  setup_.gradient_timing->run = setup_.run_index;
  gradient_timer_.reset();
}

// After the measured steps, so profiling cannot change what they measured. Every rank runs
// the same extra steps (their collectives pair up); they train the model further, which the
// cross-rank checksum after the run still covers.
void TrainingSession::measure_gpu_busy(int steps, RankTimings& timings) {
  const GpuBusyProfile profile = profile_gpu_busy(
      steps, setup_.device.is_cuda() ? setup_.device.index() : -1, [this] { untimed_step(); },
      [this] { synchronize_device(setup_.device); },
      [this] {
        if (setup_.comm) setup_.comm->barrier();
      },
      setup_.options.gpu_trace.empty() ? "" : trace_path(setup_.options.gpu_trace, setup_.rank));
  if (!std::isfinite(profile.busy_us_per_step)) return;
  timings.gpu_busy_us = {static_cast<float>(profile.busy_us_per_step)};
  if (!setup_.options.gpu_kernels.empty())
    write_kernel_table(kernel_table_path(setup_.options.gpu_kernels, setup_.rank), profile.kernels, steps,
                       profile.busy_us_per_step);
}

// Summed where the parameters live: copying them to the host as float64 first moved 2.4 GB
// per rank after every run of a 300M-parameter model.
std::pair<double, double> TrainingSession::parameter_checksum() const {
  torch::NoGradGuard no_grad;
  auto sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(setup_.device));
  auto abs_sum = torch::zeros_like(sum);
  for (const auto& p : parameters_) {
    const auto d = p.detach().to(torch::kDouble);
    sum += d.sum();
    abs_sum += d.abs().sum();
  }
  return {sum.item<double>(), abs_sum.item<double>()};
}

}  // namespace ddpscale
