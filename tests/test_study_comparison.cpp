// `ddpscale compare` below the command line (results/report/study_comparison.hpp): two studies
// written to disk with known per-run step times, compared configuration by configuration.
//
// Expected values are exact by construction (stated next to each check), or (the Welch
// p-value) computed once outside this code with scipy 1.10.1 (Debian python3-scipy).
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_format.hpp"
#include "results/report/study_comparison.hpp"
#include "results/store/run_store.hpp"
#include "results/store/text_io.hpp"
#include "tests/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

constexpr int kSteps = 4;
// Run k's step time is base * kJitter[k]: five runs with a known, small spread.
const std::vector<double> kJitter = {1.00, 1.02, 0.99, 1.01, 0.98};

// A configuration whose run k steps in step_us[k] microseconds on every rank at every step;
// its throughput is global batch / step time, as the trainer computes it from wall time.
ConfigRecord make_config(const std::string& model, int64_t batch, int world, const std::vector<double>& step_us,
                         const std::string& nccl_profile = "default") {
  ConfigRecord c;
  c.params.model = model;
  c.params.parameters = model == "mlp-large" ? 6885376 : 258432;
  c.params.batch_per_rank = batch;
  c.params.global_batch = batch * world;
  c.params.world_size = world;
  c.params.backend = world > 1 ? "mpi" : "none";
  c.params.nccl_profile = nccl_profile;
  c.params.warmup_steps = 2;
  c.params.measured_steps = kSteps;
  c.params.runs = static_cast<int>(step_us.size());
  c.id = model + "_b" + std::to_string(batch) + "_w" + std::to_string(world) + "_weak_" + nccl_profile;
  for (size_t k = 0; k < step_us.size(); ++k) {
    RunRecord run;
    run.index = static_cast<int>(k);
    run.seed = 42 + k;
    run.samples_per_second = static_cast<double>(c.params.global_batch) * 1e6 / step_us[k];
    for (int s = 0; s < kSteps; ++s) run.loss.push_back(2.0f);
    for (int r = 0; r < world; ++r) {
      RankTimings t;
      t.rank = r;
      for (int p = 0; p < kPhaseCount; ++p)
        for (int s = 0; s < kSteps; ++s)
          t.phase_us[static_cast<size_t>(p)].push_back(static_cast<float>(step_us[k] / (p == 6 ? 1 : 7)));
      t.wall_seconds = step_us[k] * kSteps / 1e6;
      run.ranks.push_back(t);
    }
    c.runs.push_back(run);
  }
  return c;
}

std::vector<double> jittered(double base_us, double scale = 1.0) {
  std::vector<double> times;
  for (double j : kJitter) times.push_back(base_us * j * scale);
  return times;
}

// The study of the tests: two models, each at 1 and 2 ranks; B's step times are A's times
// `scale` (0.5: B twice as fast).
std::vector<ConfigRecord> four_configs(double scale = 1.0) {
  return {make_config("mlp-medium", 32, 1, jittered(1000, scale)), make_config("mlp-medium", 32, 2, jittered(1500, scale)),
          make_config("mlp-large", 32, 1, jittered(4000, scale)), make_config("mlp-large", 32, 2, jittered(4400, scale))};
}

// study.h5 of each test study (sample_records.hpp has one too, but needs hdf5.h on the path).
StudyMetadata metadata() {
  StudyMetadata m;
  m.tool_version = "0.1.0";
  m.git_commit = "abc123";
  m.created_utc = "2026-11-22T00:00:00Z";
  m.hostnames = {"node-a"};
  return m;
}

std::string write_study_dir(const TempDir& root, const std::string& name, const std::vector<ConfigRecord>& configs) {
  const std::string dir = root / name;
  fs::create_directories(dir);
  write_study(dir, metadata());
  for (const ConfigRecord& c : configs) write_config(dir, c);
  return dir;
}

