#include "comm/comm_timeout.hpp"

#include <atomic>

namespace ddpscale {

// 120 s: long enough for the slowest first NCCL connection set-up on a cluster,
// short enough that a lost rank does not hold an allocation for hours.
static std::atomic<long> g_timeout_seconds{120};

std::chrono::seconds comm_timeout() { return std::chrono::seconds(g_timeout_seconds.load()); }
void set_comm_timeout(std::chrono::seconds timeout) { g_timeout_seconds.store(timeout.count()); }

}  // namespace ddpscale
