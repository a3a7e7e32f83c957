// One check macro per library. A failed call is fatal for the whole job: the message
// names the call, the rank and the library's own explanation, then MPI_Abort takes
// every rank down so no peer is left waiting in a collective.
#pragma once
#include <string>

namespace ddpscale {

// Prints "[ddpscale rank R on HOST] FATAL: <what> failed: <why> (file:line)" and aborts the job.
[[noreturn]] void fatal_error(const std::string& what, const std::string& why, const char* file, int line);

// The calling process's rank in MPI_COMM_WORLD, or -1 before MPI_Init / after MPI_Finalize.
int world_rank_or_minus_one();

std::string mpi_error_string(int code);

}  // namespace ddpscale

#define DDPSCALE_MPI_CHECK(call)                                                        \
  do {                                                                                  \
    int ddpscale_rc_ = (call);                                                          \
    if (ddpscale_rc_ != 0 /* MPI_SUCCESS */)                                            \
      ::ddpscale::fatal_error(#call, ::ddpscale::mpi_error_string(ddpscale_rc_), __FILE__, __LINE__); \
  } while (0)
