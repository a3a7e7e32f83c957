// What the DDP engine's 2-rank tests share (test_ddp_mpi.cpp, test_ddp_engine.cpp,
// test_ddp_graph_mode.cpp, built together as test_ddp_mpi on CPU and test_ddp_gpu on GPUs):
// the test device and communicator, the deterministic engine options, the tolerance of the
// float64 identities, and the comparison of 2-rank training with one process.
#pragma once
#include "comm/check.hpp"
#include "comm/communicator.hpp"
#include "tests/mpi_test_env.hpp"
#include "trainer/engine/training_session.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>
#ifdef DDPSCALE_TEST_ON_GPU
#include "comm/nccl_communicator.hpp"
#include "devices/gpu_info.hpp"
#endif

namespace ddpscale::ddp_test {

using testing::g_mpi;

#ifdef DDPSCALE_TEST_ON_GPU
inline torch::Device test_device() {
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(g_mpi->local_rank()));
}
inline std::unique_ptr<Communicator> make_test_comm() {
  return make_nccl_communicator(g_mpi->world(), g_mpi->local_rank());
}
#define SKIP_WITHOUT_DEVICE() \
  if (visible_gpu_count() < 2) GTEST_SKIP() << "needs 2 GPUs"
// For tests without collectives: each rank uses its own GPU, so on a 1-GPU machine rank 0
// runs the test and rank 1 skips it.
#define SKIP_WITHOUT_OWN_DEVICE() \
  if (visible_gpu_count() <= g_mpi->local_rank()) GTEST_SKIP() << "needs a GPU for this rank"
#else
inline torch::Device test_device() { return torch::kCPU; }
inline std::unique_ptr<Communicator> make_test_comm() { return make_mpi_communicator(g_mpi->world()); }
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
inline constexpr double kIdentityTolerance = 1e-10;

inline EngineOptions deterministic_options(double bucket_mb, double first_bucket_mb, bool overlap) {
  EngineOptions o;
  o.model = "mlp-medium";
  o.dropout = false;   // dropout masks differ per rank by design; the equivalence needs none
  o.optimizer = "sgd";
  o.lr = 0.05;
  o.batch_per_rank = 4;
  o.bucket_mb = bucket_mb;
  o.first_bucket_mb = first_bucket_mb;
  o.overlap = overlap;
  o.phase_timing = false;
  return o;
}

// The same bucket layout in float64: the caps are in bytes, and each element takes twice
// as many, so the caps double too.
inline EngineOptions float64_options(double bucket_mb, double first_bucket_mb, bool overlap) {
  return deterministic_options(2 * bucket_mb, 2 * first_bucket_mb, overlap);
}

// This rank's part of a 2-rank session on the test device.
inline SessionSetup two_rank_setup(const EngineOptions& options, Communicator* comm,
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

inline Agreement compare_parameters(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b,
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

inline std::vector<torch::Tensor> cloned(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> copies;
  for (const auto& t : tensors) copies.push_back(t.detach().clone());
  return copies;
}

// K steps on 2 ranks with batch b vs. K steps on one process with batch 2b on the same
// (concatenated) data: gradients averaged over ranks equal the gradient of the mean loss
// over the global batch, so the parameters must match. The caller skips without devices.
inline Agreement compare_with_single_rank(const EngineOptions& options, int steps, size_t min_buckets,
                                          size_t max_buckets, torch::ScalarType precision) {
  auto comm = make_test_comm();
  TrainingSession distributed(two_rank_setup(options, comm.get(), precision));
  EXPECT_GE(distributed.bucket_count(), min_buckets);
  EXPECT_LE(distributed.bucket_count(), max_buckets);
  distributed.train_steps(steps);

  SessionSetup one;
  one.options = options;
  one.options.batch_per_rank = options.batch_per_rank * 2;
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
inline void expect_equivalent_to_single_rank(const EngineOptions& options, int steps, size_t min_buckets,
                                             size_t max_buckets) {
  SKIP_WITHOUT_DEVICE();  // marks the calling test skipped and returns
  const Agreement agreement = compare_with_single_rank(options, steps, min_buckets, max_buckets, torch::kDouble);
  EXPECT_LT(agreement.vs_size, kIdentityTolerance) << "bucket " << options.bucket_mb << " MiB, overlap " << options.overlap;
}

#ifdef DDPSCALE_TEST_ON_GPU
// The floor the report uses: the least busy rank's (config_summary.hpp). The other rank's
// NCCL kernels may spin while it waits for its peer, which counts as busy: on the GPU machine
// 586.7 us against the peer's 85.7 in an eager 1 ms step, 316 us in a 133 us graph step.
inline double least_busy_over_ranks(const RankTimings& timings) {
  double mine = timings.gpu_busy_us.empty() ? 0.0 : static_cast<double>(timings.gpu_busy_us[0]);
  double least = 0;
  DDPSCALE_MPI_CHECK(MPI_Allreduce(&mine, &least, 1, MPI_DOUBLE, MPI_MIN, g_mpi->world().handle()));
  return least;
}

inline double median_step_us(const RankTimings& timings) {
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
inline BusyAndStep profiled_run(EngineOptions options, Communicator* comm, const char* mode,
                                const char* if_nothing_recorded) {
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

}  // namespace ddpscale::ddp_test
