// The DDP engine's parts on 2 ranks: the gradient reducer (unused parameters, gradients as
// views into buckets, gathered against accumulated gradients), the bucket plan, phases that
// add up to the step and backward on the calling thread; on GPUs also the resident batch's
// layout, the fused ReLU + dropout, the kernel-time floor and fused Adam. Built into the
// same binaries as test_ddp_mpi.cpp (which says how).
#include "tests/ddp_test_helpers.hpp"
#include "trainer/engine/gradient_reducer.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>
#ifdef DDPSCALE_TEST_ON_GPU
#include "models/relu_dropout.hpp"
#endif

namespace ddpscale {
namespace {

using namespace ddp_test;

TEST(DdpReducer, UnusedParameterIsNamed) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  auto used = torch::ones({3}, torch::TensorOptions(test_device()).requires_grad(true));
  auto unused = torch::ones({2}, torch::TensorOptions(test_device()).requires_grad(true));
  GradientReducer reducer({used, unused}, {"encoder.weight", "head.bias"}, *comm, ReducerOptions{}, nullptr);
  reducer.prepare_for_backward();
  (used * 2).sum().backward();
  try {
    reducer.finish_backward();
    FAIL() << "an unused parameter went unnoticed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'head.bias'"), std::string::npos) << e.what();
  }
}

TEST(DdpReducer, GradientsAreViewsIntoBucketsAndAveraged) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  auto w = torch::zeros({4}, torch::TensorOptions(test_device()).requires_grad(true));
  GradientReducer reducer({w}, {"w"}, *comm, ReducerOptions{}, nullptr);
  reducer.prepare_for_backward();
  // d/dw sum(w * c) = c; rank r uses c = r + 1, so the average is 1.5.
  (w * static_cast<float>(g_mpi->rank() + 1)).sum().backward();
  reducer.finish_backward();
  EXPECT_TRUE(torch::allclose(w.grad().cpu(), torch::full({4}, 1.5f)));
}

// The eager path: .grad is reset before backward and autograd's own tensors are gathered
// into the bucket, which must give what accumulating into the bucket gives, twice in a row
// (the second backward must not add to the first's gradients).
TEST(DdpReducer, GatheredGradientsEqualAccumulatedOnesStepAfterStep) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  const auto options = torch::TensorOptions(test_device()).requires_grad(true);
  auto a = torch::zeros({3}, options), b = torch::zeros({2, 2}, options);
  ReducerOptions gathered;
  gathered.gradients_stay_in_buckets = false;
  GradientReducer reducer({a, b}, {"a", "b"}, *comm, gathered, nullptr);
  EXPECT_FALSE(a.grad().defined());
  const float c = static_cast<float>(g_mpi->rank() + 1);  // ranks 1 and 2: averages 1.5 and 3
  for (int step = 0; step < 2; ++step) {
    reducer.prepare_for_backward();
    EXPECT_FALSE(a.grad().defined()) << "step " << step;
    ((a * c).sum() + (b * (2 * c)).sum()).backward();
    reducer.finish_backward();
    EXPECT_TRUE(torch::allclose(a.grad().cpu(), torch::full({3}, 1.5f))) << "step " << step;
    EXPECT_TRUE(torch::allclose(b.grad().cpu(), torch::full({2, 2}, 3.0f))) << "step " << step;
  }
  // One bucket (5 floats, far below 1 MiB): both gradients now view the same buffer.
  ASSERT_EQ(reducer.bucket_count(), 1u);
  EXPECT_EQ(a.grad().data_ptr<float>() - b.grad().data_ptr<float>(), 4) << "a follows b in reverse order";
}

TEST(DdpTiming, PhasesAddUpToTheStep) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  SessionSetup setup = two_rank_setup(deterministic_options(0.05, 0.01, true), comm.get());
  setup.options.phase_timing = true;
  setup.options.steps = 5;
  setup.options.warmup = 1;
  TrainingSession session(setup);
  RankTimings timings;
  std::vector<float> losses;
  session.run(timings, losses);
  ASSERT_EQ(losses.size(), 5u);
  for (size_t s = 0; s < 5; ++s) {
    auto at = [&](Phase p) { return static_cast<double>(timings.phase_us[static_cast<size_t>(p)][s]); };
    const double parts = at(Phase::data) + at(Phase::forward) + at(Phase::backward) + at(Phase::allreduce_exposed) +
                         at(Phase::optimizer);
    // The marks tile the step: the parts differ from the whole only by float rounding
    // of each difference (float32 keeps ~7 digits), so 0.1% or 0.5 us is ample.
    EXPECT_NEAR(parts, at(Phase::step), std::max(0.5, 1e-3 * at(Phase::step))) << "step " << s;
    EXPECT_GT(at(Phase::forward), 0.0);
    EXPECT_GT(at(Phase::backward), 0.0);
    EXPECT_GT(at(Phase::allreduce_total), 0.0);
    EXPECT_LE(at(Phase::allreduce_exposed), at(Phase::step));
  }
}


