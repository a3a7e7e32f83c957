// The host-drift monitor as the report reads it (results/analysis/host_drift.hpp, report_drift.cpp) and
// the executive summary's answer (report_answer.cpp), on synthetic studies whose calibration
// readings and outcomes are set by hand: a study whose N-rank half ran on a host slowed by
// construction must be flagged, a steady one must not.
#include "results/analysis/host_drift.hpp"
#include "results/report/report_answer.hpp"
#include "tests/report_test_helpers.hpp"
#include "tests/temp_dir.hpp"

using namespace ddpscale;
using namespace ddpscale::report_test;

namespace {

// Every run of c: host calibration `host_us` on rank 0 (rank r adds r: the report reads rank
// 0's, so the others must not move it), device `device_us` where given; runs start one
// second apart from start_ms.
void set_calibration(ConfigRecord& c, float host_us, int64_t start_ms, float device_us = std::nanf("")) {
  for (size_t k = 0; k < c.runs.size(); ++k) {
    c.runs[k].start_unix_ms = start_ms + 1000 * static_cast<int64_t>(k);
    for (RankTimings& t : c.runs[k].ranks) {
      t.calibration_host_us = {host_us + static_cast<float>(t.rank)};
      if (!std::isnan(device_us)) t.calibration_device_us = {device_us};
    }
  }
}

// mlp batch 8: the 2-rank half ran on a host 30% slower (1-rank runs first, then 2-rank runs
// at 650 us against 500); mlp batch 16: steady (500 and 505 us, 1% apart).
std::vector<ConfigRecord> drifting_study() {
  ConfigRecord one8 = make_config("mlp", 1000, 8, 1, kOneRank);
  ConfigRecord two8 = make_config("mlp", 1000, 8, 2, kTwoRanks);
  ConfigRecord one16 = make_config("mlp", 1000, 16, 1, kOneRank);
  ConfigRecord two16 = make_config("mlp", 1000, 16, 2, kTwoRanks);
  set_calibration(one8, 500, 1'700'000'000'000);
  set_calibration(two8, 650, 1'700'000'060'000);
  set_calibration(one16, 500, 1'700'000'120'000);
  set_calibration(two16, 505, 1'700'000'180'000);
  return {one8, two8, one16, two16};
}

}  // namespace

TEST(HostDrift, DriftIsSymmetric) {
  EXPECT_DOUBLE_EQ(drift_of(1.25), 0.25);
  EXPECT_DOUBLE_EQ(drift_of(0.8), 0.25);
  EXPECT_TRUE(std::isnan(drift_of(std::nan(""))));
}

TEST(HostDrift, FlagsOnlyTheComparisonWhoseHalvesRanAtDifferentSpeeds) {
  const StudyAnalysis a = analyze_study(drifting_study());
  const std::vector<DriftCheck> checks = drift_checks(a);
  ASSERT_EQ(checks.size(), 2u);
  for (const DriftCheck& check : checks) {
    const ConfigParams& p = a.configs[a.comparisons[check.comparison].n_gpu].params;
    EXPECT_DOUBLE_EQ(check.one_host_us, 500.0);  // one rank: no + r
    if (p.batch_per_rank == 8) {
      EXPECT_DOUBLE_EQ(check.n_host_us, 650.0);
      EXPECT_NEAR(check.host_ratio, 1.3, 1e-12);
      EXPECT_TRUE(check.drifted);
    } else {
      EXPECT_DOUBLE_EQ(check.n_host_us, 505.0);
      EXPECT_NEAR(check.host_ratio, 1.01, 1e-12);
      EXPECT_FALSE(check.drifted);
    }
    EXPECT_TRUE(std::isnan(check.device_ratio));
  }
}

// The device-launch reading is shown, not judged (DriftCheck::drifted says why): a 25%
// difference there alone raises no flag, and rank 1's slower host reading is not rank 0's.
TEST(HostDrift, DeviceLaunchDifferenceAloneIsShownNotFlagged) {
  std::vector<ConfigRecord> configs = drifting_study();
  configs.resize(2);
  set_calibration(configs[0], 500, 1'700'000'000'000, 100);
  set_calibration(configs[1], 500, 1'700'000'060'000, 80);
  for (RunRecord& run : configs[1].runs) run.ranks[1].calibration_host_us = {900.0f};
  const std::vector<DriftCheck> checks = drift_checks(analyze_study(configs));
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_NEAR(checks[0].device_ratio, 0.8, 1e-12);
  EXPECT_DOUBLE_EQ(checks[0].host_ratio, 1.0);
  EXPECT_FALSE(checks[0].drifted);
}

TEST(HostDrift, NoReadingsNoChecks) {
  const StudyAnalysis a = analyze_study({make_config("mlp", 1000, 8, 1, kOneRank), make_config("mlp", 1000, 8, 2, kTwoRanks)});
  EXPECT_TRUE(drift_checks(a).empty());
}

