// Collectives of the MPI backend on 2 ranks: the CPU path every GPU-less CI run exercises.
#include "comm/commbench.hpp"
#include "comm/communicator.hpp"
#include "comm/half_precision.hpp"
#include "comm/mpi_context.hpp"
#include "tests/mpi_test_env.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

namespace ddpscale {
namespace {

using testing::g_mpi;

class MpiBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(g_mpi->size(), 2) << "run under mpirun -np 2";
    comm = make_mpi_communicator(g_mpi->world());
  }
  std::unique_ptr<Communicator> comm;
};

// Rank r contributes value(i) * (r + 1): the sum is 3 * value(i), the average 1.5 * value(i).
template <typename T>
std::vector<T> contribution(size_t count, int rank) {
  std::vector<T> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<T>((static_cast<int64_t>(i % 97) + 1) * (rank + 1));
  return v;
}

TEST_F(MpiBackend, AllreduceSumFloat32OddSize) {
  const size_t count = 1000003;  // odd and prime: no size happens to line up with chunks
  auto data = contribution<float>(count, comm->rank());
  comm->allreduce(data.data(), count, DType::f32, ReduceOp::sum);
  for (size_t i = 0; i < count; i += 997) ASSERT_FLOAT_EQ(data[i], 3.0f * static_cast<float>(i % 97 + 1)) << i;
  EXPECT_FLOAT_EQ(data[count - 1], 3.0f * static_cast<float>((count - 1) % 97 + 1));
}

TEST_F(MpiBackend, AllreduceAverageFloat64) {
  const size_t count = 7;
  auto data = contribution<double>(count, comm->rank());
  comm->allreduce(data.data(), count, DType::f64, ReduceOp::average);
  for (size_t i = 0; i < count; ++i) EXPECT_DOUBLE_EQ(data[i], 1.5 * static_cast<double>(i + 1));
}

TEST_F(MpiBackend, AllreduceSumInt64AndInt32) {
  auto big = contribution<int64_t>(13, comm->rank());
  comm->allreduce(big.data(), big.size(), DType::i64, ReduceOp::sum);
  for (size_t i = 0; i < big.size(); ++i) EXPECT_EQ(big[i], 3 * static_cast<int64_t>(i + 1));
  auto small = contribution<int32_t>(1, comm->rank());
  comm->allreduce(small.data(), 1, DType::i32, ReduceOp::sum);
  EXPECT_EQ(small[0], 3);
}

TEST_F(MpiBackend, AllreduceBfloat16AndFloat16) {
  // 1.5 and 3.0 times small integers are exact in both 16-bit formats.
  std::vector<uint16_t> bf(5), h(5);
  for (size_t i = 0; i < 5; ++i) {
    bf[i] = float_to_bf16(static_cast<float>((i + 1) * (comm->rank() + 1)));
    h[i] = float_to_f16(static_cast<float>((i + 1) * (comm->rank() + 1)));
  }
  comm->allreduce(bf.data(), bf.size(), DType::bf16, ReduceOp::sum);
  comm->allreduce(h.data(), h.size(), DType::f16, ReduceOp::average);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(bf16_to_float(bf[i]), 3.0f * static_cast<float>(i + 1));
    EXPECT_EQ(f16_to_float(h[i]), 1.5f * static_cast<float>(i + 1));
  }
}

TEST_F(MpiBackend, AsyncAllreducesCompleteInAnyWaitOrder) {
  auto a = contribution<float>(333, comm->rank());
  auto b = contribution<float>(17, comm->rank());
  auto work_a = comm->allreduce_async(a.data(), a.size(), DType::f32, ReduceOp::sum);
  auto work_b = comm->allreduce_async(b.data(), b.size(), DType::f32, ReduceOp::average);
  work_b->wait();
  work_a->wait();
  EXPECT_FLOAT_EQ(a[5], 18.0f);
  EXPECT_FLOAT_EQ(b[5], 9.0f);
}