#ifdef DDPSCALE_TEST_ON_GPU
// A session pins a --data host batch and moves it to the GPU: both keep the time-major strides
// Model::in_reading_layout gave the recurrent batch, so neither the per-step copy nor the
// forward copies it into another layout.
TEST(ResidentBatch, TimeMajorLayoutSurvivesPinningAndTheMoveToTheGpu) {
  SKIP_WITHOUT_OWN_DEVICE();
  auto model = build_model("lstm", {});
  const auto laid_out = model->in_reading_layout(make_synthetic_batch("lstm", {}, 4, 3, torch::kCPU).inputs);
  const auto pinned = laid_out.pin_memory();
  const auto on_device = pinned.to(test_device());
  EXPECT_EQ(pinned.strides(), laid_out.strides());
  EXPECT_EQ(on_device.strides(), laid_out.strides());
  EXPECT_TRUE(torch::equal(on_device.cpu(), laid_out));
}

// The MLPs' ReLU + dropout (models/relu_dropout.hpp) on the GPU: the same output, mask and
// input gradient, bit for bit, as torch::relu then torch::dropout under autograd, from the
// same seed, and the generator left where LibTorch leaves it, in each element type it takes.
// Sizes: 37x129 is no multiple of 4 (LibTorch's two forward kernels, our backward element by
// element); 37x128 takes the one-kernel forward and the 16-byte backward; the same one element
// into a buffer is contiguous but not 16-byte aligned (LibTorch's forward, our element-wise
// backward); 2200x1024 makes more than one grid-wide stride on any GPU of up to 256 SMs. The
// gradient must have both dropped and kept elements for the check to mean much.
TEST(ReluDropout, OutputsAndGradientsAreLibTorchsBitForBit) {
  SKIP_WITHOUT_OWN_DEVICE();
  struct Case {
    int64_t rows, columns, offset;
  };
  for (const auto type : {torch::kFloat, torch::kDouble, torch::kHalf, torch::kBFloat16}) {
    for (const Case c : {Case{37, 129, 0}, Case{37, 128, 0}, Case{37, 128, 1}, Case{2200, 1024, 0}}) {
      SCOPED_TRACE(std::string(c10::toString(type)) + " " + std::to_string(c.rows) + "x" + std::to_string(c.columns) +
                   " at offset " + std::to_string(c.offset));
      const std::vector<int64_t> shape{c.rows, c.columns};
      const auto options = torch::TensorOptions().device(test_device()).dtype(type);
      const auto x = torch::randn(shape, options);
      const auto upstream = torch::randn(shape, options);
      // The fused side's input is a view `offset` elements into a buffer, autograd's leaf.
      const int64_t n = c.rows * c.columns;
      auto buffer = torch::zeros({c.offset + n}, options);
      buffer.narrow(0, c.offset, n).copy_(x.reshape({-1}));
      buffer.requires_grad_(true);
      const auto fused_input = buffer.narrow(0, c.offset, n).view(shape);
      const auto reference_input = x.clone().requires_grad_(true);
      ASSERT_TRUE(relu_dropout_is_fused(fused_input, 0.3));
      ASSERT_EQ(reinterpret_cast<uintptr_t>(fused_input.data_ptr()) % 16 == 0, c.offset == 0);
      torch::manual_seed(11);
      const auto fused = relu_dropout(fused_input, 0.3, /*training=*/true);
      const auto next_after_fused = torch::rand({8}, options.dtype(torch::kFloat));
      torch::manual_seed(11);
      const auto reference = torch::dropout(torch::relu(reference_input), 0.3, /*training=*/true);
      const auto next_after_reference = torch::rand({8}, options.dtype(torch::kFloat));
      EXPECT_TRUE(torch::equal(fused, reference));
      EXPECT_TRUE(torch::equal(next_after_fused, next_after_reference)) << "the generator advanced differently";
      fused.backward(upstream);
      reference.backward(upstream);
      EXPECT_TRUE(torch::equal(buffer.grad().narrow(0, c.offset, n).view(shape), reference_input.grad()));
      const int64_t zeros = (reference_input.grad() == 0).sum().item<int64_t>();
      EXPECT_GT(zeros, x.numel() / 3);  // ReLU's half plus dropout's 30% of the rest
      EXPECT_LT(zeros, x.numel() - x.numel() / 5);
    }
  }
}
#endif