const ConfigComparison& find(const ComparisonResult& r, const std::string& id) {
  for (const ConfigComparison& c : r.configs)
    if (c.id_a == id) return c;
  throw std::runtime_error("no comparison of " + id);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const CompareError& e) {
    return e.what();
  }
  return "(no CompareError)";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(StudyComparison, IdenticalStudiesAgreeEverywhere) {
  TempDir root;
  const std::string a = write_study_dir(root, "a", four_configs());
  const std::string b = write_study_dir(root, "b", four_configs());
  const ComparisonResult r = compare_studies(a, b);
  ASSERT_EQ(r.configs.size(), 4u);
  EXPECT_TRUE(r.only_in_a.empty());
  EXPECT_TRUE(r.only_in_b.empty());
  for (const ConfigComparison& c : r.configs) {
    EXPECT_EQ(c.ratio, 1.0) << c.id_a;  // the same runs: the same mean
    EXPECT_TRUE(c.ratio_ci.contains(1.0)) << c.id_a;
    EXPECT_LT(c.ratio_ci.low, 1.0) << c.id_a;  // two resamples of the same runs differ
    EXPECT_EQ(c.p_value, 1.0) << c.id_a;       // t = 0
    EXPECT_FALSE(c.significant);
    EXPECT_EQ(c.throughput_a.n, 5u);
  }
  // Both 2-rank configurations have their twin in both studies, with identical speedups.
  EXPECT_EQ(r.speedups_compared, 2u);
  EXPECT_EQ(r.speedups_agree, 2u);
  const ConfigComparison& large = find(r, "mlp-large_b32_w2_weak_default");
  ASSERT_TRUE(large.speedup_a && large.speedup_b);
  EXPECT_EQ(large.agreement, SpeedupAgreement::agree);
  EXPECT_EQ(large.speedup_a->speedup_ci.low, large.speedup_b->speedup_ci.low);
  // The speedups are the report's: analyze_study on A gives the same numbers. Weak scaling,
  // 2 ranks: 2 x 4000 / 4400 = 1.8181... on every run's jitter alike.
  const StudyAnalysis report = analyze_study(load_studies({a}).configs);
  bool found = false;
  for (const Comparison& k : report.comparisons)
    if (report.configs[k.n_gpu].id == large.id_a) {
      found = true;
      EXPECT_EQ(k.speedup.speedup, large.speedup_a->speedup);
      EXPECT_EQ(k.speedup.speedup_ci.low, large.speedup_a->speedup_ci.low);
      EXPECT_EQ(k.speedup.speedup_ci.high, large.speedup_a->speedup_ci.high);
    }
  EXPECT_TRUE(found);
  EXPECT_NEAR(large.speedup_a->speedup, 2 * 4000.0 / 4400.0, 1e-12);
  // The median half-width of each study's speedup intervals, relative to the speedup: the
  // same studies give the same number on both sides, the median of the two configurations'.
  std::vector<double> widths;
  for (const ConfigComparison& c : r.configs)
    if (c.speedup_a) widths.push_back((c.speedup_a->speedup_ci.high - c.speedup_a->speedup_ci.low) / 2 / c.speedup_a->speedup);
  ASSERT_EQ(widths.size(), 2u);
  EXPECT_DOUBLE_EQ(r.median_relative_half_width_a, (widths[0] + widths[1]) / 2);
  EXPECT_DOUBLE_EQ(r.median_relative_half_width_b, r.median_relative_half_width_a);
  EXPECT_EQ(r.summary_line, "speedups agree on 2 of 2 configurations, with a median 95% half-width of " +
                                percent(r.median_relative_half_width_a) + " of the speedup in A and " +
                                percent(r.median_relative_half_width_b) +
                                " in B; throughput changed significantly on 0 of 4");
}

// Each run's rank-0 host calibration is 400 us in A; in B 400 (the same host), then 436 us
// (9%: below the drift threshold), then 460 us (15%: more). The medians are exact.
TEST(StudyComparison, SaysWhenTheTwoHostsRanAtDifferentSpeeds) {
  const auto calibrated = [](double host_us) {
    std::vector<ConfigRecord> configs = four_configs();
    for (ConfigRecord& c : configs)
      for (RunRecord& run : c.runs)
        for (RankTimings& rank : run.ranks) rank.calibration_host_us = {static_cast<float>(host_us)};
    return configs;
  };
  const std::string note = "the two hosts ran the fixed calibration loop at different speeds";
  TempDir root;
  const std::string a = write_study_dir(root, "a", calibrated(400));
  for (const auto& [host_us, noted] : {std::pair{400.0, false}, std::pair{436.0, false}, std::pair{460.0, true}}) {
    const std::string b = write_study_dir(root, "b" + std::to_string(static_cast<int>(host_us)), calibrated(host_us));
    const ComparisonResult r = compare_studies(a, b);
    EXPECT_EQ(r.host_calibration_us_a, 400.0);
    EXPECT_EQ(r.host_calibration_us_b, host_us);
    EXPECT_EQ(r.summary_line.find(note) != std::string::npos, noted) << host_us << ": " << r.summary_line;
  }
  EXPECT_NE(compare_studies(a, root / "b460").summary_line.find("(400 us in A, 460 us in B, median)"),
            std::string::npos);
  // Without calibrations (studies before it, or four_configs()) nothing is said.
  const ComparisonResult plain = compare_studies(write_study_dir(root, "p", four_configs()), a);
  EXPECT_TRUE(std::isnan(plain.host_calibration_us_a));
  EXPECT_EQ(plain.summary_line.find(note), std::string::npos);
}

