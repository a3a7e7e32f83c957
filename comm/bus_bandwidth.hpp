// The ring allreduce's bus-bandwidth factor, written once (nccl-tests' doc/PERFORMANCE.md): each
// rank sends and receives 2(n-1)/n times the buffer, so busbw = algbw x 2(n-1)/n reads the same
// link speed at any rank count. commbench prints it; the predictor converts curves with it.
#pragma once

namespace ddpscale {

constexpr double allreduce_bus_factor(int ranks) { return ranks > 0 ? 2.0 * (ranks - 1) / ranks : 0.0; }

}  // namespace ddpscale