TEST(HostDrift, TimelineIsInStartOrderInMinutesWithRankZero) {
  const std::vector<ConfigRecord> configs = drifting_study();
  const std::vector<CalibrationPoint> points = calibration_timeline(configs);
  ASSERT_EQ(points.size(), 20u);  // 4 configurations x 5 runs
  EXPECT_DOUBLE_EQ(points.front().minutes, 0.0);
  EXPECT_DOUBLE_EQ(points.front().host_us, 500.0);
  EXPECT_EQ(points[5].world_size, 2);
  EXPECT_DOUBLE_EQ(points[5].minutes, 1.0);  // 60 s after the first run
  EXPECT_DOUBLE_EQ(points[5].host_us, 650.0);
  EXPECT_DOUBLE_EQ(points.back().minutes, 3.0 + 4.0 / 60.0);
  for (size_t i = 1; i < points.size(); ++i) EXPECT_LE(points[i - 1].minutes, points[i].minutes);
}

TEST(ReportFiles, HostDriftSectionFlagsTheDriftedComparison) {
  TempDir out;
  const LoadedStudy study = in_memory_study(drifting_study());
  const std::string md = markdown_report(study, analyze_study(study.configs), out.path());
  EXPECT_TRUE(contains(md, "## 5. Host drift")) << md;
  EXPECT_TRUE(contains(md, "Host calibration over the study's 20 runs: median 502.5 us, from 500.0 to 650.0 us (slowest / fastest 1.30x)")) << md;
  EXPECT_TRUE(contains(md, "1 of 2 comparisons ran their halves at host calibration speeds within 10.0% of each other; "
                           "flagged (treat their speedups as measured on two different hosts): mlp batch 8."))
      << md;
  EXPECT_TRUE(contains(md, "| 500.0 → 650.0 | 30.0% slower |")) << md;
  EXPECT_TRUE(contains(md, "| 500.0 → 505.0 | 1.00% slower |")) << md;
  EXPECT_EQ(count_of(md, "| drift |"), 1u) << md;
}

TEST(ReportFiles, SteadyStudyRaisesNoDriftFlag) {
  TempDir out;
  std::vector<ConfigRecord> configs = drifting_study();
  set_calibration(configs[1], 501, 1'700'000'060'000);
  const LoadedStudy study = in_memory_study(configs);
  const std::string md = markdown_report(study, analyze_study(study.configs), out.path());
  EXPECT_TRUE(contains(md, "2 of 2 comparisons ran their halves at host calibration speeds within 10.0% of each other."))
      << md;
  EXPECT_EQ(count_of(md, "| drift |"), 0u) << md;
  EXPECT_FALSE(contains(md, "flagged (treat")) << md;
}

TEST(ReportFiles, StudyWithoutCalibrationSaysSo) {
  TempDir out;
  const LoadedStudy study = in_memory_study({make_config("mlp", 1000, 8, 1, kOneRank), make_config("mlp", 1000, 8, 2, kTwoRanks)});
  const std::string md = markdown_report(study, analyze_study(study.configs), out.path());
  EXPECT_TRUE(contains(md, "No run in these inputs carries the host-drift calibration")) << md;
}

// A weak-scaling speedup above N with its halves' calibration beside it: the 2.5x on 2 ranks
// ran its 2-rank half on a host 30% slower by the calibration, and says so.
TEST(ReportFiles, SuperlinearCautionCarriesTheCalibrationOfBothHalves) {
  TempDir out;
  ConfigRecord one = make_config("mlp", 1000, 8, 1, {100, 101, 99});
  ConfigRecord two = make_config("mlp", 1000, 8, 2, {250, 251, 249});
  set_calibration(one, 650, 1'700'000'000'000);
  set_calibration(two, 500, 1'700'000'060'000);  // the 2-rank half ran faster
  const LoadedStudy study = in_memory_study({one, two});
  const std::string md = markdown_report(study, analyze_study(study.configs), out.path());
  EXPECT_TRUE(contains(md, "host calibration 1 → 2 ranks: 650.0 → 500.0 us (30.0% faster): **drift flagged**")) << md;
}

TEST(ReportFiles, DriftPlotIsDrawnWhereGnuplotIs) {
  if (!gnuplot_on_path()) GTEST_SKIP() << "gnuplot is not on PATH: the report writes no plots";
  TempDir out;
  const LoadedStudy study = in_memory_study(drifting_study());
  ReportOptions options;
  options.out_dir = out.path().string();
  write_report(study, analyze_study(study.configs), options);
  EXPECT_TRUE(fs::exists(out.path() / "plots" / "calibration_host.svg"));
  EXPECT_FALSE(fs::exists(out.path() / "plots" / "calibration_device.svg"));  // no device readings
  EXPECT_TRUE(fs::exists(out.path() / "plots" / "answer_speedup.svg"));
  EXPECT_TRUE(contains(read_text(out.path() / "report.md"), "plots/calibration_host.svg"));
}

