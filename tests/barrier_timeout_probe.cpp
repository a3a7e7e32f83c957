// For the barrier_timeout test: rank 1 reaches the barrier 5 s late, and with a 1 s
// --comm-timeout rank 0 must give up, say which wait failed and why, and take the job down
// (MPI_Abort) instead of waiting for it.
#include "comm/comm_timeout.hpp"
#include "comm/mpi_context.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

int main(int argc, char** argv) {
  ddpscale::MpiContext mpi(&argc, &argv);
  ddpscale::set_comm_timeout(std::chrono::seconds(1));
  if (mpi.rank() == 1) std::this_thread::sleep_for(std::chrono::seconds(5));
  mpi.world().barrier_within_comm_timeout("MPI barrier (test)");
  std::printf("rank %d passed the barrier: the time-out did not fire\n", mpi.rank());
  return 0;
}
