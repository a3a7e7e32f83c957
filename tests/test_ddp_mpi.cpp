// The DDP engine on 2 ranks, trained against one process: numerical equivalence with
// single-rank training (bucket layouts, overlap, models, TorchScript, Adam, bfloat16), buffers
// and parameters broadcast from rank 0, and a configuration's runs repeating the first one.
// Built with test_ddp_engine.cpp and test_ddp_graph_mode.cpp into one binary, twice: on CPU
// with the MPI backend (test_ddp_mpi, label mpi), and with DDPSCALE_TEST_ON_GPU on 2 GPUs
// with NCCL (test_ddp_gpu, label gpu, skipped without GPUs). The shared setup and the
// tolerance of the identities are in ddp_test_helpers.hpp.
#include "comm/check.hpp"
#include "tests/ddp_test_helpers.hpp"
#include "tests/temp_dir.hpp"
#include "tests/torchscript_fixtures.hpp"
#include "trainer/engine/initial_model.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <torch/torch.h>

#include <cstdio>
#include <string>

namespace ddpscale {
namespace {

using namespace ddp_test;

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
    options.batch_per_rank = 2;
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
    setup.options.batch_per_rank = 2 * options.batch_per_rank;
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
  DDPSCALE_MPI_CHECK(MPI_Sendrecv(values, 2, MPI_DOUBLE, 1 - g_mpi->rank(), 0, other, 2, MPI_DOUBLE,
                                  1 - g_mpi->rank(), 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
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

}  // namespace
}  // namespace ddpscale
