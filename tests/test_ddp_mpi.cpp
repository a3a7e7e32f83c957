// The DDP engine on 2 ranks: numerical equivalence with single-rank training, parameter
// broadcast, the unused-parameter error, and phases that add up to the step. Built twice:
// on CPU with the MPI backend (label mpi), and with DDPSCALE_TEST_ON_GPU on 2 GPUs with
// NCCL (label gpu, skipped without GPUs).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <algorithm>
#include <cstdio>

#include "check.hpp"
#include "communicator.hpp"
#include "gradient_reducer.hpp"
#include "initial_model.hpp"
#include "mpi_test_env.hpp"
#include "step_clock.hpp"
#include "training_session.hpp"
#ifdef DDPSCALE_TEST_ON_GPU
#include "gpu_info.hpp"
#include "nccl_communicator.hpp"
#endif

namespace ddpscale {
namespace {

using testing::g_mpi;

#ifdef DDPSCALE_TEST_ON_GPU
torch::Device test_device() { return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(g_mpi->local_rank())); }
std::unique_ptr<Communicator> make_test_comm() { return make_nccl_communicator(g_mpi->world(), g_mpi->local_rank()); }
#define SKIP_WITHOUT_DEVICE() \
  if (visible_gpu_count() < 2) GTEST_SKIP() << "needs 2 GPUs"
#else
torch::Device test_device() { return torch::kCPU; }
std::unique_ptr<Communicator> make_test_comm() { return make_mpi_communicator(g_mpi->world()); }
#define SKIP_WITHOUT_DEVICE() (void)0
#endif

TrainOptions deterministic_options(double bucket_mb, double first_bucket_mb, bool overlap) {
  TrainOptions o;
  o.model = "mlp-medium";
  o.dropout = false;   // dropout masks differ per rank by design; the equivalence needs none
  o.optimizer = "sgd";
  o.lr = 0.05;
  o.batch = 4;         // per rank
  o.bucket_mb = bucket_mb;
  o.first_bucket_mb = first_bucket_mb;
  o.overlap = overlap;
  o.phase_timing = false;
  return o;
}

// This rank's part of a 2-rank session on the test device.
SessionSetup two_rank_setup(const TrainOptions& options, Communicator* comm) {
  SessionSetup setup;
  setup.options = options;
  setup.rank = g_mpi->rank();
  setup.world_size = 2;
  setup.comm = comm;
  setup.device = test_device();
  return setup;
}

// K steps on 2 ranks with batch b vs. K steps on one process with batch 2b on the same
// (concatenated) data: gradients averaged over ranks equal the gradient of the mean loss
// over the global batch, so the parameters must match.
void expect_equivalent_to_single_rank(const TrainOptions& options, int steps, size_t min_buckets, size_t max_buckets,
                                      double tolerance = 1e-5) {
  SKIP_WITHOUT_DEVICE();  // marks the calling test skipped and returns
  auto comm = make_test_comm();
  TrainingSession distributed(two_rank_setup(options, comm.get()));
  EXPECT_GE(distributed.bucket_count(), min_buckets);
  EXPECT_LE(distributed.bucket_count(), max_buckets);
  distributed.train_steps(steps);

  SessionSetup one;
  one.options = options;
  one.options.batch = options.batch * 2;
  one.world_size = 1;
  one.device = test_device();
  TrainingSession single(one);
  single.train_steps(steps);

  const auto a = distributed.parameters();
  const auto b = single.parameters();
  ASSERT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto diff = (a[i] - b[i]).abs().max().item<double>();  // both on the same device
    const auto scale = b[i].abs().max().item<double>();
    worst = std::max(worst, diff / std::max(scale, 1e-12));
  }
  EXPECT_LT(worst, tolerance) << "bucket " << options.bucket_mb << " MiB, overlap " << options.overlap;
  // The parameters really moved, so agreement is not trivially "nothing happened".
  TrainingSession untouched(one);
  EXPECT_GT((b[0] - untouched.parameters()[0]).abs().max().item<double>(), 1e-6);
}

TEST(DdpEquivalence, OneBucketWithOverlap) {
  expect_equivalent_to_single_rank(deterministic_options(100, 100, true), 3, 1, 1); }
