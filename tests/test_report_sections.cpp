// What the sections of report.md say about particular studies: graph-mode phases not split,
// the eager against CUDA graph table and its GPU-busy floor, superlinear weak scaling called
// out, the builds that measured a study, one successful run without an interval and failed
// runs counted and listed.
#include "tests/report_test_helpers.hpp"
#include "tests/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ddpscale {
namespace {

using namespace report_test;

// A step run as one CUDA graph is timed only as a whole: its phase cells say so instead of
// showing the zeros the trainer stores, and there is no overlap share to report.
TEST(ReportFiles, GraphModePhasesAreNotSplit) {
  TempDir out;
  ConfigRecord eager = make_config("mlp", 1000, 8, 2, {180, 190, 185});
  ConfigRecord graph = make_config("mlp", 1000, 8, 2, {380, 390, 385});
  graph.params.exec = "graph";
  graph.id = "mlp_b8_w2_weak_graph";
  const LoadedStudy study = in_memory_study({eager, graph});
  const std::string md = markdown_report(study, analyze_study(study.configs), out.path());
  std::string graph_row, eager_row;
  for (const std::string& line : split_lines(md)) {
    if (line.rfind("| 8 | 2 | weak scaling, exec graph", 0) == 0) graph_row = line;
    if (line.rfind("| 8 | 2 | weak scaling, overlap", 0) == 0) eager_row = line;
  }
  ASSERT_FALSE(graph_row.empty()) << md;
  ASSERT_FALSE(eager_row.empty()) << md;
  EXPECT_EQ(count_of(graph_row, "not split"), 6u) << graph_row;  // all but the step
  EXPECT_TRUE(contains(graph_row, "| n/a |")) << graph_row;        // no overlap share
  EXPECT_EQ(count_of(eager_row, "not split"), 0u) << eager_row;
}

// The configuration as run with --exec graph, every step time multiplied by step_scale.
ConfigRecord as_graph(ConfigRecord config, float step_scale) {
  config.params.exec = "graph";
  config.id += "_graph";
  for (RunRecord& run : config.runs)
    for (RankTimings& rank : run.ranks)
      for (float& us : rank.phase_us[static_cast<size_t>(Phase::step)]) us *= step_scale;
  return config;
}

// The eager/graph table pairs each graph configuration with its eager twin. Eager steps
// are 1000 + 10 s + 5 r us (median over ranks' slowest: 1020 us); the graph's are a quarter.
TEST(ReportFiles, EagerAgainstGraphComparesStepsAndThroughput) {
  TempDir out;
  const ConfigRecord eager = make_config("mlp", 1000, 8, 2, {100, 100, 100});
  const ConfigRecord graph = as_graph(make_config("mlp", 1000, 8, 2, {350, 350, 350}), 0.25f);
  const ConfigRecord unpaired = as_graph(make_config("mlp", 1000, 16, 2, {300, 300, 300}), 1.0f);
  const LoadedStudy study = in_memory_study({eager, graph, unpaired});
  const std::string md = markdown_report(study, analyze_study(study.configs), out.path());
  EXPECT_TRUE(contains(md, "### Eager against CUDA graph\n")) << md;
  EXPECT_TRUE(contains(md, "| mlp | 8 | 2 | 1.020 | 0.255 | 4.00x | 3.50x | n/a | n/a | n/a |")) << md;
  EXPECT_FALSE(contains(md, "| mlp | 16 | 2 | ")) << md;  // no eager twin, no row
}

// The kernel-time floor: GPU busy time (median over runs of the less busy rank, since a rank
// whose NCCL kernel waits for its peer looks busy; here only the graph was profiled, so its
// value is the floor),
// and each mode's step over it. Busy 150/200 us (ranks 0/1) in every run: floor 0.150 ms;
// eager 1020 us is 6.80x over it, the graph's 255 us 1.70x.
TEST(ReportFiles, EagerAgainstGraphShowsTheGpuBusyFloor) {
  TempDir out;
  const ConfigRecord eager = make_config("mlp", 1000, 8, 2, {100, 100, 100});
  ConfigRecord graph = as_graph(make_config("mlp", 1000, 8, 2, {350, 350, 350}), 0.25f);
  for (RunRecord& run : graph.runs)
    for (RankTimings& rank : run.ranks) rank.gpu_busy_us = {rank.rank == 0 ? 150.0f : 200.0f};
  const LoadedStudy study = in_memory_study({eager, graph});
  const StudyAnalysis analysis = analyze_study(study.configs);
  const std::string md = markdown_report(study, analysis, out.path());
  EXPECT_TRUE(contains(md, "| mlp | 8 | 2 | 1.020 | 0.255 | 4.00x | 3.50x | 0.150 | 6.80x | 1.70x |")) << md;
  for (const ConfigSummary& c : analysis.configs) {
    if (c.params.exec == "graph")
      EXPECT_DOUBLE_EQ(c.gpu_busy_us, 150.0);
    else
      EXPECT_TRUE(std::isnan(c.gpu_busy_us));  // eager: not profiled
  }
}

// Profiled in both modes, the smaller floor is the tighter one: waits inflate either. Eager
// 400/300 us and graph 170/250 us per rank: floors 300 and 170 us, the table uses 0.170 ms
// (eager 1020 us is 6.00x over it, the graph's 255 us 1.50x).
TEST(ReportFiles, EagerAgainstGraphUsesTheSmallerOfTwoFloors) {
  TempDir out;
  ConfigRecord eager = make_config("mlp", 1000, 8, 2, {100, 100, 100});
  ConfigRecord graph = as_graph(make_config("mlp", 1000, 8, 2, {350, 350, 350}), 0.25f);
  for (RunRecord& run : eager.runs)
    for (RankTimings& rank : run.ranks) rank.gpu_busy_us = {rank.rank == 0 ? 400.0f : 300.0f};
  for (RunRecord& run : graph.runs)
    for (RankTimings& rank : run.ranks) rank.gpu_busy_us = {rank.rank == 0 ? 170.0f : 250.0f};
  const LoadedStudy study = in_memory_study({eager, graph});
  const std::string md = markdown_report(study, analyze_study(study.configs), out.path());
  EXPECT_TRUE(contains(md, "| 0.170 | 6.00x | 1.50x |")) << md;
}

TEST(ReportFiles, NoEagerAgainstGraphTableWithoutGraphRuns) {
  TempDir out;
  const LoadedStudy study = in_memory_study({make_config("mlp", 1000, 8, 1, {100, 101}),
                                             make_config("mlp", 1000, 8, 2, {180, 181})});
  EXPECT_FALSE(contains(markdown_report(study, analyze_study(study.configs), out.path()), "Eager against CUDA graph"));
}

// Weak scaling cannot beat N times one rank: a speedup whose whole interval lies above the
// rank count is called out (2.5x on 2 ranks), while one merely near 2x (1.98x, interval
// reaching above 2) and a strong-scaling one (2.5x, which caches can explain) are not.
TEST(ReportFiles, SuperlinearWeakScalingIsCalledOut) {
  TempDir out;
  ConfigRecord fast_one = make_config("mlp", 1000, 8, 1, {100, 101, 99});
  ConfigRecord fast_two = make_config("mlp", 1000, 8, 2, {250, 251, 249});
  ConfigRecord near_one = make_config("mlp", 1000, 16, 1, {100, 110, 90});
  ConfigRecord near_two = make_config("mlp", 1000, 16, 2, {198, 218, 178});
  ConfigRecord strong_one = make_config("mlp", 1000, 64, 1, {100, 101, 99}, "strong");
  ConfigRecord strong_two = make_config("mlp", 1000, 64, 2, {250, 251, 249}, "strong");
  strong_two.params.global_batch = 64;
  strong_two.params.batch_per_rank = 32;
  for (ConfigRecord* c : {&near_one, &near_two}) c->id += "_b16";
  for (ConfigRecord* c : {&strong_one, &strong_two}) c->id += "_strong";
  const LoadedStudy study = in_memory_study({fast_one, fast_two, near_one, near_two, strong_one, strong_two});
  const std::string md = markdown_report(study, analyze_study(study.configs), out.path());
  EXPECT_TRUE(contains(md, "**Caution:** 1 comparison is faster than linear under weak scaling")) << md;
  EXPECT_TRUE(contains(md, "- mlp at batch 8 per rank (weak scaling")) << md;
  EXPECT_FALSE(contains(md, "- mlp at batch 16 per rank")) << md;
  EXPECT_FALSE(contains(md, "- mlp at batch 32 per rank")) << md;
  EXPECT_FALSE(contains(md, "- mlp at batch 64 per rank")) << md;
}

// A study continued with --resume by another build says which build measured what.
TEST(ReportFiles, MethodologyNamesTheBuildsThatMeasuredTheStudy) {
  TempDir out;
  ConfigRecord first = make_config("mlp", 1000, 8, 1, {100, 101});
  first.git_commit = "4bcd4d2";
  first.finished_utc = "2026-11-23T01:30:00Z";
  ConfigRecord second = make_config("mlp", 1000, 8, 2, {180, 181});
  second.git_commit = "e5daaef";
  second.finished_utc = "2026-11-23T05:40:00Z";
  ConfigRecord third = make_config("mlp", 1000, 16, 2, {180, 181});
  third.id = "mlp_b16_w2";
  third.git_commit = "e5daaef";
  third.finished_utc = "2026-11-23T05:44:25Z";
  ConfigRecord old = make_config("mlp", 1000, 16, 1, {100, 101});
  old.id = "mlp_b16_w1";
  const LoadedStudy study = in_memory_study({third, old, second, first});
  const std::string md = markdown_report(study, analyze_study(study.configs), out.path());
  EXPECT_TRUE(contains(md, "Builds that measured the configurations: 4bcd4d2 (1 configuration, finished "
                           "2026-11-23T01:30:00Z); e5daaef (2 configurations, finished 2026-11-23T05:40:00Z to "
                           "2026-11-23T05:44:25Z); not recorded for 1 configuration"))
      << md;
}

TEST(ReportFiles, OneSuccessfulRunHasNoIntervalAndFailedRunsAreCountedAndListed) {
  TempDir out;
  ConfigRecord solo = make_config("mlp", 1000, 8, 1, {100});
  solo.id = "solo_b8_w1";
  add_failed_run(solo, "CUDA out of memory at batch 4096");
  add_failed_run(solo, "NCCL watchdog timeout after 1800 s");
  ConfigRecord pair = make_config("mlp", 1000, 8, 2, {180, 190, 185});
  pair.id = "pair_b8_w2";
  const LoadedStudy study = in_memory_study({solo, pair});
  const StudyAnalysis a = analyze_study(study.configs);

  const ConfigSummary& s = a.configs[index_of(a, solo.id)];
  EXPECT_EQ(s.runs_total, 3u);
  EXPECT_EQ(s.runs_ok, 1u);
  EXPECT_EQ(s.runs_failed, 2u);
  EXPECT_DOUBLE_EQ(s.success_rate, 1.0 / 3.0);
  EXPECT_EQ(s.failures, (std::vector<std::string>{"run 1: CUDA out of memory at batch 4096",
                                                  "run 2: NCCL watchdog timeout after 1800 s"}));

  ReportOptions options;
  options.out_dir = out.path().string();
  options.plots = false;
  const ReportResult result = write_report(study, a, options);
  EXPECT_EQ(result.plots_note, "plots were not asked for (--no-plots)");

  const Csv csv(read_text(out.path() / "summary.csv"));
  EXPECT_EQ(csv.cell(solo.id, "samples_per_s_n"), "1");
  EXPECT_EQ(csv.cell(solo.id, "samples_per_s_mean"), "100");
  for (const char* name : {"samples_per_s_sd", "samples_per_s_ci95_low", "samples_per_s_ci95_high", "step_us_ci95_low"})
    EXPECT_EQ(csv.cell(solo.id, name), "") << name;
  EXPECT_EQ(csv.cell(solo.id, "runs_total"), "3");
  EXPECT_EQ(csv.cell(solo.id, "runs_ok"), "1");
  EXPECT_EQ(csv.cell(solo.id, "runs_failed"), "2");
  EXPECT_DOUBLE_EQ(csv.number(solo.id, "success_rate"), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(csv.number(pair.id, "success_rate"), 1.0);
  // The comparison: a point speedup (185 / 100), but no interval or p from one run.
  EXPECT_DOUBLE_EQ(csv.number(pair.id, "speedup"), 1.85);
  EXPECT_EQ(csv.cell(pair.id, "speedup_ci95_low"), "");
  EXPECT_EQ(csv.cell(pair.id, "speedup_ci95_high"), "");
  EXPECT_EQ(csv.cell(pair.id, "welch_p"), "");
  EXPECT_EQ(csv.cell(pair.id, "paid_off"), "false");

  const std::string md = read_text(out.path() / "report.md");
  EXPECT_TRUE(contains(md, "| 100.0 (n=1, no CI) |")) << md;  // 1-rank samples/s in section 4
  EXPECT_TRUE(contains(md, "| 1.85x \\[n/a\\] |"));  // Markdown-escaped brackets
  EXPECT_TRUE(contains(md, "| 1/3 / 3/3 |"));  // runs ok (1 / N)
  EXPECT_FALSE(contains(md, "nan")) << "a NaN printed as a number";
  // Executive summary: 2 configurations, 6 runs, 2 failed, 4 of 6 ok.
  EXPECT_TRUE(contains(md, "2 configurations, 6 runs, 2 failed (66.7% success rate)"));
  // The methodology section (9th: on CPU ranks and without a price there are no NCCL-profile
  // and cost sections) lists each failure with its configuration (Markdown-escaped underscores).
  const size_t methodology = md.find("## 9. Methodology and reproducibility");
  ASSERT_NE(methodology, std::string::npos);
  const std::string methods = md.substr(methodology);
  EXPECT_TRUE(contains(methods, "Failed runs (excluded, counted): 2."));
  EXPECT_TRUE(contains(methods, "- solo\\_b8\\_w1: run 1: CUDA out of memory at batch 4096\n"));
  EXPECT_TRUE(contains(methods, "- solo\\_b8\\_w1: run 2: NCCL watchdog timeout after 1800 s\n"));

  const std::string json = read_text(out.path() / "summary.json");
  EXPECT_TRUE(contains(json, "\"run 1: CUDA out of memory at batch 4096\""));
  const std::string html = read_text(out.path() / "report.html");
  EXPECT_TRUE(contains(html, "solo_b8_w1: run 1: CUDA out of memory at batch 4096"));
  EXPECT_TRUE(contains(html, ">100.0 (n=1, no CI)<"));
}

}  // namespace
}  // namespace ddpscale