// Halving every step time doubles every throughput exactly (scaling by 2 is exact in binary
// floating point), and with the same seed the bootstrap draws the same runs, so every
// resampled ratio, and so the interval, is exactly twice that of identical studies.
TEST(StudyComparison, HalvedStepTimesDoubleThroughputExactly) {
  TempDir root;
  const std::string a = write_study_dir(root, "a", four_configs());
  const ComparisonResult same = compare_studies(a, write_study_dir(root, "same", four_configs()));
  const ComparisonResult r = compare_studies(a, write_study_dir(root, "fast", four_configs(0.5)));
  ASSERT_EQ(r.configs.size(), 4u);
  for (size_t i = 0; i < r.configs.size(); ++i) {
    const ConfigComparison& c = r.configs[i];
    EXPECT_EQ(c.ratio, 2.0) << c.id_a;
    EXPECT_EQ(c.ratio_ci.low, 2 * same.configs[i].ratio_ci.low) << c.id_a;
    EXPECT_EQ(c.ratio_ci.high, 2 * same.configs[i].ratio_ci.high) << c.id_a;
    EXPECT_GT(c.ratio_ci.low, 1.5) << c.id_a;  // a 2% spread cannot reach 1
    EXPECT_LT(c.p_value, 1e-6) << c.id_a;
    EXPECT_TRUE(c.significant) << c.id_a;
  }
  EXPECT_EQ(r.significant.size(), 4u);
  // The speedup does not change when both halves get twice as fast: the same intervals.
  EXPECT_EQ(r.speedups_agree, 2u);
  for (const ConfigComparison& c : r.configs) {
    if (c.params.world_size == 1) continue;
    EXPECT_EQ(c.speedup_a->speedup_ci.low, c.speedup_b->speedup_ci.low);
    EXPECT_EQ(c.speedup_a->speedup_ci.high, c.speedup_b->speedup_ci.high);
  }
  EXPECT_TRUE(contains(r.summary_line,
                       " in B; throughput changed significantly on 4 of 4: mlp-medium_b32_w1_weak_default 2.00x ["))
      << r.summary_line;
}

// The acceptance case: one configuration 10% slower in B, the rest equal (B's runs
// in another order); exactly that one is flagged.
TEST(StudyComparison, FlagsExactlyTheConfigurationThatGotSlower) {
  TempDir root;
  std::vector<ConfigRecord> b_configs = four_configs();
  for (ConfigRecord& c : b_configs) std::reverse(c.runs.begin(), c.runs.end());
  b_configs[2] = make_config("mlp-large", 32, 1, jittered(4000, 1.1));
  const ComparisonResult r = compare_studies(write_study_dir(root, "a", four_configs()), write_study_dir(root, "b", b_configs));
  ASSERT_EQ(r.significant.size(), 1u);
  const ConfigComparison& slower = r.configs[r.significant.front()];
  EXPECT_EQ(slower.id_a, "mlp-large_b32_w1_weak_default");
  EXPECT_NEAR(slower.ratio, 1 / 1.1, 1e-12);  // every run takes 1.1x the time
  EXPECT_LT(slower.ratio_ci.high, 1.0);
  for (const ConfigComparison& c : r.configs)
    if (&c != &slower) {
      EXPECT_NEAR(c.ratio, 1.0, 1e-12) << c.id_a;  // the same runs summed in another order
      EXPECT_GT(c.p_value, 0.99) << c.id_a;
    }
  // mlp-large's 2-rank speedup over its (slower) 1-rank twin rises from 1.82 to 2.0 in B:
  // with a 2% spread the intervals part.
  const ConfigComparison& large = find(r, "mlp-large_b32_w2_weak_default");
  EXPECT_EQ(large.agreement, SpeedupAgreement::differ);
  EXPECT_NEAR(large.speedup_b->speedup / large.speedup_a->speedup, 1.1, 1e-3);
  EXPECT_EQ(r.speedups_agree, 1u);
  EXPECT_TRUE(contains(r.summary_line, "speedups agree on 1 of 2 configurations, with a median 95% half-width of "))
      << r.summary_line;
  EXPECT_TRUE(contains(r.summary_line, " in B; throughput changed significantly on 1 of 4: "
                                       "mlp-large_b32_w1_weak_default 0.909x ["))
      << r.summary_line;
}