TEST(DdpEquivalence, OneBucketNoOverlap) { expect_equivalent_to_single_rank(deterministic_options(100, 100, false), 3, 1, 1); }
TEST(DdpEquivalence, ManyBucketsWithOverlap) { expect_equivalent_to_single_rank(deterministic_options(0.05, 0.01, true), 3, 4, 8); }
TEST(DdpEquivalence, ManyBucketsNoOverlap) { expect_equivalent_to_single_rank(deterministic_options(0.05, 0.01, false), 3, 4, 8); }
// 0.001 MiB = 1 KiB: the 799x256 weight (800 KiB) is far bigger than a bucket.
// One bucket per parameter: mlp-medium has 8.
TEST(DdpEquivalence, ParameterBiggerThanBucket) {
  expect_equivalent_to_single_rank(deterministic_options(0.001, 0.001, true), 3, 8, 8);
}

// The recurrent and attention models reach the reducer with gradients of other shapes and
// origins (LSTM and GRU gate weights, embeddings, layer norms); each bucket gathers them
// into its buffer (gradients_stay_in_buckets false), which must give the 1-rank result too.
TEST(DdpEquivalence, RecurrentAndTransformerModels) {
  for (const char* model : {"lstm", "gru", "transformer"}) {
    SCOPED_TRACE(model);
    auto options = deterministic_options(0.25, 0.05, true);
    options.model = model;
    options.batch = 2;
    // Measured on CPU: 9.4e-8 (lstm, gru) and 2.5e-6 (transformer: layer norms and softmax
    // sum in a different order over 2 x 2 samples than over 4).
    expect_equivalent_to_single_rank(options, 2, 2, 64, 1e-5);
  }
}

TEST(DdpEquivalence, AdamToo) {
  SKIP_WITHOUT_DEVICE();
  auto options = deterministic_options(0.05, 0.01, true);
  options.optimizer = "adam";
  options.lr = 1e-3;
  // Adam divides by sqrt(v): a gradient near zero moves its parameter by ~lr whatever its
  // size, so float32 rounding differences between the two summation orders show up at
  // ~lr * 1e-2 instead of 1e-7. Measured 4.5e-5; 1e-4 still catches any real error (a
  // missing average, a stale bucket), which shows up at lr scale, 1e-3 here.
  expect_equivalent_to_single_rank(options, 3, 4, 8, 1e-4);
}

// bf16 autocast: the forward's matrix products round to bf16, differently for a batch of 4
// per rank than for 8 on one process (each GEMM rounds its own sums), so agreement is to
// bf16 precision; the gradients, their averaging and the update stay fp32.
TEST(DdpEquivalence, Bfloat16Autocast) {
  SKIP_WITHOUT_DEVICE();
  auto options = deterministic_options(0.05, 0.01, true);
  options.dtype = "bfloat16";
  // Measured 6.1e-3 on CPU (float32 agrees below 1e-5).
  expect_equivalent_to_single_rank(options, 3, 4, 8, 2e-2);
  // And bf16 is really in effect: the same training in float32 ends elsewhere.
  SessionSetup bf16_setup;
  bf16_setup.options = options;
  bf16_setup.device = test_device();
  SessionSetup fp32_setup = bf16_setup;
  fp32_setup.options.dtype = "float32";
  TrainingSession bf16(bf16_setup), fp32(fp32_setup);
  bf16.train_steps(3);
  fp32.train_steps(3);
  const auto a = bf16.parameters().front(), b = fp32.parameters().front();
  EXPECT_GT((a - b).abs().max().item<double>(), 1e-5 * b.abs().max().item<double>());
}

// --allreduce-dtype bfloat16: each bucket is cast to bf16 for the allreduce and back, so the
// averaged gradient carries bf16 rounding (2^-8 relative) and the parameters agree with one
// rank on the concatenated data to about lr * |g| * 2^-8 of their size, not to float32's 1e-5.
TEST(DdpEquivalence, Bfloat16Allreduce) {
  SKIP_WITHOUT_DEVICE();
  auto options = deterministic_options(0.05, 0.01, true);
  options.allreduce_dtype = "bfloat16";
  expect_equivalent_to_single_rank(options, 3, 4, 8, 1e-3);
  // And the gradients really travelled as bf16: with a float32 allreduce the same two ranks
  // end elsewhere (by more than the 1e-5 float32 agreement of the tests above).
  auto comm = make_test_comm();
  auto two_ranks = [&](const std::string& allreduce_dtype) {
    SessionSetup setup = two_rank_setup(options, comm.get());
    setup.options.allreduce_dtype = allreduce_dtype;
    auto session = std::make_unique<TrainingSession>(setup);
    session->train_steps(3);
    return session->parameters().front().clone();
  };
  const auto bf16 = two_ranks("bfloat16"), fp32 = two_ranks("float32");
  EXPECT_GT((bf16 - fp32).abs().max().item<double>(), 1e-5 * fp32.abs().max().item<double>());
}

