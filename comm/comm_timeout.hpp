// How long a rank waits for a collective before declaring a peer lost (--comm-timeout).
#pragma once
#include <chrono>

namespace ddpscale {

std::chrono::seconds comm_timeout();
void set_comm_timeout(std::chrono::seconds timeout);

}  // namespace ddpscale