TEST(StudyComparison, ListsConfigurationsOfOneStudyOnly) {
  TempDir root;
  std::vector<ConfigRecord> a_configs = four_configs();
  a_configs.push_back(make_config("mlp-medium", 64, 1, jittered(1800)));
  a_configs.push_back(make_config("mlp-medium", 64, 2, jittered(2600)));
  std::vector<ConfigRecord> b_configs = four_configs();
  b_configs.push_back(make_config("mlp-medium", 64, 2, jittered(2600)));  // its 1-rank twin only in A
  b_configs.push_back(make_config("mlp-medium", 128, 1, jittered(3000)));
  const ComparisonResult r = compare_studies(write_study_dir(root, "a", a_configs), write_study_dir(root, "b", b_configs));
  EXPECT_EQ(r.configs.size(), 5u);
  EXPECT_EQ(r.only_in_a, std::vector<std::string>{"mlp-medium_b64_w1_weak_default"});
  EXPECT_EQ(r.only_in_b, std::vector<std::string>{"mlp-medium_b128_w1_weak_default"});
  const ConfigComparison& b64 = find(r, "mlp-medium_b64_w2_weak_default");
  EXPECT_TRUE(b64.speedup_a.has_value());
  EXPECT_FALSE(b64.speedup_b.has_value());
  EXPECT_EQ(b64.agreement, SpeedupAgreement::not_compared);
  EXPECT_EQ(r.speedups_compared, 2u);  // b64's is not among them
  EXPECT_TRUE(contains(r.summary_line, "; 1 configuration(s) only in A, 1 only in B")) << r.summary_line;

  TempDir out;
  const std::vector<std::string> files = write_comparison(r, out.str());
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(fs::path(files[0]).filename(), "compare.md");
  const std::string md = read_whole_file(out / "compare.md");
  EXPECT_TRUE(contains(md, "only in A: mlp-medium\\_b64\\_w1\\_weak\\_default")) << md;
  EXPECT_TRUE(contains(md, "only in B: mlp-medium\\_b128\\_w1\\_weak\\_default"));
  EXPECT_TRUE(contains(md, "no 1-rank twin"));
  EXPECT_TRUE(contains(read_whole_file(out / "compare.html"), "only in A: mlp-medium_b64_w1_weak_default"));
  const std::string csv = read_whole_file(out / "compare.csv");
  // Header, 5 configurations in both, one of each study only; 27 columns on every line.
  size_t lines = 0;
  for (size_t pos = 0; (pos = csv.find('\n', pos)) != std::string::npos; ++pos) ++lines;
  EXPECT_EQ(lines, 8u);
  std::istringstream rows(csv);
  for (std::string line; std::getline(rows, line);) EXPECT_EQ(std::count(line.begin(), line.end(), ','), 26) << line;
  EXPECT_TRUE(contains(csv, "\nA,mlp-medium_b64_w1_weak_default,,"));
  EXPECT_TRUE(contains(csv, "\nB,,mlp-medium_b128_w1_weak_default,"));
  const std::string json = read_whole_file(out / "compare.json");
  EXPECT_TRUE(contains(json, "\"only_in_a\": [\n    \"mlp-medium_b64_w1_weak_default\"")) << json;
  EXPECT_TRUE(contains(json, "\"speedups_compared\": 2"));
}