TEST(DdpBroadcast, RanksWithDifferentSeedsStartIdentical) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  SessionSetup setup = two_rank_setup(deterministic_options(25, 1, true), comm.get());
  setup.options.seed = 1000 + 17 * static_cast<uint64_t>(g_mpi->rank());  // different init on each rank
  TrainingSession session(setup);
  const auto [sum, abs_sum] = session.parameter_checksum();
  double values[2] = {sum, abs_sum}, other[2];
  MPI_Sendrecv(values, 2, MPI_DOUBLE, 1 - g_mpi->rank(), 0, other, 2, MPI_DOUBLE, 1 - g_mpi->rank(), 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  EXPECT_EQ(values[0], other[0]);
  EXPECT_EQ(values[1], other[1]);
  // Without the broadcast the two inits would differ: check that seeds really matter.
  torch::manual_seed(1000);
  auto a = torch::randn({8});
  torch::manual_seed(1017);
  EXPECT_FALSE(torch::equal(a, torch::randn({8})));
}

// A configuration's runs share one model (InitialModel): the second run must start where the
// first started, with a fresh optimizer and a reducer whose predecessor's autograd hooks no
// longer fire, so the same seeds give the same parameters after the same steps.
TEST(DdpInitialModel, SecondRunRepeatsTheFirstExactly) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  TrainOptions options = deterministic_options(0.05, 0.01, true);
  options.optimizer = "adam";  // state that a reused model must not carry into the next run
  InitialModel shared(options.model, model_options_from(options), options.seed, test_device());
  SessionSetup setup = two_rank_setup(options, comm.get());
  setup.initial_model = &shared;
  const auto train_once = [&] {
    TrainingSession session(setup);
    session.train_steps(3);
    std::vector<torch::Tensor> after;
    for (const auto& p : session.parameters()) after.push_back(p.detach().clone());
    return after;
  };
  const auto first = train_once(), second = train_once();
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) EXPECT_TRUE(torch::equal(first[i], second[i])) << "parameter " << i;

  // The restored start is the start a session building its own model gets from the same seed.
  TrainingSession restored(setup), built(two_rank_setup(options, comm.get()));
  const auto a = restored.parameters(), b = built.parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
  EXPECT_FALSE(torch::equal(first[0], a[0])) << "the runs did not move the parameters";
}

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
// The floor the report uses: the least busy rank's (config_summary.hpp). The other rank's
// NCCL kernels may spin while it waits for its peer, which counts as busy: on the GPU machine
// 586.7 us against the peer's 85.7 in an eager 1 ms step, 316 us in a 133 us graph step.
double least_busy_over_ranks(const RankTimings& timings) {
  double mine = timings.gpu_busy_us.empty() ? 0.0 : static_cast<double>(timings.gpu_busy_us[0]);
  double least = 0;
  DDPSCALE_MPI_CHECK(MPI_Allreduce(&mine, &least, 1, MPI_DOUBLE, MPI_MIN, g_mpi->world().handle()));
  return least;
}

double median_step_us(const RankTimings& timings) {
  std::vector<float> steps = timings.phase_us[static_cast<size_t>(Phase::step)];
  std::sort(steps.begin(), steps.end());
  return steps.empty() ? 0.0 : static_cast<double>(steps[steps.size() / 2]);
}

// One 2-rank run of 20 measured steps and 10 profiled ones: the floor over the ranks and this
// rank's median step, printed so the GPU log shows them. Every rank reaches the collective
// in least_busy_over_ranks, whatever its own result.
struct BusyAndStep {
  double floor_us, step_us;
};
BusyAndStep profiled_run(TrainOptions options, Communicator* comm, const char* mode, const char* if_nothing_recorded) {
  options.phase_timing = true;
  options.steps = 20;
  options.gpu_busy_steps = 10;
  TrainingSession session(two_rank_setup(options, comm));
  RankTimings timings;
  std::vector<float> losses;
  session.run(timings, losses);
  EXPECT_EQ(timings.gpu_busy_us.size(), 1u) << if_nothing_recorded;
  const BusyAndStep result{least_busy_over_ranks(timings), median_step_us(timings)};
  std::printf("[ GPU busy ] %s, rank %d: %.1f us per step, floor %.1f us, median step %.1f us\n", mode, g_mpi->rank(),
              timings.gpu_busy_us.empty() ? 0.0 : static_cast<double>(timings.gpu_busy_us[0]), result.floor_us,
              result.step_us);
  return result;
}
#endif