// ---- The executive summary's answer ---------------------------------------------------

namespace {
ConfigRecord with_id(ConfigRecord c, const std::string& suffix) {
  c.id += suffix;
  return c;
}
}  // namespace

TEST(ScalingAnswer, EveryModelPaidOffAtEveryBatch) {
  const StudyAnalysis a = analyze_study({make_config("small", 1000, 8, 1, kOneRank), make_config("small", 1000, 8, 2, kTwoRanks),
                                         make_config("big", 2000000, 8, 1, kOneRank), make_config("big", 2000000, 8, 2, kTwoRanks)});
  EXPECT_EQ(scaling_answer(a, "weak"),
            "Under weak scaling (the batch per rank fixed), 2 ranks paid off (the speedup's whole 95% interval "
            "above 1) in 2 of 2 comparisons, at every batch size measured, for every model measured (1.00K to 2.00M parameters).");
  EXPECT_EQ(scaling_answer(a, "strong"), "");
}

TEST(ScalingAnswer, OneModelIsNamedByItsSizeNotARange) {
  const StudyAnalysis a = analyze_study({make_config("small", 1000, 8, 1, kOneRank), make_config("small", 1000, 8, 2, kTwoRanks)});
  EXPECT_EQ(scaling_answer(a, "weak"),
            "Under weak scaling (the batch per rank fixed), 2 ranks paid off (the speedup's whole 95% interval "
            "above 1) in 1 of 1 comparisons, at every batch size measured, for every model measured (1.00K parameters).");
}

TEST(ScalingAnswer, PaysOffFromASizeUp) {
  // small: 2 ranks slower (100 -> 60); big: faster.
  const std::vector<double> slower = {60, 61, 59, 60, 60};
  const StudyAnalysis a = analyze_study({make_config("small", 1000, 8, 1, kOneRank), make_config("small", 1000, 8, 2, slower),
                                         make_config("big", 2000000, 8, 1, kOneRank), make_config("big", 2000000, 8, 2, kTwoRanks)});
  EXPECT_EQ(scaling_answer(a, "weak"),
            "Under weak scaling (the batch per rank fixed), 2 ranks paid off (the speedup's whole 95% interval "
            "above 1) in 1 of 2 comparisons, from big (2.00M parameters) up, and for no smaller model measured.");
}

TEST(ScalingAnswer, NotBySizeAloneNamesBothEnds) {
  const std::vector<double> slower = {60, 61, 59, 60, 60};
  const StudyAnalysis a = analyze_study({make_config("small", 1000, 8, 1, kOneRank), make_config("small", 1000, 8, 2, kTwoRanks),
                                         make_config("big", 2000000, 8, 1, kOneRank), make_config("big", 2000000, 8, 2, slower)});
  EXPECT_EQ(scaling_answer(a, "weak"),
            "Under weak scaling (the batch per rank fixed), 2 ranks paid off (the speedup's whole 95% interval "
            "above 1) in 1 of 2 comparisons, for 1 of 2 models measured, not by size alone: the smallest that paid off is small "
            "(1.00K), the largest that did not big (2.00M).");
}

TEST(ScalingAnswer, NoneUnderStrongScaling) {
  const std::vector<double> slower = {60, 61, 59, 60, 60};
  ConfigRecord one = make_config("mlp", 1000, 16, 1, kOneRank, "strong");
  ConfigRecord two = make_config("mlp", 1000, 8, 2, slower, "strong");
  two.params.global_batch = 16;
  const StudyAnalysis a = analyze_study({one, with_id(two, "_split")});
  EXPECT_EQ(scaling_answer(a, "strong"),
            "Under strong scaling (one global batch split over the ranks), 2 ranks paid off (the speedup's whole 95% "
            "interval above 1) in 0 of 1 comparisons, for none of the models measured.");
}

TEST(ReportFiles, ExecutiveSummaryOpensWithTheAnswer) {
  TempDir out;
  const LoadedStudy study = in_memory_study({make_config("mlp", 1000, 8, 1, kOneRank), make_config("mlp", 1000, 8, 2, kTwoRanks)});
  const std::string md = markdown_report(study, analyze_study(study.configs), out.path());
  const size_t heading = md.find("## 1. Executive summary");
  const size_t answer = md.find("**The answer.** Under weak scaling");
  ASSERT_NE(answer, std::string::npos) << md;
  EXPECT_LT(heading, answer);
  EXPECT_LT(answer, md.find("- **mlp**")) << md;  // before the per-model bullets
}