// Welch's p-value of the throughput ratio against scipy on a tiny sample (outlier removal
// keeps every run here: the largest |modified Z| is 0.6745 * 35 / 15 = 1.57 in A).
TEST(StudyComparison, WelchPValueMatchesScipy) {
  const std::vector<double> a = {1000, 1040, 980, 1010};  // samples/s
  const std::vector<double> b = {1100, 1080, 1130};
  // Step times that give these throughputs at batch 32, 1 rank.
  const auto times = [](const std::vector<double>& throughputs) {
    std::vector<double> t;
    for (double x : throughputs) t.push_back(32 * 1e6 / x);
    return t;
  };
  TempDir root;
  const ComparisonResult r = compare_studies(write_study_dir(root, "a", {make_config("mlp-medium", 32, 1, times(a))}),
                                             write_study_dir(root, "b", {make_config("mlp-medium", 32, 1, times(b))}));
  ASSERT_EQ(r.configs.size(), 1u);
  const ConfigComparison& c = r.configs.front();
  // /usr/bin/python3 -c 'from scipy import stats; print(repr(stats.ttest_ind(
  //   [1100.0, 1080.0, 1130.0], [1000.0, 1040.0, 980.0, 1010.0], equal_var=False).pvalue))'
  //   -> 0.005691712302684717 (t = 4.9999999999999964)
  EXPECT_NEAR(c.p_value, 0.005691712302684717, 1e-12);
  EXPECT_NEAR(c.ratio, (3310.0 / 3) / (4030.0 / 4), 1e-12);  // 1103.33 / 1007.5
  EXPECT_TRUE(c.significant);
  EXPECT_EQ(c.agreement, SpeedupAgreement::not_compared);  // 1 rank: no speedup
  EXPECT_TRUE(contains(r.summary_line,
                       "no speedup to compare (no N-rank configuration with its 1-rank twin in both studies); "
                       "throughput changed significantly on 1 of 1: mlp-medium_b32_w1_weak_default 1.10x ["))
      << r.summary_line;
  EXPECT_TRUE(contains(r.summary_line, "], p = 0.0057")) << r.summary_line;
}

TEST(StudyComparison, IgnoringAFieldComparesTwoNcclProfiles) {
  TempDir root;
  const std::string a = write_study_dir(root, "a", {make_config("mlp-medium", 32, 2, jittered(1500), "default")});
  const std::string b = write_study_dir(root, "b", {make_config("mlp-medium", 32, 2, jittered(1500, 0.5), "tuned")});
  const std::string none = error_of([&] { compare_studies(a, b); });
  EXPECT_TRUE(contains(none, "no configuration in common")) << none;
  EXPECT_TRUE(contains(none, "--ignore nccl_profile")) << none;
  CompareOptions options;
  options.ignore_fields = {"nccl_profile"};
  const ComparisonResult r = compare_studies(a, b, options);
  ASSERT_EQ(r.configs.size(), 1u);
  EXPECT_EQ(r.configs[0].id_b, "mlp-medium_b32_w2_weak_tuned");
  EXPECT_EQ(r.configs[0].ratio, 2.0);
  options.ignore_fields = {"colour"};
  EXPECT_TRUE(contains(error_of([&] { compare_studies(a, b, options); }), "cannot leave 'colour' out of the match"));
}

TEST(StudyComparison, ErrorsSayWhatToPass) {
  TempDir root;
  const std::string a = write_study_dir(root, "a", four_configs());
  const std::string missing = error_of([&] { compare_studies(a, root / "nowhere"); });
  EXPECT_TRUE(contains(missing, "study B: " + root / "nowhere" + ": no such file or folder")) << missing;
  // A report folder: summary.json has no per-run values, so compare refuses it and says why.
  const std::string report = root / "report";
  fs::create_directories(report);
  write_whole_file(report + "/summary.json", "{}\n");
  write_whole_file(report + "/report.md", "# report\n");
  const std::string from_report = error_of([&] { compare_studies(report, a); });
  EXPECT_TRUE(contains(from_report, "study A: " + report + " is a report (summary.json), not a study")) << from_report;
  EXPECT_TRUE(contains(from_report, "pass the study folder the report was made from"));
  EXPECT_TRUE(contains(error_of([&] { compare_studies(a, report + "/summary.json"); }), "is a report"));
  const std::string empty = root / "empty";
  fs::create_directories(empty);
  const std::string not_study = error_of([&] { compare_studies(empty, a); });
  EXPECT_TRUE(contains(not_study, "study A: " + empty + ": no configuration files")) << not_study;
}

}  // namespace
}  // namespace ddpscale
