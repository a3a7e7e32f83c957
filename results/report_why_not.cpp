#include "report_why_not.hpp"

#include <cmath>

#include "report_format.hpp"

namespace ddpscale {
namespace {

double mean_us(const ConfigSummary& c, Phase phase) { return c.phase_us[static_cast<size_t>(phase)].mean; }

// What the N-rank step spends in `phase` beyond ideal data parallelism: the 1-rank time
// scaled by the batch each rank now computes (the same under weak scaling, 1/N of it under
// strong); the optimizer updates every parameter on every rank whatever the batch, and one
// rank exposes no allreduce.
double excess_us(const ConfigSummary& one, const ConfigSummary& n, Phase phase) {
  const double batch_ratio =
      static_cast<double>(n.params.batch_per_rank) / static_cast<double>(one.params.batch_per_rank);
  switch (phase) {
    case Phase::allreduce_exposed: return mean_us(n, phase);
    case Phase::optimizer: return mean_us(n, phase) - mean_us(one, phase);
    default: return mean_us(n, phase) - batch_ratio * mean_us(one, phase);
  }
}

std::string ranks_of(const ConfigSummary& c) {
  return std::to_string(c.params.world_size) + (c.params.world_size == 1 ? " rank" : " ranks");
}

std::string cause_text(const ConfigSummary& one, const ConfigSummary& n, Phase phase) {
  const std::string step = fixed_ms(mean_us(n, Phase::step));
  if (phase == Phase::allreduce_exposed)
    return "the allreduce left exposed after backward took " + fixed_ms(mean_us(n, phase)) + " of the " + step +
           " ms per step on " + ranks_of(n);
  return std::string(phase_name(phase)) + " took " + fixed_ms(mean_us(n, phase)) + " ms per step on " + ranks_of(n) +
         " against " + fixed_ms(mean_us(one, phase)) + " ms on 1" +
         (one.params.batch_per_rank == n.params.batch_per_rank ? " for the same batch per rank" : "") +
         " (step " + step + " ms)";
}

}  // namespace

std::string why_not_clause(const ConfigSummary& one, const ConfigSummary& n, const ConfigSpeedup& speedup) {
  if (speedup.speedup > 1 && speedup.speedup_ci.valid() && speedup.speedup_ci.low <= 1)
    return "faster, but its 95% interval reaches " + format_number(speedup.speedup_ci.low, 3) + "x, below 1: " +
           (speedup.launches > 1 ? "its launches disagree, and more launches would tell"
                                 : "more runs would tell");
  if (n.params.exec == "graph" || one.params.batch_per_rank <= 0) return "";
  const Phase candidates[] = {Phase::allreduce_exposed, Phase::backward, Phase::forward, Phase::optimizer, Phase::data};
  Phase worst = Phase::step;
  double worst_us = 0;
  for (Phase phase : candidates) {
    const double excess = excess_us(one, n, phase);
    if (std::isfinite(excess) && excess > worst_us) worst = phase, worst_us = excess;
  }
  if (worst == Phase::step) return "";
  return cause_text(one, n, worst);
}

}  // namespace ddpscale