#ifdef DDPSCALE_TEST_ON_GPU
// The kernel-time floor on 2 GPUs: the profiled steps after the measured ones report how
// long the GPU was busy per step. The small MLP's eager step is bound by the host issuing
// kernels, so the GPU must be busy for less than the step (and for more than nothing).
TEST(GpuBusy, FloorIsBelowTheEagerStepOnTwoGpus) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  const BusyAndStep run = profiled_run(deterministic_options(25, 1, true), comm.get(), "eager",
                                       "the profiler recorded no kernels (CUPTI missing?)");
  EXPECT_GT(run.floor_us, 1.0);
  EXPECT_LT(run.floor_us, run.step_us);
}

// PyTorch's fused Adam kernel against LibTorch's own Adam: the same algorithm in another
// operation order, so after K steps on the same data the parameters agree in float64 to
// kIdentityTolerance (its comment bounds Adam's amplification of rounding).
TEST(FusedAdam, MatchesLibTorchAdam) {
  SKIP_WITHOUT_OWN_DEVICE();
  auto run_with = [&](const std::string& impl) {
    SessionSetup setup;
    setup.options = float64_options(25, 1, true);
    setup.options.optimizer = "adam";
    setup.options.optimizer_impl = impl;
    setup.options.lr = 1e-3;
    setup.device = test_device();
    setup.precision = torch::kDouble;
    TrainingSession session(setup);
    session.train_steps(5);
    return session.parameters();
  };
  const auto fused = run_with("fused");
  const auto reference = run_with("libtorch");
  ASSERT_EQ(fused.size(), reference.size());
  for (size_t i = 0; i < fused.size(); ++i) {
    const double diff = (fused[i] - reference[i]).abs().max().item<double>();
    EXPECT_LT(diff / reference[i].abs().max().item<double>(), kIdentityTolerance) << "parameter " << i;
  }
}
#endif

// The backward pass runs on the thread that calls the step, not on autograd's worker thread
// for the GPU (training_session.cpp, BackwardOnCallingThread): a gradient hook, which runs
// where autograd computes that gradient, records its thread. On CPU LibTorch runs it there
// anyway; on a GPU this fails without the switch.
TEST(EagerStep, BackwardRunsOnTheCallingThread) {
  SKIP_WITHOUT_OWN_DEVICE();
  SessionSetup setup;
  setup.options = deterministic_options(25, 1, true);
  setup.device = test_device();
  TrainingSession session(setup);
  std::vector<std::thread::id> hook_threads;
  torch::Tensor first = session.parameters().front();
  first.register_hook([&hook_threads](const torch::Tensor&) { hook_threads.push_back(std::this_thread::get_id()); });
  session.train_steps(2);
  ASSERT_EQ(hook_threads.size(), 2u);
  for (const auto& id : hook_threads) EXPECT_EQ(id, std::this_thread::get_id());
}

TEST(BucketPlan, ReverseOrderCapsAndOversizedParameters) {
  ReducerOptions options;
  options.first_bucket_mb = 1.0 / 1024;  // 1 KiB
  options.bucket_mb = 2.0 / 1024;        // 2 KiB
  // Parameters in registration order (bytes): 512, 4096 (bigger than any bucket), 1024, 1024, 512.
  const auto layout = plan_buckets({512, 4096, 1024, 1024, 512}, options);
  // First bucket (1 KiB): #4 (512); #3 would make 1536 > 1024, so a new bucket:
  // #3 + #2 = 2048 fits 2 KiB; #1 (4096) is alone; #0 starts the last one.
  const std::vector<std::vector<size_t>> by_hand = {{4}, {3, 2}, {1}, {0}};
  EXPECT_EQ(layout.buckets, by_hand);
}

}  // namespace
}  // namespace ddpscale
