#include "results/report/report_why_not.hpp"

#include "results/report/report_format.hpp"

#include <cctype>
#include <cmath>
#include <vector>

namespace ddpscale {
namespace {

double mean_us(const ConfigSummary& c, Phase phase) { return c.phase_us[static_cast<size_t>(phase)].mean; }

// What `phase` of the N-rank step would take under ideal data parallelism: the 1-rank time
// scaled by the batch each rank now computes (the same under weak scaling, 1/N of it under
// strong); the optimizer updates every parameter on every rank whatever the batch, and one
// rank exposes no allreduce.
double ideal_us(const ConfigSummary& one, const ConfigSummary& n, Phase phase) {
  const double batch_ratio =
      static_cast<double>(n.params.batch_per_rank) / static_cast<double>(one.params.batch_per_rank);
  switch (phase) {
    case Phase::allreduce_exposed: return 0;
    case Phase::optimizer: return mean_us(one, phase);
    default: return batch_ratio * mean_us(one, phase);
  }
}

// What the N-rank step spends in `phase` beyond ideal data parallelism.
double excess_us(const ConfigSummary& one, const ConfigSummary& n, Phase phase) {
  return mean_us(n, phase) - ideal_us(one, n, phase);
}

std::string ranks_of(const ConfigSummary& c) {
  return std::to_string(c.params.world_size) + (c.params.world_size == 1 ? " rank" : " ranks");
}

std::string allreduce_text(const ConfigSummary& n) {
  return "the allreduce left exposed after backward took " + fixed_ms(mean_us(n, Phase::allreduce_exposed)) +
         " of the " + fixed_ms(mean_us(n, Phase::step)) + " ms per step on " + ranks_of(n);
}

// A phase grew when it took at least a tenth more than ideal and a tenth of what all the
// compute phases grew together: smaller changes are within a CPU step's run-to-run noise and
// would crowd the clause with phases that did not cause the slowdown.
constexpr double kGrowthShare = 0.1;

struct Growth {
  std::vector<Phase> phases;  // those that grew, in step order
  double excess_us = 0;       // what they took beyond ideal, together
};

Growth compute_growth(const ConfigSummary& one, const ConfigSummary& n) {
  const Phase compute[] = {Phase::data, Phase::forward, Phase::backward, Phase::optimizer};
  double total = 0;
  for (Phase phase : compute)
    if (const double e = excess_us(one, n, phase); std::isfinite(e) && e > 0) total += e;
  Growth growth;
  for (Phase phase : compute) {
    const double e = excess_us(one, n, phase);
    if (!std::isfinite(e) || e <= 0) continue;
    if (e < kGrowthShare * ideal_us(one, n, phase) || e < kGrowthShare * total) continue;
    growth.phases.push_back(phase);
    growth.excess_us += e;
  }
  return growth;
}

std::string joined_with_and(const std::vector<std::string>& parts) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i)
    text += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return text;
}

std::string growth_text(const ConfigSummary& one, const ConfigSummary& n, const Growth& growth) {
  std::vector<std::string> names, on_n, on_one;
  for (Phase phase : growth.phases) {
    names.push_back(phase_name(phase));
    on_n.push_back(fixed_ms(mean_us(n, phase)));
    on_one.push_back(fixed_ms(mean_us(one, phase)));
  }
  return joined_with_and(names) + " took " + joined_with_and(on_n) + " ms per step on " + ranks_of(n) + " against " +
         joined_with_and(on_one) + " ms on 1" +
         (one.params.batch_per_rank == n.params.batch_per_rank ? " for the same batch per rank" : "") +
         " (step " + fixed_ms(mean_us(n, Phase::step)) + " ms)";
}

// How the ranks used the host's cores, where recorded: "2 ranks shared one CPU mask of 2
// cores, 1 thread each".
std::string cores_text(const CoreSharing& c) {
  const std::string ranks = std::to_string(c.ranks) + " ranks";
  const std::string threads = std::to_string(c.threads) + (c.threads == 1 ? " thread" : " threads");
  const std::string cores = std::to_string(c.mask_cores) + (c.mask_cores == 1 ? " core" : " cores");
  if (c.masks_overlap)
    return "the " + ranks + " ran " + threads + " on CPU masks sharing " + cores +
           (c.oversubscribed() ? ", more threads than cores (oversubscribed)" : "");
  return "the " + ranks + " ran " + threads + " on masks of their own (" + cores + " in all)" +
         (c.oversubscribed() ? ", more threads than cores (oversubscribed)" : "");
}

// On CPU the ranks of one host compete for its cores: compute that grows with the rank count
// is their sharing, unless each rank had cores of its own.
std::string cpu_cause(const ConfigSummary& n) {
  const CoreSharing& c = n.cores;
  if (c.known() && !c.masks_overlap && !c.oversubscribed())
    return "; not core sharing: " + cores_text(c) + ", so they competed for the host's memory bandwidth and caches";
  return "; core sharing: the ranks share the host's cores" + (c.known() ? " (" + cores_text(c) + ")" : std::string()) +
         ", so each computes more slowly than one rank alone";
}

}  // namespace

std::string core_sharing_sentence(const CoreSharing& cores) {
  if (!cores.known() || cores.ranks < 2) return "";
  std::string text = cores_text(cores);
  text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text + ".";
}

std::string why_not_clause(const ConfigSummary& one, const ConfigSummary& n, const ConfigSpeedup& speedup) {
  if (speedup.speedup > 1 && speedup.speedup_ci.valid() && speedup.speedup_ci.low <= 1)
    return "faster, but its 95% interval reaches " + format_number(speedup.speedup_ci.low, 3) + "x, below 1: " +
           (speedup.launches > 1 ? "its launches disagree, and more launches would tell"
                                 : "more runs would tell");
  if (n.params.exec == "graph" || one.params.batch_per_rank <= 0) return "";
  const double allreduce_us = excess_us(one, n, Phase::allreduce_exposed);
  const Growth growth = compute_growth(one, n);
  const bool allreduce_costs_more = std::isfinite(allreduce_us) && allreduce_us >= growth.excess_us;
  if (growth.phases.empty() || allreduce_costs_more)
    return std::isfinite(allreduce_us) && allreduce_us > 0 ? allreduce_text(n) : "";
  std::string clause = growth_text(one, n, growth);
  if (std::isfinite(allreduce_us) && allreduce_us > 0)
    clause += ", " + fixed_ms(growth.excess_us) + " ms more than ideal against the " + fixed_ms(allreduce_us) +
              " ms of allreduce left exposed";
  if (n.params.device == "cpu") clause += cpu_cause(n);
  return clause;
}

}  // namespace ddpscale
