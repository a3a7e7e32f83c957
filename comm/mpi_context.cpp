#include "comm/mpi_context.hpp"

#include "comm/check.hpp"
#include "comm/comm_timeout.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace ddpscale {

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

int world_rank_or_minus_one() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return -1;
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

void fatal_error(const std::string& what, const std::string& why, const char* file, int line) {
  const int rank = world_rank_or_minus_one();
  // The host too: across nodes, "rank 3" alone does not say which machine to look at.
  char host[256] = "unknown host";
  gethostname(host, sizeof(host) - 1);
  std::fprintf(stderr, "[ddpscale rank %d on %s] FATAL: %s failed: %s (%s:%d)\n", rank, host, what.c_str(), why.c_str(),
               file, line);
  std::fflush(stderr);
  if (rank >= 0) MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

MpiGroup::MpiGroup(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  // Errors come back as codes so our checks can name the call; the default handler
  // would abort with a message that does not say which of our calls failed.
  DDPSCALE_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  DDPSCALE_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  DDPSCALE_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

MpiGroup::~MpiGroup() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owned_ && !finalized) MPI_Comm_free(&comm_);
}

void MpiGroup::barrier() const { DDPSCALE_MPI_CHECK(MPI_Barrier(comm_)); }

void wait_within_comm_timeout(MPI_Request& request, const std::string& what, WaitPolling polling) {
  const auto deadline = std::chrono::steady_clock::now() + comm_timeout();
  for (int spins = 1;; ++spins) {
    int done = 0;
    DDPSCALE_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return;
    // Spinning reads the clock every 1024 tests (a clock read costs more than a test);
    // sleeping every time, since the sleep dwarfs it.
    if (polling == WaitPolling::sleep || spins % 1024 == 0) {
      if (std::chrono::steady_clock::now() > deadline)
        fatal_error(what, "no completion within --comm-timeout (" + std::to_string(comm_timeout().count()) +
                              " s): a peer rank is gone or stuck; the job is aborted",
                    __FILE__, __LINE__);
      if (polling == WaitPolling::sleep)
        usleep(200);
      else
        std::this_thread::yield();
    }
  }
}

void wait_without_bound(MPI_Request& request, std::chrono::microseconds longest_pause) {
  std::chrono::microseconds pause = std::min(std::chrono::microseconds(200), longest_pause);
  for (;;) {
    int done = 0;
    DDPSCALE_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, longest_pause);
  }
}

void MpiGroup::barrier_within_comm_timeout(const std::string& what, WaitPolling polling) const {
  MPI_Request request = MPI_REQUEST_NULL;
  DDPSCALE_MPI_CHECK(MPI_Ibarrier(comm_, &request));
  wait_within_comm_timeout(request, what, polling);
}

void MpiGroup::broadcast_within_comm_timeout(void* buffer, int count, MPI_Datatype type, int root,
                                             const std::string& what, WaitPolling polling) const {
  MPI_Request request = MPI_REQUEST_NULL;
  DDPSCALE_MPI_CHECK(MPI_Ibcast(buffer, count, type, root, comm_, &request));
  wait_within_comm_timeout(request, what, polling);
}

std::unique_ptr<MpiGroup> MpiGroup::split(int color) const {
  MPI_Comm sub = MPI_COMM_NULL;
  DDPSCALE_MPI_CHECK(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, rank_, &sub));
  if (sub == MPI_COMM_NULL) return nullptr;
  return std::make_unique<MpiGroup>(sub, true);
}

MpiContext::MpiContext(int* argc, char*** argv) {
  int provided = 0;
  // FUNNELED: only the main thread calls MPI; the NVML sampler thread never does.
  DDPSCALE_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
  DDPSCALE_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  world_ = std::make_unique<MpiGroup>(MPI_COMM_WORLD, false);

  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  hostname_ = host;

  std::vector<char> all(static_cast<size_t>(size()) * sizeof(host), 0);
  DDPSCALE_MPI_CHECK(MPI_Allgather(host, sizeof(host), MPI_CHAR, all.data(), sizeof(host), MPI_CHAR, MPI_COMM_WORLD));
  for (int r = 0; r < size(); ++r) hostnames_.emplace_back(all.data() + static_cast<size_t>(r) * sizeof(host));
  discover_local_rank();
}

MpiContext::~MpiContext() {
  world_.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void MpiContext::discover_local_rank() {
  // The launcher knows best; the hostname count is the fallback for launchers that say nothing.
  const char* sources[][2] = {{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
                              {"SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
                              {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"}};
  int from_hosts_rank = 0, from_hosts_size = 0;
  for (int r = 0; r < size(); ++r) {
    if (hostnames_[static_cast<size_t>(r)] != hostname_) continue;
    if (r < rank()) ++from_hosts_rank;
    ++from_hosts_size;
  }
  local_rank_ = from_hosts_rank;
  local_size_ = from_hosts_size;
  local_rank_source_ = "hostname";
  for (const auto& source : sources) {
    const char* value = std::getenv(source[0]);
    if (value == nullptr) continue;
    local_rank_ = std::atoi(value);
    local_rank_source_ = source[0];
    break;
  }
}

std::string MpiContext::library_version() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  DDPSCALE_MPI_CHECK(MPI_Get_library_version(text, &length));
  std::string version(text, static_cast<size_t>(length));
  version.erase(std::find(version.begin(), version.end(), '\0'), version.end());
  const auto newline = version.find_first_of("\r\n");
  return newline == std::string::npos ? version : version.substr(0, newline);
}

FirstFailure first_failure(const MpiGroup& group, bool failed, const std::string& message, const std::string& what) {
  int first = failed ? group.rank() : group.size();
  MPI_Request request = MPI_REQUEST_NULL;
  DDPSCALE_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, group.handle(), &request));
  wait_within_comm_timeout(request, what, WaitPolling::spin);
  if (first == group.size()) return {};
  char text[1024] = {0};
  if (group.rank() == first) message.copy(text, sizeof(text) - 1);
  group.broadcast_within_comm_timeout(text, sizeof(text), MPI_CHAR, first, what);
  return {first, text};
}

}  // namespace ddpscale