#if defined(DDPSCALE_TEST_ON_GPU) && defined(DDPSCALE_CUDA_GRAPHS)
// --exec graph replays the same kernels, NCCL allreduces included, so after K steps with
// dropout off it must hold the parameters eager training holds: the 1e-5 (fp32)
// with SGD. Adam gets 1e-4: should cuBLAS pick another algorithm inside the capture, Adam
// turns float32 rounding into ~lr * 1e-2 (the argument of DdpEquivalence.AdamToo).
TEST(GraphMode, SameParametersAsEagerAfterKSteps) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  for (const char* optimizer : {"sgd", "adam"}) {
    auto options = deterministic_options(0.05, 0.01, true);
    options.optimizer = optimizer;
    if (options.optimizer == "adam") options.lr = 1e-3;
    TrainingSession eager(two_rank_setup(options, comm.get()));
    eager.train_steps(5);
    options.exec = "graph";
    TrainingSession graph(two_rank_setup(options, comm.get()));
    graph.train_steps(5);
    const auto a = graph.parameters(), b = eager.parameters();
    ASSERT_EQ(a.size(), b.size());
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i)
      worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>() / std::max(b[i].abs().max().item<double>(), 1e-12));
    EXPECT_LT(worst, options.optimizer == "adam" ? 1e-4 : 1e-5) << optimizer;
    TrainingSession untouched(two_rank_setup(options, comm.get()));
    EXPECT_GT((a[0] - untouched.parameters()[0]).abs().max().item<double>(), 1e-6) << optimizer;  // it trained
  }
}

// Dropout must draw new masks at every replay, not replay the captured ones. With the
// learning rate at 0 the parameters never move, so the loss changes only through dropout.
TEST(GraphMode, DropoutDiffersFromReplayToReplay) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  auto losses_of = [&](bool dropout) {
    auto options = deterministic_options(100, 100, true);
    options.optimizer = "sgd";
    options.lr = 0.0;
    options.dropout = dropout;
    options.exec = "graph";
    options.warmup = 2;
    options.steps = 4;
    TrainingSession session(two_rank_setup(options, comm.get()));
    RankTimings timings;
    std::vector<float> losses;
    session.run(timings, losses);
    return losses;
  };
  const auto without = losses_of(false);
  ASSERT_EQ(without.size(), 4u);
  for (float loss : without) EXPECT_EQ(loss, without.front());  // the control: nothing changes
  const auto with = losses_of(true);
  ASSERT_EQ(with.size(), 4u);
  EXPECT_NE(with[0], with[1]);
  EXPECT_NE(with[1], with[2]);
}

// The profiler must see the kernels inside a replayed graph too, or graph mode would have
// no floor to be compared with.
TEST(GraphMode, GpuBusyFloorIsMeasuredInsideTheGraph) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  auto options = deterministic_options(25, 1, true);
  options.optimizer = "adam";
  options.exec = "graph";
  const BusyAndStep run = profiled_run(options, comm.get(), "graph", "no kernel activity recorded during graph replays");
  EXPECT_GT(run.floor_us, 1.0);
  EXPECT_LE(run.floor_us, run.step_us * 1.05);  // the floor lies within the step
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

// PyTorch's fused Adam kernel against LibTorch's own Adam: the same algorithm, so after K
// steps on the same data the parameters agree up to float32 rounding of a different
// operation order (the same Adam amplification as in AdamToo, hence 1e-4).
TEST(FusedAdam, MatchesLibTorchAdam) {
  SKIP_WITHOUT_DEVICE();
  auto run_with = [&](const std::string& impl) {
    SessionSetup setup;
    setup.options = deterministic_options(25, 1, true);
    setup.options.optimizer = "adam";
    setup.options.optimizer_impl = impl;
    setup.options.lr = 1e-3;
    setup.device = test_device();
    TrainingSession session(setup);
    session.train_steps(5);
    return session.parameters();
  };
  const auto fused = run_with("fused");
  const auto reference = run_with("libtorch");
  ASSERT_EQ(fused.size(), reference.size());
  for (size_t i = 0; i < fused.size(); ++i) {
    const double diff = (fused[i] - reference[i]).abs().max().item<double>();
    EXPECT_LT(diff / reference[i].abs().max().item<double>(), 1e-4) << "parameter " << i;
  }
}
#endif

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
