// Why more ranks did not pay off (report_why_not): the phase of the N-rank step that grew
// most beyond ideal data parallelism, or an interval too wide to tell, by hand-set phase
// means in microseconds.
#include <gtest/gtest.h>

#include <map>

#include "report_why_not.hpp"

namespace ddpscale {
namespace {

ConfigSummary with_phases(int world, int64_t batch_per_rank, const std::map<Phase, double>& mean_us) {
  ConfigSummary c;
  c.params.world_size = world;
  c.params.batch_per_rank = batch_per_rank;
  for (const auto& [phase, us] : mean_us) c.phase_us[static_cast<size_t>(phase)].mean = us;
  return c;
}

ConfigSpeedup slower(double speedup) {
  ConfigSpeedup s;
  s.speedup = speedup;
  s.speedup_ci = {speedup - 0.02, speedup + 0.02};
  return s;
}

// Backward 14 ms on 1 rank and 50 ms on 2 (ranks sharing the host's cores) outgrows the
// 30 ms of exposed allreduce.
TEST(WhyNot, NamesThePhaseThatGrewMost) {
  const ConfigSummary one = with_phases(1, 8, {{Phase::forward, 5'000}, {Phase::backward, 14'000},
                                               {Phase::optimizer, 3'000}, {Phase::step, 22'000}});
  const ConfigSummary two = with_phases(2, 8, {{Phase::forward, 6'000}, {Phase::backward, 50'000},
                                               {Phase::allreduce_exposed, 30'000}, {Phase::optimizer, 3'000},
                                               {Phase::step, 127'000}});
  EXPECT_EQ(why_not_clause(one, two, slower(0.35)),
            "backward took 50.000 ms per step on 2 ranks against 14.000 ms on 1 for the same batch per rank "
            "(step 127.000 ms)");
}

// A CPU pair as measured: backward 14 ms on 1 rank and 36 ms on 2 (22 ms more), 30 ms of
// allreduce exposed after it: the allreduce costs most.
TEST(WhyNot, ExposedAllreduceWhenItIsTheLargestCost) {
  const ConfigSummary one = with_phases(1, 8, {{Phase::backward, 14'000}, {Phase::step, 60'000}});
  const ConfigSummary two = with_phases(2, 8, {{Phase::backward, 36'000}, {Phase::allreduce_exposed, 30'000},
                                               {Phase::step, 113'000}});
  EXPECT_EQ(why_not_clause(one, two, slower(0.95)),
            "the allreduce left exposed after backward took 30.000 of the 113.000 ms per step on 2 ranks");
}

// Strong scaling halves each rank's batch: backward should halve too, so 9 ms against 14 is
// 2 ms over ideal, while the exposed allreduce is 4 ms.
TEST(WhyNot, StrongScalingMeasuresEachPhaseAgainstTheSmallerBatch) {
  const ConfigSummary one = with_phases(1, 16, {{Phase::backward, 14'000}, {Phase::step, 20'000}});
  const ConfigSummary two = with_phases(2, 8, {{Phase::backward, 9'000}, {Phase::allreduce_exposed, 4'000},
                                               {Phase::step, 15'000}});
  EXPECT_EQ(why_not_clause(one, two, slower(0.67)),
            "the allreduce left exposed after backward took 4.000 of the 15.000 ms per step on 2 ranks");
}

TEST(WhyNot, FasterWithAWideIntervalSaysSo) {
  ConfigSpeedup s;
  s.speedup = 1.08;
  s.speedup_ci = {0.97, 1.19};
  EXPECT_EQ(why_not_clause(with_phases(1, 8, {}), with_phases(2, 8, {}), s),
            "faster, but its 95% interval reaches 0.970x, below 1: more runs would tell");
  // Over launches the interval is as wide as the launches disagree: more launches narrow it.
  s.launches = 3;
  EXPECT_EQ(why_not_clause(with_phases(1, 8, {}), with_phases(2, 8, {}), s),
            "faster, but its 95% interval reaches 0.970x, below 1: its launches disagree, and more launches "
            "would tell");
}

TEST(WhyNot, AGraphStepHasNoPhasesToName) {
  ConfigSummary two = with_phases(2, 8, {{Phase::step, 50'000}});
  two.params.exec = "graph";
  EXPECT_EQ(why_not_clause(with_phases(1, 8, {{Phase::step, 20'000}}), two, slower(0.8)), "");
}

}  // namespace
}  // namespace ddpscale
