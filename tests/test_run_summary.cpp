// The summary `ddpscale train` prints: the overlap line says how much of the allreduce ran
// while backward still did (issue: "the report of one run shows how much the overlap hid").
#include "trainer/study/run_summary.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace ddpscale {
namespace {

// Two ranks, three steps; the slowest rank's value per step is what the summary uses.
ConfigRecord two_rank_record(float allreduce_total_us, float allreduce_exposed_us) {
  ConfigRecord record;
  RunRecord run;
  run.samples_per_second = 1000;
  for (int r = 0; r < 2; ++r) {
    RankTimings t;
    t.rank = r;
    for (int p = 0; p < kPhaseCount; ++p) t.phase_us[static_cast<size_t>(p)] = {100, 100, 100};
    // Rank 1 is faster: the summary must take rank 0's (slowest) values.
    const float scale = r == 0 ? 1.0f : 0.5f;
    t.phase_us[static_cast<size_t>(Phase::allreduce_total)] = {allreduce_total_us * scale, allreduce_total_us * scale,
                                                               allreduce_total_us * scale};
    t.phase_us[static_cast<size_t>(Phase::allreduce_exposed)] = {allreduce_exposed_us * scale,
                                                                 allreduce_exposed_us * scale,
                                                                 allreduce_exposed_us * scale};
    run.ranks.push_back(t);
  }
  record.runs.push_back(run);
  return record;
}

std::string printed_summary(const ConfigRecord& record, const std::vector<int>& placement_shifts_mib = {}) {
  std::FILE* file = std::tmpfile();
  print_config_summary(file, record, placement_shifts_mib);
  std::rewind(file);
  std::string text;
  char buffer[512];
  while (std::fgets(buffer, sizeof(buffer), file)) text += buffer;
  std::fclose(file);
  return text;
}

TEST(RunSummary, SaysHowMuchOfTheAllreduceTheOverlapHid) {
  // 800 us of allreduce of which 200 came after backward: 600 hidden, 75%.
  const std::string text = printed_summary(two_rank_record(800, 200));
  EXPECT_NE(text.find("overlap hid 600.0 of 800.0 us of allreduce (75%); 200.0 us exposed after backward"),
            std::string::npos)
      << text;
}

TEST(RunSummary, NoOverlapLineWithoutCommunication) {
  // One rank (or --no-phase-timing) stores no allreduce time: there is nothing to hide.
  const std::string text = printed_summary(two_rank_record(0, 0));
  EXPECT_NE(text.find("throughput 1000.0 samples/s"), std::string::npos) << text;
  EXPECT_EQ(text.find("overlap hid"), std::string::npos) << text;
}

// Runs of --alternate-phase-timing: timed ones carry phases, untimed ones only throughput.
RunRecord alternating_run(int index, double samples_per_second, bool timed) {
  RunRecord run;
  run.index = index;
  run.samples_per_second = samples_per_second;
  RankTimings t;
  if (timed)
    for (int p = 0; p < kPhaseCount; ++p) t.phase_us[static_cast<size_t>(p)] = {50, 50};
  run.ranks.push_back(t);
  return run;
}

TEST(RunSummary, AlternatePhaseTimingPrintsTheCostBetweenTimedAndUntimedRuns) {
  // Timed 960 and 980 (median 970), untimed 1000 and 1000: 1 - 970/1000 = +3.00%.
  ConfigRecord record;
  record.runs = {alternating_run(0, 960, true), alternating_run(1, 1000, false), alternating_run(2, 1000, false),
                 alternating_run(3, 980, true)};
  const std::string text = printed_summary(record);
  EXPECT_NE(text.find("phase timing cost +3.00%: median 970.0 samples/s over 2 timed runs, 1000.0 over 2 untimed"),
            std::string::npos)
      << text;
  // Phases come from the timed runs only: 50 us, not the median of 50, 50, 0, 0.
  EXPECT_NE(text.find("forward                  50.0 us"), std::string::npos) << text;
}

TEST(RunSummary, UntimedRunLineSaysSoInsteadOfZeroPhases) {
  std::FILE* file = std::tmpfile();
  print_run_line(file, alternating_run(1, 1234.5, false));
  std::rewind(file);
  char buffer[256] = {};
  ASSERT_NE(std::fgets(buffer, sizeof(buffer), file), nullptr);
  std::fclose(file);
  EXPECT_EQ(std::string(buffer), "run   1        1234.5 samples/s  untimed (no phase timing)  loss 0.0000 -> 0.0000\n");
}

// --placement-shifts 0,20,40 over 6 runs: run k held shifts[k % 3] first. By hand: 0 MiB
// holds runs 0 and 3 (1000, 1010: median 1005.0), 20 MiB runs 1 and 4 (980, 990: 985.0),
// 40 MiB runs 2 and 5 (1020 and a failed run: 1020.0 from one run). Slowest behind fastest:
// 1 - 985/1020 = 3.43%.
TEST(RunSummary, PlacementShiftsPrintEachPlacementsMedianAndTheirSpread) {
  ConfigRecord record;
  record.runs = {alternating_run(0, 1000, false), alternating_run(1, 980, false), alternating_run(2, 1020, false),
                 alternating_run(3, 1010, false), alternating_run(4, 990, false), alternating_run(5, 5000, false)};
  record.runs[5].status = RunStatus::failed;
  const std::string text = printed_summary(record, {0, 20, 40});
  EXPECT_NE(text.find("by placement (MiB held first: median samples/s (runs)): 0 MiB 1005.0 (2), 20 MiB 985.0 (2), "
                      "40 MiB 1020.0 (1); slowest 3.43% behind fastest"),
            std::string::npos)
      << text;
  EXPECT_EQ(printed_summary(record, {0}).find("by placement"), std::string::npos) << "one placement: nothing to compare";
  EXPECT_EQ(printed_summary(record).find("by placement"), std::string::npos);
}

}  // namespace
}  // namespace ddpscale
