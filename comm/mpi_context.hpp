// The MPI side of a launch: init/finalize as one RAII object, who we are (rank, world
// size, rank within the node), and sub-groups. MPI is only the bootstrap and the CPU
// backend; gradient traffic on GPUs goes through NCCL (see nccl_communicator.hpp).
#pragma once
#include <mpi.h>

#include <memory>
#include <chrono>
#include <string>
#include <vector>

namespace ddpscale {

// How a bounded wait passes the time between tests of its request.
enum class WaitPolling {
  spin,   // yield only: ranks about to train together, where the wake-up latency is part of the next step
  sleep,  // sleep 200 us: a rank that may wait out another rank's run must leave it the core (CPU ranks share them)
};

// Waits for a non-blocking collective (MPI_Ibarrier, MPI_Ibcast, MPI_Igather, ...) to
// complete. If it has not within --comm-timeout (comm_timeout.hpp) of this call, prints
// "[ddpscale rank R on HOST] FATAL: <what> failed: no completion within --comm-timeout (T s):
// a peer rank is gone or stuck; the job is aborted" and takes every rank down (MPI_Abort):
// a stuck peer must not hold the job until the batch system's limit. The one bounded wait
// of the project; every timed collective goes through it.
void wait_within_comm_timeout(MPI_Request& request, const std::string& what, WaitPolling polling);
// The same wait without a bound, for a rank that is idle while others work, for as long as
// their work lasts (docs/reliability.md, "Bounded waits"). It sleeps between tests, 200 us
// at first, doubling up to `longest_pause`: a short wait (a peer's next step) is answered
// promptly, and over a long one (another rank's whole run) the idle rank wakes a hundred
// times a second instead of five thousand, so it takes no core and no timer interrupts from
// the run it waits out. A rank waiting out a whole launch of a study passes a longer pause.
void wait_without_bound(MPI_Request& request,
                        std::chrono::microseconds longest_pause = std::chrono::milliseconds(10));

// An owned MPI communicator (freed on destruction); MPI_COMM_WORLD is never freed.
class MpiGroup {
 public:
  MpiGroup(MPI_Comm comm, bool owned);
  ~MpiGroup();
  MpiGroup(const MpiGroup&) = delete;
  MpiGroup& operator=(const MpiGroup&) = delete;

  MPI_Comm handle() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  void barrier() const;
  // A barrier that gives up after --comm-timeout and takes the job down naming the cause:
  // for ranks that train together, where a wait that long means a peer is gone or stuck.
  // (The sweep's barriers, where a rank may legitimately wait out a whole configuration it
  // has no part in, bound only the ranks that did the work: study/sweep_runner.cpp.)
  void barrier_within_comm_timeout(const std::string& what, WaitPolling polling = WaitPolling::spin) const;
  // MPI_Bcast of `count` items from `root`, bounded the same way: every rank gives up after
  // --comm-timeout, so a root that never comes (or a peer that never takes part) ends the
  // job with a FATAL line naming `what` instead of holding it.
  void broadcast_within_comm_timeout(void* buffer, int count, MPI_Datatype type, int root, const std::string& what,
                                     WaitPolling polling = WaitPolling::spin) const;

  // Ranks that pass the same colour end up in one new group, ordered by their rank here.
  // A negative colour means "not a member": the result is nullptr for that rank.
  // Collective over this group.
  std::unique_ptr<MpiGroup> split(int color) const;

 private:
  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0;
  int size_ = 1;
};

// The lowest rank of `group` that failed and its message: how the ranks agree on one error
// to report (a usage error, a failed run). Collective over the group; every rank passes
// whether it failed and, if so, its message (kept to its first 1023 bytes). rank is -1 when
// no rank failed. The ranks come to it together (after the same checks, or the same run),
// so its waits are bounded by --comm-timeout (wait_within_comm_timeout), named by `what`.
struct FirstFailure {
  int rank = -1;
  std::string message;
};
FirstFailure first_failure(const MpiGroup& group, bool failed, const std::string& message,
                           const std::string& what = "agreeing on the first failing rank (first_failure)");

class MpiContext {
 public:
  MpiContext(int* argc, char*** argv);
  ~MpiContext();
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;

  const MpiGroup& world() const { return *world_; }
  int rank() const { return world_->rank(); }
  int size() const { return world_->size(); }
  // Rank among the processes on this host: picks the GPU.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  const std::string& hostname() const { return hostname_; }
  // Where local_rank came from: "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID" or "hostname".
  const std::string& local_rank_source() const { return local_rank_source_; }
  // Every rank's hostname, gathered once at start-up (index = world rank).
  const std::vector<std::string>& hostnames() const { return hostnames_; }
  // "Open MPI v4.1.4, ..." as the library reports it.
  std::string library_version() const;

 private:
  void discover_local_rank();

  std::unique_ptr<MpiGroup> world_;
  int local_rank_ = 0;
  int local_size_ = 1;
  std::string hostname_;
  std::string local_rank_source_;
  std::vector<std::string> hostnames_;
};

}  // namespace ddpscale
