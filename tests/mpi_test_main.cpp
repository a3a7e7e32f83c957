// main() for GoogleTest binaries that run under `mpirun -np 2`: MPI is initialised once
// for all tests; each rank runs every test. Exits 77 (CTest's skip code here) when every
// test skipped, e.g. GPU tests on a machine without GPUs.
#include "comm/check.hpp"
#include "comm/mpi_context.hpp"
#include "tests/mpi_test_env.hpp"

#include <gtest/gtest.h>

namespace ddpscale::testing {
MpiContext* g_mpi = nullptr;
}

int main(int argc, char** argv) {
  ddpscale::MpiContext mpi(&argc, &argv);
  ddpscale::testing::g_mpi = &mpi;
  ::testing::InitGoogleTest(&argc, argv);
  if (mpi.rank() != 0) {
    // One rank's output is enough when all agree; failures still print on every rank.
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new ddpscale::testing::FailurePrinter(mpi.rank()));
  }
  int result = RUN_ALL_TESTS();
  // Every rank must agree on the outcome, or mpirun's exit code would depend on timing.
  int any_failed = result != 0;
  DDPSCALE_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  // Skipped only where every rank skipped everything: on one GPU, rank 0 may run a test
  // that rank 1, without a GPU of its own, skips.
  const auto* unit = ::testing::UnitTest::GetInstance();
  int all_skipped = unit->test_to_run_count() > 0 && unit->skipped_test_count() == unit->test_to_run_count();
  DDPSCALE_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &all_skipped, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  if (!any_failed && all_skipped) return 77;
  return any_failed;
}
