// The DDP engine on 2 ranks: numerical equivalence with single-rank training, parameter
// broadcast, the unused-parameter error, and phases that add up to the step. Built twice:
// on CPU with the MPI backend (label mpi), and with DDPSCALE_TEST_ON_GPU on 2 GPUs with
// NCCL (label gpu, skipped without GPUs).
// Over 500 lines on purpose: both binaries must compile exactly the same cases, and the
// equivalence cases share the setup helpers and the tolerance argued below.
#include "comm/check.hpp"
#include "comm/communicator.hpp"
#include "models/relu_dropout.hpp"
#include "tests/mpi_test_env.hpp"
#include "tests/temp_dir.hpp"
#include "tests/torchscript_fixtures.hpp"
#include "trainer/engine/gradient_reducer.hpp"
#include "trainer/engine/initial_model.hpp"
#include "trainer/engine/step_clock.hpp"
#include "trainer/engine/training_session.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <thread>
#ifdef DDPSCALE_TEST_ON_GPU
#include <c10/cuda/CUDACachingAllocator.h>
#include "devices/gpu_info.hpp"
#include "comm/nccl_communicator.hpp"
#endif

namespace ddpscale {
namespace {

using testing::g_mpi;

#ifdef DDPSCALE_TEST_ON_GPU
torch::Device test_device() { return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(g_mpi->local_rank())); }
std::unique_ptr<Communicator> make_test_comm() { return make_nccl_communicator(g_mpi->world(), g_mpi->local_rank()); }
#define SKIP_WITHOUT_DEVICE() \
  if (visible_gpu_count() < 2) GTEST_SKIP() << "needs 2 GPUs"
// For tests without collectives: each rank uses its own GPU, so on a 1-GPU machine rank 0
// runs the test and rank 1 skips it.
#define SKIP_WITHOUT_OWN_DEVICE() \
  if (visible_gpu_count() <= g_mpi->local_rank()) GTEST_SKIP() << "needs a GPU for this rank"
#else
torch::Device test_device() { return torch::kCPU; }
std::unique_ptr<Communicator> make_test_comm() { return make_mpi_communicator(g_mpi->world()); }
#define SKIP_WITHOUT_DEVICE() (void)0
#define SKIP_WITHOUT_OWN_DEVICE() (void)0
#endif

// The identities below (2 ranks x batch b == 1 rank x 2b; graph == eager; fused Adam ==
// LibTorch's Adam) are exact in real arithmetic, so they are checked in float64, where the
// only differences are rounding of sums taken in another order: each parameter's gradient
// is a sum over at most a few thousand products, so its relative error is below
// n * 2^-53 ~ 1e-12 (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 4.2),
// and a few steps keep the parameters within ~1e-12 of each other relative to their size.
// Adam's step lr * m / (sqrt(v) + eps) can amplify a gradient's absolute error by at most
// lr / eps = 1e5 (lr 1e-3, eps 1e-8) for a gradient near zero: 1e5 * 1e-18 absolute over
// parameters of size ~0.05 stays below 1e-11. 1e-10 is above all of these on any CPU or
// GPU, and a real error (a missing or double average, a stale bucket, a wrong scale) moves
// the parameters by lr-sized amounts, 1e-3 and more: seven orders of magnitude above it.
constexpr double kIdentityTolerance = 1e-10;

EngineOptions deterministic_options(double bucket_mb, double first_bucket_mb, bool overlap) {
  EngineOptions o;
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

// The same bucket layout in float64: the caps are in bytes, and each element takes twice
// as many, so the caps double too.
EngineOptions float64_options(double bucket_mb, double first_bucket_mb, bool overlap) {
  return deterministic_options(2 * bucket_mb, 2 * first_bucket_mb, overlap);
}

// This rank's part of a 2-rank session on the test device.
SessionSetup two_rank_setup(const EngineOptions& options, Communicator* comm,
                            torch::ScalarType precision = torch::kFloat) {
  SessionSetup setup;
  setup.options = options;
  setup.rank = g_mpi->rank();
  setup.world_size = 2;
  setup.comm = comm;
  setup.device = test_device();
  setup.precision = precision;
  return setup;
}

// How far two parameter lists are apart: the largest difference of each tensor relative to
// its size, and relative to how far training moved it from where it started.
struct Agreement {
  double vs_size = 0;
  double vs_movement = 0;
};

Agreement compare_parameters(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b,
                             const std::vector<torch::Tensor>& start) {
  EXPECT_EQ(a.size(), b.size());
  Agreement worst;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const auto diff = (a[i] - b[i]).abs().max().item<double>();  // all on the same device
    const auto size = b[i].abs().max().item<double>();
    const auto moved = (b[i] - start[i]).abs().max().item<double>();
    worst.vs_size = std::max(worst.vs_size, diff / std::max(size, 1e-12));
    worst.vs_movement = std::max(worst.vs_movement, diff / std::max(moved, 1e-12));
  }
  return worst;
}

std::vector<torch::Tensor> cloned(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> copies;
  for (const auto& t : tensors) copies.push_back(t.detach().clone());
  return copies;
}

// K steps on 2 ranks with batch b vs. K steps on one process with batch 2b on the same
// (concatenated) data: gradients averaged over ranks equal the gradient of the mean loss
// over the global batch, so the parameters must match. The caller skips without devices.
Agreement compare_with_single_rank(const EngineOptions& options, int steps, size_t min_buckets, size_t max_buckets,
                                   torch::ScalarType precision) {
  auto comm = make_test_comm();
  TrainingSession distributed(two_rank_setup(options, comm.get(), precision));
  EXPECT_GE(distributed.bucket_count(), min_buckets);
  EXPECT_LE(distributed.bucket_count(), max_buckets);
  distributed.train_steps(steps);

  SessionSetup one;
  one.options = options;
  one.options.batch = options.batch * 2;
  one.world_size = 1;
  one.device = test_device();
  one.precision = precision;
  TrainingSession untouched(one);
  const auto start = cloned(untouched.parameters());
  TrainingSession single(one);
  single.train_steps(steps);

  const auto a = distributed.parameters();
  const auto b = single.parameters();
  EXPECT_EQ(a.front().scalar_type(), precision);
  // The parameters really moved, so agreement is not trivially "nothing happened".
  EXPECT_GT((b[0] - start[0]).abs().max().item<double>(), 1e-6);
  const Agreement agreement = compare_parameters(a, b, start);
  std::printf("[ agreement ] %s, %s, allreduce %s, dtype %s: worst difference %.3g of the size, %.3g of the movement\n",
              options.model.c_str(), c10::toString(precision), options.allreduce_dtype.c_str(), options.dtype.c_str(),
              agreement.vs_size, agreement.vs_movement);
  return agreement;
}

// The identity in float64, to kIdentityTolerance of each parameter's size.
void expect_equivalent_to_single_rank(const EngineOptions& options, int steps, size_t min_buckets, size_t max_buckets) {
  SKIP_WITHOUT_DEVICE();  // marks the calling test skipped and returns
  const Agreement agreement = compare_with_single_rank(options, steps, min_buckets, max_buckets, torch::kDouble);
  EXPECT_LT(agreement.vs_size, kIdentityTolerance) << "bucket " << options.bucket_mb << " MiB, overlap " << options.overlap;
}

TEST(DdpEquivalence, OneBucketWithOverlap) { expect_equivalent_to_single_rank(float64_options(100, 100, true), 3, 1, 1); }
TEST(DdpEquivalence, OneBucketNoOverlap) { expect_equivalent_to_single_rank(float64_options(100, 100, false), 3, 1, 1); }
TEST(DdpEquivalence, ManyBucketsWithOverlap) { expect_equivalent_to_single_rank(float64_options(0.05, 0.01, true), 3, 4, 8); }
TEST(DdpEquivalence, ManyBucketsNoOverlap) { expect_equivalent_to_single_rank(float64_options(0.05, 0.01, false), 3, 4, 8); }
// 0.002 MiB = 2 KiB in float64: the 799x256 weight (1.6 MiB) is far bigger than a bucket.
// One bucket per parameter: mlp-medium has 8.
TEST(DdpEquivalence, ParameterBiggerThanBucket) {
  expect_equivalent_to_single_rank(float64_options(0.001, 0.001, true), 3, 8, 8);
}

// The recurrent and attention models reach the reducer with gradients of other shapes and
// origins (LSTM and GRU gate weights, embeddings, layer norms); each bucket gathers them
// into its buffer (gradients_stay_in_buckets false), which must give the 1-rank result too.
TEST(DdpEquivalence, RecurrentAndTransformerModels) {
  for (const char* model : {"lstm", "gru", "transformer"}) {
    SCOPED_TRACE(model);
    auto options = float64_options(0.25, 0.05, true);
    options.model = model;
    options.batch = 2;
    expect_equivalent_to_single_rank(options, 2, 2, 64);
  }
}

// A TorchScript model (torchscript:PATH) reaches the reducer through the same nn::Module
// parameters, shared with the jit module: the identity holds for it as for built-in models,
// with float logits [batch, classes] and with token ids and a label per sequence position.
// Each rank writes its own copy of the file (same seed, same bytes).
TEST(DdpEquivalence, TorchScriptModels) {
  SKIP_WITHOUT_DEVICE();  // before the fixtures are written: a 1-GPU machine skips at once
  TempDir dir;
  testing_fixtures::write_mlp(dir / "mlp.pt");
  testing_fixtures::write_token_model(dir / "tokens.pt", 50, 6, 5);
  auto options = float64_options(0.001, 0.0005, true);
  options.model = "torchscript:" + (dir / "mlp.pt");
  options.input_shape = "16";
  options.classes = 4;
  expect_equivalent_to_single_rank(options, 3, 2, 4);
  options.optimizer = "adam";
  options.lr = 1e-3;
  expect_equivalent_to_single_rank(options, 3, 2, 4);
  options.optimizer = "sgd";
  options.lr = 0.05;
  options.model = "torchscript:" + (dir / "tokens.pt");
  options.input_shape = "";
  options.input = "tokens:50:7";
  options.classes = 0;
  expect_equivalent_to_single_rank(options, 3, 1, 4);
}

// Buffers follow PyTorch DDP's default: rank 0's before each forward. The module's int64
// buffer `steps` starts at 0 on rank 0 and 100 on rank 1 and counts forwards: with the
// broadcast both ranks hold 3 after three steps (without it rank 1 would hold 103).
TEST(DdpBroadcast, TorchScriptBuffersFollowRankZeroBeforeEachForward) {
  SKIP_WITHOUT_DEVICE();
  TempDir dir;
  testing_fixtures::MlpFile file;
  file.step_counter = true;
  file.counter_start = 100 * g_mpi->rank();
  testing_fixtures::write_mlp(dir / "counter.pt", file);
  auto options = deterministic_options(25, 1, true);
  options.model = "torchscript:" + (dir / "counter.pt");
  options.input_shape = "16";
  auto comm = make_test_comm();
  TrainingSession session(two_rank_setup(options, comm.get()));
  session.train_steps(3);
  const auto buffers = session.model().buffers();
  ASSERT_EQ(buffers.size(), 1u);
  EXPECT_EQ(buffers[0].scalar_type(), torch::kLong);
  EXPECT_EQ(buffers[0].item<int64_t>(), 3) << "rank " << g_mpi->rank();
}

// Adam divides by sqrt(v), which turns a rounding difference in a near-zero gradient into
// an lr-sized step; in float64 that stays below kIdentityTolerance (its comment bounds it).
TEST(DdpEquivalence, AdamToo) {
  auto options = float64_options(0.05, 0.01, true);
  options.optimizer = "adam";
  options.lr = 1e-3;
  expect_equivalent_to_single_rank(options, 3, 4, 8);
}

// bf16 autocast, where precision is the subject: float32 parameters, but each matrix product
// rounds its output to bf16 (8 significant bits), and a product's sum taken in another order
// (a batch of 4 per rank, 8 on one process) can round to a neighbouring value. No bound on
// the parameters relative to their size or movement follows: a weight gradient sums per-sample
// terms that may cancel, and bf16 rounds the partial sums of 4 samples on each rank. What
// does follow: the 2-rank run and the 1-rank run are both the exact (float32) 1-rank result
// plus bf16 rounding of the same operations on the same data, so the 2-rank run lies about as
// far from the exact result as the 1-rank bf16 run does: each distance is a maximum over
// many rounding errors of one distribution, so the two differ by well under a factor of 2.
// A real error moves the 2-rank run by a large part of the whole movement (a missing
// average: all of it; a doubled one: half), and bf16's distance is a small part of it.
TEST(DdpEquivalence, Bfloat16Autocast) {
  SKIP_WITHOUT_DEVICE();
  auto options = deterministic_options(0.05, 0.01, true);
  options.dtype = "bfloat16";
  auto comm = make_test_comm();
  TrainingSession distributed(two_rank_setup(options, comm.get()));
  distributed.train_steps(3);
  auto one_rank = [&](const std::string& dtype, int steps) {
    SessionSetup setup;
    setup.options = options;
    setup.options.batch = 2 * options.batch;
    setup.options.dtype = dtype;
    setup.device = test_device();
    auto session = std::make_unique<TrainingSession>(setup);
    session->train_steps(steps);
    return cloned(session->parameters());
  };
  const auto bf16 = one_rank("bfloat16", 3), exact = one_rank("float32", 3), start = one_rank("float32", 0);
  const Agreement ddp_to_exact = compare_parameters(distributed.parameters(), exact, start);
  const Agreement bf16_to_exact = compare_parameters(bf16, exact, start);
  std::printf("[ agreement ] bf16 autocast: 2 ranks %.3g, 1 rank %.3g from float32 (of the movement)\n",
              ddp_to_exact.vs_movement, bf16_to_exact.vs_movement);
  EXPECT_LT(ddp_to_exact.vs_movement, 2 * bf16_to_exact.vs_movement);
  // And bf16 is really in effect: float32 alone (2^-24) would leave the runs ~1e-7 apart.
  EXPECT_GT(bf16_to_exact.vs_size, 1e-5);
}

// --allreduce-dtype bfloat16: each rank's gradient g_r is rounded to bf16 (2^-9 relative,
// round to nearest), summed, and the sum rounded again (2^-9): the average differs from the
// exact one by at most 2^-8 (|g_0| + |g_1|) / 2 per element. SGD moves a parameter by lr times
// the sum of its averaged gradients, so while the two ranks' gradients share a sign and keep
// it for the 3 steps, the difference is at most 2^-8 of the movement; the 4x margin covers
// partial cancellation between ranks and steps. Tolerance: 2^-6 of the movement. The
// computation itself stays float32, whose 2^-24 is negligible beside it.
TEST(DdpEquivalence, Bfloat16Allreduce) {
  SKIP_WITHOUT_DEVICE();
  auto options = deterministic_options(0.05, 0.01, true);
  options.allreduce_dtype = "bfloat16";
  const Agreement agreement = compare_with_single_rank(options, 3, 4, 8, torch::kFloat);
  EXPECT_LT(agreement.vs_movement, 1.0 / 64);
  // And the gradients really travelled as bf16: with a float32 allreduce the same two ranks
  // end elsewhere, by more than float32's own rounding (2^-24 ~ 6e-8 of the size) could explain.
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
// first started, with a fresh optimizer and a reducer whose predecessor's autograd hooks do
// not fire, so the same seeds give the same parameters after the same steps.
TEST(DdpInitialModel, SecondRunRepeatsTheFirstExactly) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  EngineOptions options = deterministic_options(0.05, 0.01, true);
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
BusyAndStep profiled_run(EngineOptions options, Communicator* comm, const char* mode, const char* if_nothing_recorded) {
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

#if defined(DDPSCALE_TEST_ON_GPU) && defined(DDPSCALE_CUDA_GRAPHS)
// --exec graph replays the same kernels, NCCL allreduces included, so after K steps with
// dropout off it must hold the parameters eager training holds: an identity, checked in
// float64 to kIdentityTolerance (whose comment covers Adam's amplification too).
TEST(GraphMode, SameParametersAsEagerAfterKSteps) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  for (const char* optimizer : {"sgd", "adam"}) {
    auto options = float64_options(0.05, 0.01, true);
    options.optimizer = optimizer;
    if (options.optimizer == "adam") options.lr = 1e-3;
    TrainingSession untouched(two_rank_setup(options, comm.get(), torch::kDouble));
    const auto start = cloned(untouched.parameters());
    TrainingSession eager(two_rank_setup(options, comm.get(), torch::kDouble));
    eager.train_steps(5);
    options.exec = "graph";
    TrainingSession graph(two_rank_setup(options, comm.get(), torch::kDouble));
    graph.train_steps(5);
    const auto a = graph.parameters(), b = eager.parameters();
    EXPECT_EQ(a.front().scalar_type(), torch::kDouble);
    const Agreement agreement = compare_parameters(a, b, start);
    std::printf("[ agreement ] graph vs eager, %s: %.3g of the size\n", optimizer, agreement.vs_size);
    EXPECT_LT(agreement.vs_size, kIdentityTolerance) << optimizer;
    EXPECT_GT((a[0] - start[0]).abs().max().item<double>(), 1e-6) << optimizer;  // it trained
  }
}

// One rank, no reducer: the captured step takes autograd's gradient tensors from the graph's
// memory pool, as eager takes them from the allocator, and must give eager's parameters, in
// float64 to kIdentityTolerance. The recurrent models too: their zero initial state is made
// in the warm-up, outside the graph, and only read by it. Runs on a 1-GPU machine too.
TEST(GraphMode, OneRankSameParametersAsEager) {
  SKIP_WITHOUT_OWN_DEVICE();
  const std::vector<std::pair<std::string, std::string>> cases{
      {"mlp-medium", "sgd"}, {"mlp-medium", "adam"}, {"lstm", "adam"}, {"gru", "adam"}};
  for (const auto& [model, optimizer] : cases) {
    SCOPED_TRACE(model + " " + optimizer);
    auto one_rank = [&](const std::string& exec, int steps) {
      SessionSetup setup;
      setup.options = float64_options(25, 1, true);
      setup.options.model = model;
      setup.options.optimizer = optimizer;
      if (setup.options.optimizer == "adam") setup.options.lr = 1e-3;
      setup.options.exec = exec;
      setup.device = test_device();
      setup.precision = torch::kDouble;
      TrainingSession session(setup);
      session.train_steps(steps);
      return cloned(session.parameters());
    };
    const auto start = one_rank("eager", 0), eager = one_rank("eager", 5), graph = one_rank("graph", 5);
    const Agreement agreement = compare_parameters(graph, eager, start);
    std::printf("[ agreement ] graph vs eager on one rank, %s, %s: %.3g of the size\n", model.c_str(),
                optimizer.c_str(), agreement.vs_size);
    EXPECT_LT(agreement.vs_size, kIdentityTolerance);
    EXPECT_GT((graph[0] - start[0]).abs().max().item<double>(), 1e-6);  // it trained
  }
}

// Graph mode keeps the loss and the end of each block of kGraphBlockSteps replays and of the
// last replay. One rank, float64, dropout off, two blocks and a shorter third: the kept
// losses must be eager's at those steps (an identity), and the step times must tile the
// measured loop: each block's steps equal and positive, together no longer than its wall
// time. Runs on a 1-GPU machine too.
TEST(GraphMode, OneRankKeepsEachBlocksLossAndEnd) {
  SKIP_WITHOUT_OWN_DEVICE();
  const int steps = 2 * kGraphBlockSteps + 3;
  auto one_rank = [&](const std::string& exec, RankTimings& timings, int& loss_every) {
    SessionSetup setup;
    setup.options = float64_options(25, 1, true);
    setup.options.optimizer = "adam";
    setup.options.lr = 1e-3;
    setup.options.exec = exec;
    setup.options.warmup = 3;  // graph: 2 eager steps, the capture, 1 replay; eager: 3 steps
    setup.options.steps = steps;
    setup.options.phase_timing = true;
    setup.device = test_device();
    setup.precision = torch::kDouble;
    TrainingSession session(setup);
    std::vector<float> losses;
    session.run(timings, losses);
    loss_every = session.loss_every();
    return losses;
  };
  RankTimings eager_timings, graph_timings;
  int eager_every = 0, graph_every = 0;
  const auto eager = one_rank("eager", eager_timings, eager_every);
  const auto graph = one_rank("graph", graph_timings, graph_every);
  EXPECT_EQ(eager_every, 1);
  EXPECT_EQ(graph_every, kGraphBlockSteps);
  ASSERT_EQ(eager.size(), static_cast<size_t>(steps));
  const std::vector<int> block_ends = {kGraphBlockSteps - 1, 2 * kGraphBlockSteps - 1, steps - 1};
  ASSERT_EQ(graph.size(), block_ends.size());
  for (size_t b = 0; b < block_ends.size(); ++b) {
    const float want = eager[static_cast<size_t>(block_ends[b])];
    // float64 losses that agree to kIdentityTolerance round to floats at most 1 ulp apart.
    EXPECT_NEAR(graph[b], want, 2 * std::numeric_limits<float>::epsilon() * std::abs(want)) << "block " << b;
  }
  EXPECT_NE(graph[0], graph[1]) << "the control: Adam moves the loss";
  const auto& step_us = graph_timings.phase_us[static_cast<size_t>(Phase::step)];
  ASSERT_EQ(step_us.size(), static_cast<size_t>(steps));
  double sum_us = 0;
  for (int s = 0; s < steps; ++s) {
    const float block_mean = step_us[static_cast<size_t>(last_step_of_block(s, kGraphBlockSteps, steps))];
    EXPECT_GT(step_us[static_cast<size_t>(s)], 0.0f) << s;
    EXPECT_EQ(step_us[static_cast<size_t>(s)], block_mean) << s;
    sum_us += step_us[static_cast<size_t>(s)];
  }
  EXPECT_LE(sum_us, graph_timings.wall_seconds * 1e6);
}

// Dropout must draw new masks at every replay, not replay the captured ones. With the
// learning rate at 0 the parameters never move, so the loss changes only through dropout.
// Graph mode keeps the loss at each block's end: 4 blocks give 4 losses of 4 replays.
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
    options.steps = 4 * kGraphBlockSteps;
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

// A graph run of mlp-medium with Adam that profiles 10 replays and writes its kernel table
// under dir; the table's lines (header first) are what the two tests below read.
EngineOptions profiled_graph_options(const TempDir& dir) {
  auto options = deterministic_options(25, 1, true);
  options.optimizer = "adam";
  options.exec = "graph";
  options.steps = 5;
  options.gpu_busy_steps = 10;
  options.gpu_kernels = (dir.path() / "graph").string();
  return options;
}

std::vector<std::string> run_and_read_kernel_table(TrainingSession& session, const std::string& table_path) {
  RankTimings timings;
  std::vector<float> losses;
  session.run(timings, losses);
  EXPECT_EQ(timings.gpu_busy_us.size(), 1u) << "the profiler recorded nothing";
  std::ifstream table(table_path);
  EXPECT_TRUE(table.good()) << table_path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(table, line);) lines.push_back(line);
  return lines;
}

// One rank, graph: .grad is reset before the captured backward, so autograd hands its
// gradients over and the replayed step launches no gradient-accumulation add (12 of them in
// mlp-large's graph before, docs/benchmarks.md). mlp-medium has no other elementwise add:
// Linear adds its bias inside the GEMM and Adam's step count uses a foreach kernel, so any
// CUDAFunctor_add in the table would be an accumulation.
TEST(GraphMode, OneRankReplayLaunchesNoGradientAccumulation) {
  SKIP_WITHOUT_OWN_DEVICE();
  TempDir dir;
  SessionSetup setup;
  setup.options = profiled_graph_options(dir);
  setup.device = test_device();
  TrainingSession session(setup);
  const auto lines = run_and_read_kernel_table(session, kernel_table_path(setup.options.gpu_kernels, 0));
  for (const auto& line : lines) EXPECT_EQ(line.find("CUDAFunctor_add"), std::string::npos) << line.substr(0, 160);
  EXPECT_GT(lines.size(), 5u);  // header + GEMMs, ReLUs, loss, Adam: the table is not empty
}

// One rank, graph, dropout on: each of mlp-medium's 3 hidden layers takes one ReLU + dropout
// kernel forward and one backward (models/relu_dropout.hpp), so neither ReLU's clamp nor
// dropout's own kernels, forward or backward, are in the replayed step.
TEST(GraphMode, MlpLaunchesOneKernelEachWayPerReluAndDropout) {
  SKIP_WITHOUT_OWN_DEVICE();
  TempDir dir;
  SessionSetup setup;
  setup.options = profiled_graph_options(dir);
  setup.options.dropout = true;
  setup.device = test_device();
  TrainingSession session(setup);
  const auto lines = run_and_read_kernel_table(session, kernel_table_path(setup.options.gpu_kernels, 0));
  // Calls per step of the kernel whose name contains `name`: the number after the quoted name.
  const auto calls_of = [&lines](const std::string& name) {
    for (const auto& line : lines) {
      const auto name_at = line.find(name);
      if (name_at == std::string::npos) continue;
      const auto calls = line.find("\",", name_at);
      if (calls == std::string::npos) return -2;
      return std::stoi(line.substr(calls + 2));
    }
    return 0;
  };
  for (const char* absent : {"masked_scale", "threshold_kernel", "clamp_scalar", "fused_dropout_kernel"})
    EXPECT_EQ(calls_of(absent), 0) << absent;
  EXPECT_EQ(calls_of("relu_dropout_forward_kernel"), 3);
  EXPECT_EQ(calls_of("relu_dropout_backward_kernel"), 3);
}

#ifdef DDPSCALE_TEST_ON_GPU
// --placement-shifts: a session holds exactly its shift of device memory besides what it
// allocates anyway, so the same session with 64 MiB held has 64 MiB more allocated. (Whether
// the shift moves the buffers is the allocator's business; what it costs is this.)
TEST(PlacementShift, SessionHoldsItsShiftOnTopOfItsOwnMemory) {
  SKIP_WITHOUT_OWN_DEVICE();
  const auto allocated_with_session = [](int shift_mib) {
    SessionSetup setup;
    setup.options = deterministic_options(25, 1, true);
    setup.options.placement_shift_mib = shift_mib;
    setup.device = test_device();
    TrainingSession session(setup);
    return c10::cuda::CUDACachingAllocator::getDeviceStats(setup.device.index()).allocated_bytes[0].current;
  };
  const int64_t without = allocated_with_session(0);
  const int64_t with = allocated_with_session(64);
  EXPECT_EQ(with - without, int64_t{64} << 20);
}
#endif

// --gpu-trace: the profiled replays' Kineto trace names every kernel launch once, with its
// launch shape. 10 profiled steps x 3 hidden layers = 30 ReLU + dropout forward kernels (the
// count the test above reads from the table, per step).
TEST(GraphMode, TraceHasEveryProfiledKernelWithItsLaunchShape) {
  SKIP_WITHOUT_OWN_DEVICE();
  TempDir dir;
  SessionSetup setup;
  setup.options = profiled_graph_options(dir);
  setup.options.dropout = true;
  setup.options.gpu_trace = (dir.path() / "trace").string();
  setup.device = test_device();
  TrainingSession session(setup);
  RankTimings timings;
  std::vector<float> losses;
  session.run(timings, losses);
  std::ifstream file(trace_path(setup.options.gpu_trace, 0));
  ASSERT_TRUE(file.good()) << trace_path(setup.options.gpu_trace, 0);
  const std::string trace((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const auto occurrences = [&trace](const std::string& what) {
    int n = 0;
    for (auto at = trace.find(what); at != std::string::npos; at = trace.find(what, at + what.size())) ++n;
    return n;
  };
  EXPECT_EQ(occurrences("relu_dropout_forward_kernel"), 30);
  EXPECT_GE(occurrences("\"grid\""), 30);
  EXPECT_GE(occurrences("\"registers per thread\""), 30);
}

// Two ranks, graph: the reducer gathers autograd's handed-over gradients into each bucket
// with one cat, inside the capture as in eager, so the replay launches no accumulation add
// and no bucket zero fill either (mlp-medium has no other elementwise add; see above).
TEST(GraphMode, ReplayWithReducerLaunchesNoGradientAccumulation) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  TempDir dir;
  const auto options = profiled_graph_options(dir);
  TrainingSession session(two_rank_setup(options, comm.get()));
  const auto lines = run_and_read_kernel_table(session, kernel_table_path(options.gpu_kernels, g_mpi->rank()));
  int cats = 0;
  for (const auto& line : lines) {
    EXPECT_EQ(line.find("CUDAFunctor_add"), std::string::npos) << line.substr(0, 160);
    if (line.find("CatArrayBatchedCopy") != std::string::npos) ++cats;
  }
  EXPECT_GT(cats, 0) << "the buckets were not gathered";
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