TEST_F(MpiBackend, BroadcastFromEitherRoot) {
  for (int root = 0; root < 2; ++root) {
    std::vector<double> data(11, comm->rank() == root ? 2.5 + root : -1.0);
    comm->broadcast(data.data(), data.size(), DType::f64, root);
    for (double v : data) EXPECT_DOUBLE_EQ(v, 2.5 + root);
  }
}

TEST_F(MpiBackend, SplitMakesSingletonAndPairGroups) {
  // Colour by rank: two groups of one, as the sweep does for world-size-1 configurations.
  auto alone = g_mpi->world().split(g_mpi->rank());
  ASSERT_NE(alone, nullptr);
  EXPECT_EQ(alone->size(), 1);
  EXPECT_EQ(alone->rank(), 0);
  // Only rank 0 joins: rank 1 gets no group.
  auto only_zero = g_mpi->world().split(g_mpi->rank() == 0 ? 0 : -1);
  EXPECT_EQ(only_zero == nullptr, g_mpi->rank() == 1);
  // Everyone in one group: same order as the world.
  auto pair = g_mpi->world().split(0);
  ASSERT_NE(pair, nullptr);
  EXPECT_EQ(pair->size(), 2);
  EXPECT_EQ(pair->rank(), g_mpi->rank());
  auto pair_comm = make_mpi_communicator(*pair);
  int value = pair->rank() + 10;
  pair_comm->allreduce(&value, 1, DType::i32, ReduceOp::sum);
  EXPECT_EQ(value, 21);
}

// The rank idle during a 1-rank configuration waits out the whole run in wait_without_bound:
// it must sleep longer as the wait goes on, not wake every 200 us. Each sleep is one voluntary
// context switch of the waiting thread (getrusage RUSAGE_THREAD, Linux), and MPI_Test never
// blocks: over a 1 s wait, pauses doubling from 200 us to 10 ms make about 105 switches, a
// fixed 200 us pause about 5000. The bound, 1000, keeps both far from the edge.
TEST_F(MpiBackend, AnIdleRankWakesRarelyOverALongWait) {
  const auto voluntary_switches = [] {
    rusage usage{};
    EXPECT_EQ(getrusage(RUSAGE_THREAD, &usage), 0);
    return usage.ru_nvcsw;
  };
  if (g_mpi->rank() == 0) std::this_thread::sleep_for(std::chrono::seconds(1));  // the run rank 1 waits out
  const auto before = voluntary_switches();
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(MPI_Ibarrier(g_mpi->world().handle(), &request), MPI_SUCCESS);
  wait_without_bound(request);
  if (g_mpi->rank() == 1) EXPECT_LT(voluntary_switches() - before, 1000) << "the idle rank woke too often";
}

TEST_F(MpiBackend, LocalRankAndHostnames) {
  EXPECT_EQ(g_mpi->hostnames().size(), 2u);
  EXPECT_GE(g_mpi->local_rank(), 0);
  EXPECT_LT(g_mpi->local_rank(), 2);
  EXPECT_FALSE(g_mpi->library_version().empty());
}

TEST_F(MpiBackend, CommbenchVerifiesEverySize) {
  CommBenchOptions options;
  options.min_bytes = 8;
  options.max_bytes = 1 << 20;
  options.factor = 8;
  options.iters = 3;
  options.warmup_iters = 1;
  const auto rows = run_commbench(*comm, g_mpi->world(), options);
  ASSERT_EQ(rows.size(), 6u);  // 8, 64, 512, 4 KiB, 32 KiB, 256 KiB (2 MiB > max)
  for (const auto& row : rows) {
    EXPECT_EQ(row.wrong, 0u) << row.bytes;
    EXPECT_GT(row.time_us, 0.0);
    EXPECT_DOUBLE_EQ(row.busbw_gbs, row.algbw_gbs);  // 2(n-1)/n = 1 for n = 2
  }
}

}  // namespace
}  // namespace ddpscale
