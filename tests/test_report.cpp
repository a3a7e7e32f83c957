// `ddpscale report` below the command line: twin matching, speedups and "pays off",
// "n/a" instead of made-up intervals, failed runs counted, escaping for HTML, Markdown and
// CSV, bad inputs named, and the whole report written from a study on disk.
//
// Expected values are worked out by hand next to each check, or (Welch p-values) were
// computed once outside this code with scipy 1.10.1 (Debian python3-scipy):
//   scipy.stats.ttest_ind(n_rank, one_rank, equal_var=False).pvalue
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "report_writer.hpp"
#include "run_store.hpp"
#include "sample_records.hpp"
#include "study_analysis.hpp"
#include "summary_export.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

constexpr int kSteps = 4;

// Step time of rank r at step s (the "step" phase); the other phases are 100 (p + 1) + s.
// The slowest rank is the last one, so a run's median step is 1000 + 15 + 5 (world - 1):
// the median over s = 0..3 of 1000 + 10 s + 5 (world - 1).
float phase_value(int phase, int rank, int step) {
  if (phase == static_cast<int>(Phase::step)) return 1000.0f + 10.0f * step + 5.0f * rank;
  return 100.0f * (phase + 1) + step;
}

// A configuration whose ok runs have exactly the given throughputs (samples/s).
ConfigRecord make_config(const std::string& model, int64_t parameters, int64_t batch_per_rank, int world,
                         const std::vector<double>& throughputs, const std::string& scaling = "weak") {
  ConfigRecord c;
  c.params.model = model;
  c.params.parameters = parameters;
  c.params.batch_per_rank = batch_per_rank;
  c.params.global_batch = batch_per_rank * world;
  c.params.world_size = world;
  c.params.scaling = scaling;
  c.params.backend = world > 1 ? "mpi" : "none";
  c.params.warmup_steps = 2;
  c.params.measured_steps = kSteps;
  c.params.runs = static_cast<int>(throughputs.size());
  c.id = model + "_b" + std::to_string(batch_per_rank) + "_w" + std::to_string(world) + "_" + scaling;
  for (size_t k = 0; k < throughputs.size(); ++k) {
    RunRecord run;
    run.index = static_cast<int>(k);
    run.seed = 42 + k;
    run.samples_per_second = throughputs[k];
    for (int s = 0; s < kSteps; ++s) run.loss.push_back(2.0f - 0.1f * static_cast<float>(s));
    for (int r = 0; r < world; ++r) {
      RankTimings t;
      t.rank = r;
      for (int p = 0; p < kPhaseCount; ++p)
        for (int s = 0; s < kSteps; ++s) t.phase_us[static_cast<size_t>(p)].push_back(phase_value(p, r, s));
      t.wall_seconds = 0.1;
      run.ranks.push_back(t);
    }
    c.runs.push_back(run);
  }
  return c;
}

// The same, as a failed run appended with its reason.
void add_failed_run(ConfigRecord& c, const std::string& failure) {
  RunRecord run;
  run.index = static_cast<int>(c.runs.size());
  run.seed = 42 + c.runs.size();
  run.status = RunStatus::failed;
  run.failure = failure;
  c.runs.push_back(run);
  c.params.runs = static_cast<int>(c.runs.size());
}

size_t index_of(const StudyAnalysis& a, const std::string& id) {
  for (size_t i = 0; i < a.configs.size(); ++i)
    if (a.configs[i].id == id) return i;
  ADD_FAILURE() << "no configuration " << id;
  return a.configs.size();
}

const Comparison* comparison_for(const StudyAnalysis& a, const std::string& n_rank_id) {
  for (const Comparison& c : a.comparisons)
    if (a.configs[c.n_gpu].id == n_rank_id) return &c;
  return nullptr;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

// An RFC 4180 reader for checking what csv_field wrote: quoted fields may hold commas,
// doubled quotes and line breaks.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c != '"') {
        field += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(field);
      field.clear();
    } else if (c == '\n') {
      record.push_back(field);
      field.clear();
      records.push_back(record);
      record.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quoted field";
  if (!field.empty() || !record.empty()) {
    record.push_back(field);
    records.push_back(record);
  }
  return records;
}

// summary.csv as header + rows, looked up by id and column name.
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  explicit Csv(const std::string& text) {
    auto records = parse_csv(text);
    if (records.empty()) return;
    header = records.front();
    rows.assign(records.begin() + 1, records.end());
  }
  size_t column(const std::string& name) const {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << "summary.csv has no column " << name;
    return static_cast<size_t>(it - header.begin());
  }
  std::string cell(const std::string& id, const std::string& name) const {
    const size_t c = column(name);
    for (const auto& row : rows)
      if (!row.empty() && row[0] == id) return c < row.size() ? row[c] : "<missing>";
    ADD_FAILURE() << "summary.csv has no row " << id;
    return "<missing>";
  }
  double number(const std::string& id, const std::string& name) const {
    const std::string text = cell(id, name);
    return text.empty() ? std::nan("") : std::stod(text);
  }
};

// Sets an environment variable for one scope and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

bool gnuplot_on_path() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((fs::path(dir) / "gnuplot").c_str(), X_OK) == 0) return true;
  return false;
}

LoadedStudy in_memory_study(const std::vector<ConfigRecord>& configs, const std::optional<StudyMetadata>& meta = {}) {
  LoadedStudy study;
  StudySource source;
  source.path = "synthetic-study";
  source.metadata = meta;
  source.config_files = configs.size();
  study.sources.push_back(source);
  study.configs = configs;
  return study;
}

// Writes the report without plots into `out` and returns its report.md.
std::string markdown_report(const LoadedStudy& study, const StudyAnalysis& analysis, const fs::path& out) {
  ReportOptions options;
  options.out_dir = out.string();
  options.plots = false;
  write_report(study, analysis, options);
  return read_text(out / "report.md");
}

// ---- Twin matching ------------------------------------------------------------------

const std::vector<double> kOneRank = {100, 102, 98, 101, 99};
const std::vector<double> kTwoRanks = {180, 184, 176, 182, 178};

TEST(TwinMatching, WeakScalingPairsOnBatchPerRank) {
  const ConfigRecord one = make_config("mlp", 1000, 32, 1, kOneRank);          // global 32
  const ConfigRecord two = make_config("mlp", 1000, 32, 2, kTwoRanks);         // global 64
  const ConfigRecord two_b16 = make_config("mlp", 1000, 16, 2, kTwoRanks);     // global 32, like `one`
  const StudyAnalysis a = analyze_study({two_b16, one, two});
  ASSERT_EQ(a.comparisons.size(), 1u);
  EXPECT_EQ(a.comparisons[0].one_gpu, index_of(a, one.id));
  EXPECT_EQ(a.comparisons[0].n_gpu, index_of(a, two.id));
  // Weak scaling compares the per-rank batch: the same global batch is not a twin.
  EXPECT_EQ(a.unmatched, std::vector<size_t>{index_of(a, two_b16.id)});
  EXPECT_EQ(twin_key(one.params), twin_key(two.params));
  EXPECT_NE(twin_key(one.params), twin_key(two_b16.params));
}

TEST(TwinMatching, StrongScalingPairsOnGlobalBatch) {
  ConfigRecord one_g64 = make_config("mlp", 1000, 64, 1, kOneRank, "strong");   // global 64
  ConfigRecord one_g32 = make_config("mlp", 1000, 32, 1, kOneRank, "strong");   // global 32
  ConfigRecord two_g64 = make_config("mlp", 1000, 32, 2, kTwoRanks, "strong");  // 32 per rank, global 64
  const ConfigRecord weak_one_b32 = make_config("mlp", 1000, 32, 1, kOneRank, "weak");
  const StudyAnalysis a = analyze_study({one_g32, two_g64, weak_one_b32, one_g64});
  ASSERT_EQ(a.comparisons.size(), 1u);
  // The per-rank batch of two_g64 equals one_g32's and weak_one_b32's: neither is its twin.
  EXPECT_EQ(a.comparisons[0].one_gpu, index_of(a, one_g64.id));
  EXPECT_EQ(a.comparisons[0].n_gpu, index_of(a, two_g64.id));
  EXPECT_TRUE(a.unmatched.empty());
}

TEST(TwinMatching, OtherProfileExecDtypeOptimizerOrRateNeverMatch) {
  const std::vector<std::pair<std::string, std::function<void(ConfigParams&)>>> changes = {
      {"nccl_profile", [](ConfigParams& p) { p.nccl_profile = "nvls_off"; }},
      {"exec", [](ConfigParams& p) { p.exec = "compiled"; }},
      {"dtype", [](ConfigParams& p) { p.dtype = "bfloat16"; }},
      {"optimizer", [](ConfigParams& p) { p.optimizer = "sgd"; }},
      {"learning_rate", [](ConfigParams& p) { p.learning_rate = 1e-2; }},
      // Differs in the 8th significant digit: still another experiment.
      {"learning_rate 1.0000001e-3", [](ConfigParams& p) { p.learning_rate = 1.0000001e-3; }},
      {"device", [](ConfigParams& p) { p.device = "cuda"; }},
      {"measured_steps", [](ConfigParams& p) { p.measured_steps = 50; }},
  };
  for (const auto& [what, change] : changes) {
    SCOPED_TRACE(what);
    const ConfigRecord one = make_config("mlp", 1000, 32, 1, kOneRank);
    ConfigRecord two = make_config("mlp", 1000, 32, 2, kTwoRanks);
    change(two.params);
    EXPECT_NE(twin_key(one.params), twin_key(two.params));
    StudyAnalysis a = analyze_study({one, two});
    EXPECT_TRUE(a.comparisons.empty());
    EXPECT_EQ(a.unmatched, std::vector<size_t>{index_of(a, two.id)});

    // With the same change on the 1-rank side they are twins again.
    ConfigRecord one_changed = one;
    change(one_changed.params);
    a = analyze_study({one_changed, two});
    ASSERT_EQ(a.comparisons.size(), 1u);
    EXPECT_EQ(a.comparisons[0].one_gpu, index_of(a, one_changed.id));
  }
}

TEST(TwinMatching, BucketAndOverlapVariantsAllShareTheOneRankConfig) {
  const ConfigRecord one = make_config("mlp", 1000, 32, 1, kOneRank);
  std::vector<ConfigRecord> configs = {one};
  const std::vector<std::pair<double, bool>> variants = {{25, true}, {25, false}, {1, true}, {100, false}};
  for (const auto& [bucket, overlap] : variants) {
    ConfigRecord two = make_config("mlp", 1000, 32, 2, kTwoRanks);
    two.params.bucket_mb = bucket;
    two.params.overlap = overlap;
    two.id += "_bk" + std::to_string(static_cast<int>(bucket)) + (overlap ? "_ov" : "_noov");
    configs.push_back(two);
  }
  const StudyAnalysis a = analyze_study(configs);
  ASSERT_EQ(a.comparisons.size(), 4u);
  for (const Comparison& c : a.comparisons) {
    EXPECT_EQ(c.one_gpu, index_of(a, one.id)) << a.configs[c.n_gpu].id;
    EXPECT_DOUBLE_EQ(c.speedup.speedup, 1.8);  // 900/5 over 500/5
  }
  EXPECT_TRUE(a.unmatched.empty());
}

// Eager and graph (or float32 and bf16) comparisons get their own threshold tables and
// break-even fits: pooling them would average away the shift the comparison is about.
TEST(Thresholds, EachExecutionModeAndPrecisionIsFittedOnItsOwn) {
  std::vector<ConfigRecord> configs;
  for (const char* exec : {"eager", "graph"})
    for (int world : {1, 2}) {
      ConfigRecord c = make_config("mlp", 1000, 32, world, world == 1 ? kOneRank : kTwoRanks);
      c.params.exec = exec;
      c.id += std::string("_") + exec;
      configs.push_back(c);
    }
  ConfigRecord bf16_one = make_config("mlp", 1000, 32, 1, kOneRank), bf16_two = make_config("mlp", 1000, 32, 2, kTwoRanks);
  for (ConfigRecord* c : {&bf16_one, &bf16_two}) {
    c->params.dtype = "bfloat16";
    c->id += "_bf16";
    configs.push_back(*c);
  }
  const StudyAnalysis a = analyze_study(configs);
  ASSERT_EQ(a.comparisons.size(), 3u);
  const ThresholdGroup eager{2, "eager", "float32"}, graph{2, "graph", "float32"}, bf16{2, "eager", "bfloat16"};
  ASSERT_EQ(a.thresholds.size(), 3u);
  for (const ThresholdGroup& g : {eager, graph, bf16}) {
    ASSERT_EQ(a.break_even.count(g), 1u) << g.label();
    EXPECT_EQ(a.break_even.at(g).configs, 1u) << g.label();  // one comparison each, not three pooled
  }
  EXPECT_EQ(eager.label(), "2 ranks");
  EXPECT_EQ(graph.label(), "2 ranks, exec graph");
  EXPECT_EQ(bf16.label(), "2 ranks, bfloat16");
  EXPECT_EQ(eager.stem(), "w2");
  EXPECT_EQ((ThresholdGroup{2, "graph", "bfloat16"}).stem(), "w2_graph_bfloat16");

  TempDir out;
  const std::string md = markdown_report(in_memory_study(configs), a, out.path());
  for (const char* heading : {"### 2 ranks against 1\n", "### 2 ranks, exec graph against 1\n",
                              "### 2 ranks, bfloat16 against 1\n"})
    EXPECT_TRUE(contains(md, heading)) << heading;
  EXPECT_TRUE(contains(md, "Break-even model size for 2 ranks, exec graph (")) << md;
  const std::string json = read_text(out.path() / "summary.json");
  EXPECT_TRUE(contains(json, "\"exec\": \"graph\"")) << json;
}

// Two families whose speedups rise alike with size but sit 0.3 apart: each family's line
// crosses 1.0 where that family does (mlp at 10M, transformer at 316K), the pooled line in
// between (1.78M), where neither does. Worked by hand: mlp 0.8, 1.0, 1.2 at 1M, 10M, 100M is
// 1 + 0.2 (log10 p - 7); transformer 1.1, 1.3, 1.5 is 1 + 0.2 (log10 p - 5.5); pooled, the
// means 0.95, 1.15, 1.35 give 1 + 0.2 (log10 p - 6.25).
TEST(Thresholds, EachModelFamilyGetsItsOwnBreakEven) {
  std::vector<ConfigRecord> configs;
  const std::vector<double> one_rank = {990, 1000, 1010};  // mean 1000
  const std::vector<std::pair<std::string, double>> sizes = {{"1M", 1e6}, {"10M", 1e7}, {"100M", 1e8}};
  for (const auto& [family, first_speedup] : {std::pair<std::string, double>{"mlp", 0.8}, {"transformer", 1.1}})
    for (size_t i = 0; i < sizes.size(); ++i) {
      const std::string model = family + "@" + sizes[i].first;
      const double mean = 1000 * (first_speedup + 0.2 * static_cast<double>(i));
      configs.push_back(make_config(model, static_cast<int64_t>(sizes[i].second), 32, 1, one_rank));
      configs.push_back(make_config(model, static_cast<int64_t>(sizes[i].second), 32, 2, {mean - 10, mean, mean + 10}));
    }
  const StudyAnalysis a = analyze_study(configs);
  const ThresholdGroup two{2, "eager", "float32"};
  ASSERT_TRUE(a.break_even.at(two).found);
  EXPECT_NEAR(a.break_even.at(two).parameters, std::pow(10.0, 6.25), 1e-6 * std::pow(10.0, 6.25));
  ASSERT_EQ(a.break_even_by_family.count(two), 1u);
  const auto& families = a.break_even_by_family.at(two);
  ASSERT_EQ(families.size(), 2u);
  EXPECT_EQ(families.at("mlp").configs, 3u);
  EXPECT_NEAR(families.at("mlp").parameters, 1e7, 1e-6 * 1e7);
  EXPECT_FALSE(families.at("mlp").extrapolated);
  EXPECT_NEAR(families.at("transformer").parameters, std::pow(10.0, 5.5), 1e-6 * std::pow(10.0, 5.5));
  EXPECT_TRUE(families.at("transformer").extrapolated);  // below the smallest model measured,
  EXPECT_FALSE(families.at("transformer").far_extrapolated);  // but within ten times of it

  TempDir out;
  const std::string md = markdown_report(in_memory_study(configs), a, out.path());
  EXPECT_TRUE(contains(md, "The same fit for each model family on its own (2 ranks)")) << md;
  EXPECT_TRUE(contains(md, "- mlp (3 configurations): **10.0M parameters**")) << md;
  EXPECT_TRUE(contains(md, "- transformer (3 configurations): **316K parameters**")) << md;
  const std::string json = read_text(out.path() / "summary.json");
  EXPECT_TRUE(contains(json, "\"family\": \"transformer\"")) << json;
  // Measured, with no line: mlp paid off from 100M (1.2x) but not at 10M (1.0x); transformer
  // (1.1x upward) at every size.
  EXPECT_TRUE(contains(md, "| mlp | 32 | 3 | mlp@100M (100M) and every larger one | mlp@10M (10.0M) |")) << md;
  EXPECT_TRUE(contains(md, "| transformer | 32 | 3 | transformer@1M (1.00M): every size measured | none |")) << md;
  EXPECT_TRUE(contains(json, "\"pays_off_from_model\": \"mlp@100M\"")) << json;
  EXPECT_TRUE(contains(md, "Measured thresholds for 2 ranks, batch by batch with no fitted line (section 7; batch "
                           "per rank): mlp pays off from mlp@100M at batch 32; transformer pays off at every size "
                           "measured (from transformer@1M) at batch 32.")) << md;

  // A family that paid off everywhere and whose line crosses 1.0 far below the measured
  // sizes gets no quoted size: transformer at 1.1, 1.15, 1.2 crosses at 10K parameters.
  std::vector<ConfigRecord> flat_transformer = configs;
  for (ConfigRecord& c : flat_transformer)
    if (c.params.world_size == 2 && model_family(c.params.model) == "transformer")
      for (RunRecord& run : c.runs) run.samples_per_second = 1100 + (run.samples_per_second - 1100) / 4;
  TempDir flat_out;
  const std::string flat_md = markdown_report(in_memory_study(flat_transformer), analyze_study(flat_transformer),
                                              flat_out.path());
  EXPECT_TRUE(contains(flat_md, "- transformer (3 configurations): not given: the fitted line crosses 1.0 more than "
                                "ten times outside the measured sizes, too far to quote. Every compared configuration "
                                "paid off")) << flat_md;

  // One family alone: the pooled fit is that family's, so there is no second one.
  const std::vector<ConfigRecord> mlp_only(configs.begin(), configs.begin() + 6);
  EXPECT_EQ(analyze_study(mlp_only).break_even_by_family.count(two), 0u);
}

TEST(TwinMatching, NRankConfigWithoutTwinIsUnmatched) {
  const ConfigRecord one = make_config("mlp", 1000, 32, 1, kOneRank);
  const ConfigRecord two = make_config("mlp", 1000, 32, 2, kTwoRanks);
  const ConfigRecord four_other_model = make_config("cnn", 5000, 32, 4, {300, 310, 305});
  const ConfigRecord four_other_batch = make_config("mlp", 1000, 64, 4, {300, 310, 305});
  const StudyAnalysis a = analyze_study({four_other_model, one, two, four_other_batch});
  ASSERT_EQ(a.comparisons.size(), 1u);
  EXPECT_EQ(a.comparisons[0].n_gpu, index_of(a, two.id));
  std::vector<size_t> expected = {index_of(a, four_other_model.id), index_of(a, four_other_batch.id)};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(a.unmatched, expected);
  EXPECT_EQ(a.world_sizes, (std::vector<int>{1, 2, 4}));
  // Thresholds and break-even only for world sizes that were compared.
  EXPECT_EQ(a.break_even.size(), 1u);
  EXPECT_EQ(a.break_even.count(ThresholdGroup{2, "eager", "float32"}), 1u);
  EXPECT_EQ(a.thresholds.count(ThresholdGroup{4, "eager", "float32"}), 0u);
  // Sorted by parameter count: mlp (1,000) before cnn (5,000).
  EXPECT_EQ(a.models, (std::vector<std::string>{"mlp", "cnn"}));
}

// ---- Speedup and "pays off" -----------------------------------------------------------

struct PairCase {
  std::vector<double> one, two;
  double p;      // scipy, see the top of the file
  bool paid_off;
};

void check_pair(const PairCase& pc) {
  const ConfigRecord one = make_config("mlp", 1000, 32, 1, pc.one);
  const ConfigRecord two = make_config("mlp", 1000, 32, 2, pc.two);
  const StudyAnalysis a = analyze_study({one, two});
  ASSERT_EQ(a.comparisons.size(), 1u);
  const Comparison& c = a.comparisons[0];
  double sum_one = 0, sum_two = 0;
  for (double v : pc.one) sum_one += v;
  for (double v : pc.two) sum_two += v;
  const double expected = (sum_two / pc.two.size()) / (sum_one / pc.one.size());
  EXPECT_EQ(a.configs[c.one_gpu].outliers_removed, 0u);
  EXPECT_EQ(a.configs[c.n_gpu].outliers_removed, 0u);
  EXPECT_DOUBLE_EQ(a.configs[c.one_gpu].throughput.mean, sum_one / pc.one.size());
  EXPECT_NEAR(c.speedup.speedup, expected, 1e-12 * expected);
  EXPECT_NEAR(c.speedup.p_value, pc.p, 1e-6 * pc.p);
  EXPECT_TRUE(c.speedup.speedup_ci.contains(c.speedup.speedup));
  EXPECT_EQ(c.paid_off, pc.paid_off);
}

TEST(ReportSpeedup, RatioOfMeansAndSignificantGainPaysOff) {
  // Means 180 and 100: speedup 1.8; scipy p = 5.437303319663031e-09.
  check_pair({kOneRank, kTwoRanks, 5.437303319663031e-09, true});
}

TEST(ReportSpeedup, FasterButNotSignificantDoesNotPayOff) {
  // Means 105 and 100: speedup 1.05, but scipy p = 0.8088874454935351.
  check_pair({{100, 140, 60, 120, 80}, {105, 145, 65, 125, 85}, 0.8088874454935351, false});
}

TEST(ReportSpeedup, SignificantlySlowerDoesNotPayOff) {
  // Means 50 and 100: speedup 0.5, scipy p = 1.4663766681006931e-09.
  check_pair({kOneRank, {50, 51, 49, 50.5, 49.5}, 1.4663766681006931e-09, false});
}

TEST(ReportSpeedup, SingleRunsGiveAPointButNoIntervalNoPAndNoPayOff) {
  const StudyAnalysis a = analyze_study({make_config("mlp", 1000, 32, 1, {100}), make_config("mlp", 1000, 32, 2, {300})});
  ASSERT_EQ(a.comparisons.size(), 1u);
  EXPECT_DOUBLE_EQ(a.comparisons[0].speedup.speedup, 3.0);
  EXPECT_FALSE(a.comparisons[0].speedup.speedup_ci.valid());
  EXPECT_TRUE(std::isnan(a.comparisons[0].speedup.p_value));
  EXPECT_FALSE(a.comparisons[0].paid_off);
}

// ---- Formatting -----------------------------------------------------------------------

TEST(ReportFormatting, FormatNumberKeepsSignificantDigits) {
  EXPECT_EQ(format_number(1.8), "1.80");
  EXPECT_EQ(format_number(12.34), "12.3");
  EXPECT_EQ(format_number(1234.5678), "1235");            // never fewer than 0 decimals
  EXPECT_EQ(format_number(1234.5678, 6), "1234.57");
  EXPECT_EQ(format_number(0.012345, 2), "0.012");
  EXPECT_EQ(format_number(0.000123456, 3), "0.000123");
  EXPECT_EQ(format_number(-2.5), "-2.50");
  EXPECT_EQ(format_number(0), "0");
  EXPECT_EQ(format_number(1e9), "1000000000");
  EXPECT_EQ(format_number(100.0, 4), "100.0");
  // Rounding that carries into the next power of ten keeps 3 significant digits.
  EXPECT_EQ(format_number(9.996), "10.0");
  EXPECT_EQ(format_number(99.96), "100");
  EXPECT_EQ(format_number(0.09996), "0.100");
  EXPECT_EQ(format_number(std::nan("")), "n/a");
  EXPECT_EQ(format_number(std::numeric_limits<double>::infinity()), "n/a");
  EXPECT_EQ(format_number(-std::numeric_limits<double>::infinity()), "n/a");
}

TEST(ReportFormatting, GroupThousands) {
  EXPECT_EQ(group_thousands(0), "0");
  EXPECT_EQ(group_thousands(999), "999");
  EXPECT_EQ(group_thousands(1000), "1,000");
  EXPECT_EQ(group_thousands(258432), "258,432");
  EXPECT_EQ(group_thousands(1234567), "1,234,567");
  EXPECT_EQ(group_thousands(-1234), "-1,234");
  EXPECT_EQ(group_thousands(-999), "-999");
  EXPECT_EQ(group_thousands(std::numeric_limits<int64_t>::max()), "9,223,372,036,854,775,807");
  EXPECT_EQ(group_thousands(std::numeric_limits<int64_t>::min()), "-9,223,372,036,854,775,808");
}

// ---- CSV and JSON ---------------------------------------------------------------------

TEST(SummaryExport, CsvFieldFollowsRfc4180) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field(" spaced "), " spaced ");  // spaces are data, not a reason to quote
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("\""), "\"\"\"\"");
  EXPECT_EQ(csv_field("line\nbreak"), "\"line\nbreak\"");
  EXPECT_EQ(csv_field("cr\rlf"), "\"cr\rlf\"");
  // What csv_field writes, an RFC 4180 reader gives back.
  const std::string tricky = "a, \"b\"\nc";
  EXPECT_EQ(parse_csv(csv_field(tricky) + "," + csv_field("x") + "\n"),
            (std::vector<std::vector<std::string>>{{tricky, "x"}}));
}

TEST(SummaryExport, CsvHasOneRowPerConfigurationAndAFixedHeader) {
  const ConfigRecord one = make_config("mlp", 1000, 32, 1, kOneRank);
  const ConfigRecord two = make_config("mlp", 1000, 32, 2, kTwoRanks);
  const ConfigRecord four = make_config("mlp", 1000, 64, 4, {300, 310, 305});
  const StudyAnalysis a = analyze_study({one, two, four});
  const Csv csv(summary_csv(a));
  ASSERT_EQ(csv.rows.size(), 3u);
  // 24 identifying and counting columns, 8 summaries (samples/s and 7 phases) of 8 columns
  // (n, mean, sd, ci95_low, ci95_high, median, q1, q3), memory, utilisation and GPU busy, and
  // the comparison's speedup, its CI, efficiency, welch_p and paid_off: 24 + 64 + 3 + 6.
  EXPECT_EQ(csv.header.size(), 97u);
  EXPECT_EQ(csv.header.front(), "id");
  EXPECT_EQ(csv.header.back(), "paid_off");
  for (const auto& row : csv.rows) EXPECT_EQ(row.size(), csv.header.size()) << row[0];
  for (const char* name : {"model", "world_size", "allreduce_dtype", "runs_failed", "success_rate", "outliers_removed", "samples_per_s_mean",
                           "samples_per_s_ci95_low", "samples_per_s_ci95_high", "step_us_median", "forward_us_mean",
                           "allreduce_exposed_us_q3", "speedup", "speedup_ci95_low", "speedup_ci95_high", "efficiency",
                           "welch_p"})
    EXPECT_EQ(std::count(csv.header.begin(), csv.header.end(), name), 1) << name;
  // Fixed: a study without any comparison has the same columns.
  EXPECT_EQ(Csv(summary_csv(analyze_study({one}))).header, csv.header);

  // Values: means 100 and 180 (kOneRank, kTwoRanks), speedup 1.8, scipy p as above; the
  // median step is 1015 us on 1 rank and 1020 us on 2 (see phase_value).
  EXPECT_DOUBLE_EQ(csv.number(one.id, "samples_per_s_mean"), 100.0);
  EXPECT_DOUBLE_EQ(csv.number(two.id, "samples_per_s_mean"), 180.0);
  EXPECT_DOUBLE_EQ(csv.number(one.id, "samples_per_s_n"), 5.0);
  EXPECT_DOUBLE_EQ(csv.number(one.id, "step_us_median"), 1015.0);
  EXPECT_DOUBLE_EQ(csv.number(two.id, "step_us_median"), 1020.0);
  EXPECT_DOUBLE_EQ(csv.number(two.id, "speedup"), 1.8);
  EXPECT_DOUBLE_EQ(csv.number(two.id, "efficiency"), 0.9);
  EXPECT_NEAR(csv.number(two.id, "welch_p"), 5.437303319663031e-09, 1e-6 * 5.437303319663031e-09);
  EXPECT_LT(csv.number(two.id, "speedup_ci95_low"), 1.8);
  EXPECT_GT(csv.number(two.id, "speedup_ci95_high"), 1.8);
  EXPECT_EQ(csv.cell(two.id, "paid_off"), "true");
  // No comparison: empty cells, never a number or "nan".
  for (const char* name : {"speedup", "speedup_ci95_low", "efficiency", "welch_p", "paid_off"}) {
    EXPECT_EQ(csv.cell(one.id, name), "") << name;
    EXPECT_EQ(csv.cell(four.id, name), "") << name;
  }
  EXPECT_FALSE(contains(summary_csv(a), "nan"));
}

TEST(SummaryExport, JsonHasTheConfigurationsAndNullForNaN) {
  const StudyAnalysis a = analyze_study({make_config("mlp", 1000, 32, 1, kOneRank), make_config("mlp", 1000, 32, 2, kTwoRanks)});
  const std::string json = summary_json(a);
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json[json.find_last_not_of(" \n")], '}');
  const size_t key = json.find("\"configurations\":");
  ASSERT_NE(key, std::string::npos);
  EXPECT_EQ(json[json.find_first_not_of(" \n", key + 17)], '[');
  EXPECT_EQ(count_of(json, "\"id\":"), 2u);
  EXPECT_EQ(count_of(json, "\"paid_off\": true"), 1u);
  EXPECT_EQ(count_of(json, "\"paid_off\": null"), 1u);  // the 1-rank row
  EXPECT_NE(json.find("\"speedup\": null"), std::string::npos);
  EXPECT_NE(json.find("\"speedup\": 1.8,"), std::string::npos);
  EXPECT_NE(json.find("\"break_even\":"), std::string::npos);
  for (const char* bad : {"nan", "NaN", "inf", "Infinity"}) EXPECT_FALSE(contains(json, bad)) << bad;
  // Brackets balance (no string in this study holds one).
  EXPECT_EQ(count_of(json, "{"), count_of(json, "}"));
  EXPECT_EQ(count_of(json, "["), count_of(json, "]"));
}

// ---- One run, failed runs ---------------------------------------------------------------

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
TEST(ReportFiles, SectionNineNamesTheBuildsThatMeasuredTheStudy) {
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
  // Section 9 lists each failure with its configuration (Markdown-escaped underscores).
  const size_t section9 = md.find("## 9. Methodology and reproducibility");
  ASSERT_NE(section9, std::string::npos);
  const std::string methods = md.substr(section9);
  EXPECT_TRUE(contains(methods, "Failed runs (excluded, counted): 2."));
  EXPECT_TRUE(contains(methods, "- solo\\_b8\\_w1: run 1: CUDA out of memory at batch 4096\n"));
  EXPECT_TRUE(contains(methods, "- solo\\_b8\\_w1: run 2: NCCL watchdog timeout after 1800 s\n"));

  const std::string json = read_text(out.path() / "summary.json");
  EXPECT_TRUE(contains(json, "\"run 1: CUDA out of memory at batch 4096\""));
  const std::string html = read_text(out.path() / "report.html");
  EXPECT_TRUE(contains(html, "solo_b8_w1: run 1: CUDA out of memory at batch 4096"));
  EXPECT_TRUE(contains(html, ">100.0 (n=1, no CI)<"));
}

// ---- Escaping ---------------------------------------------------------------------------

// Markdown outside fenced code blocks, where an unescaped tag would be rendered.
std::string outside_fences(const std::string& md) {
  std::string out;
  bool fenced = false;
  std::istringstream lines(md);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) out += line + "\n";
  }
  return out;
}

// The '|' that end cells in a Markdown table row (a backslash-escaped one is text).
size_t cell_separators(const std::string& line) {
  size_t n = 0;
  for (size_t i = 0; i < line.size(); ++i)
    if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++n;
  return n;
}

TEST(ReportEscaping, StoredTextIsEscapedInHtmlAndMarkdown) {
  TempDir out;
  const std::string payload = R"(<script>alert("x")</script> & 'q')";
  const std::string escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;";
  const std::string model = "mlp" + payload;
  ConfigRecord one = make_config(model, 1000, 8, 1, kOneRank);
  one.id = "evil_w1";
  add_failed_run(one, "rank 0: " + payload);
  ConfigRecord two = make_config(model, 1000, 8, 2, kTwoRanks);
  two.id = "evil_w2";
  StudyMetadata meta = testing_samples::sample_metadata();
  meta.hostnames = {"node-" + payload};
  meta.gpu_names = {"gpu-" + payload};
  meta.command_line = "ddpscale sweep " + payload;
  meta.link_topology = "link-" + payload;
  meta.nccl_variables = {{"NCCL_ALGO", payload}};
  const LoadedStudy study = in_memory_study({one, two}, meta);
  const StudyAnalysis a = analyze_study(study.configs);

  ReportOptions options;
  options.out_dir = out.path().string();
  options.command_line = "ddpscale report " + payload;
  options.describe_model = [&](const std::string&, int64_t) { return ModelArchitecture{"layers-" + payload}; };
  const ReportResult result = write_report(study, a, options);  // plots too, where gnuplot is: titles hold the name
  if (gnuplot_on_path()) EXPECT_EQ(result.plots_note, "");

  const std::string html = read_text(out.path() / "report.html");
  EXPECT_FALSE(contains(html, "<script")) << "raw script tag in report.html";
  EXPECT_FALSE(contains(html, payload));
  for (const std::string& prefix : {"mlp", "node-", "gpu-", "link-", "ddpscale sweep ", "ddpscale report ",
                                    "rank 0: ", "layers-", "NCCL_ALGO="})
    EXPECT_TRUE(contains(html, prefix + escaped)) << prefix;
  // Headings of section 4 and 5 and the model table: the model name at least 3 times.
  EXPECT_GE(count_of(html, "mlp" + escaped), 3u);

  const std::string md = read_text(out.path() / "report.md");
  const std::string md_text = outside_fences(md);
  EXPECT_FALSE(contains(md_text, "<script")) << "raw script tag in report.md outside code blocks";
  EXPECT_TRUE(contains(md_text, "mlp&lt;script&gt;alert(\"x\")&lt;/script&gt; & 'q'"));
  // Inside the fenced command block the text is shown as it was typed.
  EXPECT_TRUE(contains(md, "```\nddpscale sweep " + payload + "\nddpscale report " + payload + "\n```"));
}

TEST(ReportEscaping, MarkdownTableCellsEscapePipesAndCsvQuotesCommas) {
  TempDir out;
  const std::string piped = "wide|mlp";
  const std::string commas = "mlp, \"v2\"";
  const StudyAnalysis a = analyze_study({make_config(piped, 1000, 8, 1, kOneRank), make_config(piped, 1000, 8, 2, kTwoRanks),
                                         make_config(commas, 2000, 8, 1, kOneRank)});
  const std::string md = markdown_report(in_memory_study({}), a, out.path());
  EXPECT_TRUE(contains(md, "| wide\\|mlp | 1,000 |")) << md;  // section 3's row
  EXPECT_FALSE(contains(md, "| wide|mlp"));
  // Every row of every table has as many cell separators as its header.
  std::istringstream lines(md);
  size_t header_separators = 0, table_rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '|') {
      header_separators = 0;
      continue;
    }
    if (header_separators == 0) header_separators = cell_separators(line);
    EXPECT_EQ(cell_separators(line), header_separators) << line;
    ++table_rows;
  }
  EXPECT_GT(table_rows, 10u);

  const std::string csv_text = read_text(out.path() / "summary.csv");
  EXPECT_TRUE(contains(csv_text, ",\"mlp, \"\"v2\"\"\",")) << csv_text;
  const Csv csv(csv_text);
  ASSERT_EQ(csv.rows.size(), 3u);
  size_t with_commas = 0;
  for (const auto& row : csv.rows) {
    EXPECT_EQ(row.size(), csv.header.size());
    with_commas += row[csv.column("model")] == commas;
  }
  EXPECT_EQ(with_commas, 1u);
}

// ---- Bad inputs -------------------------------------------------------------------------

class LoadStudies : public ::testing::Test {
 protected:
  // A study folder with study.h5 and one good configuration file.
  std::string good_study(const std::string& name) {
    const fs::path dir = tmp_.path() / name;
    fs::create_directories(dir);
    write_study(dir.string(), testing_samples::sample_metadata());
    write_config(dir.string(), make_config("mlp", 1000, 8, 1, kOneRank));
    return dir.string();
  }
  std::string good_file(const std::string& dir) const { return (fs::path(dir) / "mlp_b8_w1_weak.h5").string(); }

  static std::string load_error(const std::vector<std::string>& paths) {
    try {
      load_studies(paths);
    } catch (const StoreError& e) {
      return e.what();
    }
    return "";
  }
  // The message of a folder with one good and one damaged file: names the damaged file
  // first, says what is wrong, and points to --skip-bad.
  static void expect_named(const std::string& message, const std::string& bad, const std::string& what) {
    EXPECT_EQ(message.rfind(bad + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
    EXPECT_NE(message.find("--skip-bad"), std::string::npos) << message;
  }

  std::string truncated_copy(const std::string& dir) {
    const std::string bad = (fs::path(dir) / "truncated.h5").string();
    fs::copy_file(good_file(dir), bad);
    fs::resize_file(bad, fs::file_size(bad) / 2);
    return bad;
  }
  static std::string foreign_hdf5(const std::string& dir) {
    const std::string bad = (fs::path(dir) / "foreign.h5").string();
    const hid_t file = H5Fcreate(bad.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[1] = {3};
    const hid_t space = H5Screate_simple(1, dims, nullptr);
    const hid_t data = H5Dcreate2(file, "values", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const int values[3] = {1, 2, 3};
    H5Dwrite(data, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
    H5Dclose(data);
    H5Sclose(space);
    H5Fclose(file);
    return bad;
  }
  std::string other_version(const std::string& dir) {
    ConfigRecord record = make_config("mlp", 1000, 8, 2, kTwoRanks);
    record.id = "version2";
    write_config(dir, record);
    const std::string bad = (fs::path(dir) / "version2.h5").string();
    testing_samples::set_int_attribute(bad, "schema_version", 2);
    return bad;
  }
  static std::string text_file(const std::string& dir) {
    const std::string bad = (fs::path(dir) / "notes.h5").string();
    std::ofstream(bad) << "these are notes, not HDF5\n";
    return bad;
  }

  TempDir tmp_;
};

TEST_F(LoadStudies, GoodStudyLoads) {
  const std::string dir = good_study("good");
  const LoadedStudy loaded = load_studies({dir});
  ASSERT_EQ(loaded.configs.size(), 1u);
  EXPECT_EQ(loaded.configs[0].id, "mlp_b8_w1_weak");
  ASSERT_EQ(loaded.sources.size(), 1u);
  EXPECT_EQ(loaded.sources[0].config_files, 1u);
  ASSERT_TRUE(loaded.sources[0].metadata.has_value());
  EXPECT_EQ(loaded.sources[0].metadata->git_commit, "abc123");
  EXPECT_TRUE(loaded.skipped.empty());
  // A single configuration file is an input too.
  EXPECT_EQ(load_studies({good_file(dir)}).configs.size(), 1u);
}

TEST_F(LoadStudies, MissingPathIsNamed) {
  const std::string missing = tmp_ / "no-such-study";
  EXPECT_EQ(load_error({missing}), missing + ": no such file or folder");
  EXPECT_THROW(load_studies({}), StoreError);
}

TEST_F(LoadStudies, FolderWithoutConfigurationsIsNamed) {
  const std::string empty = tmp_ / "empty";
  fs::create_directories(empty);
  std::string message = load_error({empty});
  EXPECT_EQ(message.rfind(empty + ": no configuration files", 0), 0u) << message;
  // study.h5 alone is not a configuration.
  const std::string only_study = tmp_ / "only-study";
  fs::create_directories(only_study);
  write_study(only_study, testing_samples::sample_metadata());
  message = load_error({only_study});
  EXPECT_EQ(message.rfind(only_study + ": no configuration files", 0), 0u) << message;
}

TEST_F(LoadStudies, TruncatedFileIsNamed) {
  const std::string dir = good_study("truncated");
  expect_named(load_error({dir}), truncated_copy(dir), "truncated");
}

TEST_F(LoadStudies, ForeignHdf5FileIsNamed) {
  const std::string dir = good_study("foreign");
  expect_named(load_error({dir}), foreign_hdf5(dir), "not a ddpscale run store file");
}

TEST_F(LoadStudies, OtherSchemaVersionIsNamed) {
  const std::string dir = good_study("version");
  expect_named(load_error({dir}), other_version(dir), "schema version 2, this ddpscale reads version 1");
}

TEST_F(LoadStudies, TextFileIsNamed) {
  const std::string dir = good_study("text");
  expect_named(load_error({dir}), text_file(dir), "not an HDF5 file");
}

TEST_F(LoadStudies, DamagedFileGivenDirectlyIsNamed) {
  const std::string dir = good_study("direct");
  const std::string bad = truncated_copy(dir);
  const std::string message = load_error({bad});
  EXPECT_EQ(message.rfind(bad + ": ", 0), 0u) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

TEST_F(LoadStudies, SkipBadLoadsTheGoodFilesAndListsTheRest) {
  const std::string dir = good_study("mixed");
  std::vector<std::string> bad = {truncated_copy(dir), foreign_hdf5(dir), other_version(dir), text_file(dir)};
  const std::string missing = tmp_ / "missing-study";
  bad.push_back(missing);
  // Several damaged files without --skip-bad: the first is named and the rest counted.
  const std::string message = load_error({dir});
  EXPECT_NE(message.find(" (and 3 more); pass --skip-bad"), std::string::npos) << message;

  LoadOptions options;
  options.skip_bad = true;
  const LoadedStudy loaded = load_studies({dir, missing}, options);
  ASSERT_EQ(loaded.configs.size(), 1u);
  EXPECT_EQ(loaded.configs[0].id, "mlp_b8_w1_weak");
  ASSERT_EQ(loaded.skipped.size(), bad.size());
  for (const std::string& path : bad) {
    const auto named = std::count_if(loaded.skipped.begin(), loaded.skipped.end(),
                                     [&](const std::string& s) { return s.rfind(path + ": ", 0) == 0; });
    EXPECT_EQ(named, 1) << path;
  }
  // Nothing readable at all is still an error, with --skip-bad too.
  EXPECT_THROW(load_studies({missing}, options), StoreError);
}

// ---- The whole report from a study on disk ----------------------------------------------

class WriteReport : public ::testing::Test {
 protected:
  void SetUp() override {
    study_dir_ = tmp_ / "study";
    fs::create_directories(study_dir_);
    write_study(study_dir_, testing_samples::sample_metadata(), {{1024, 4096}, {10.5, 12.0}, {0.1, 0.34}, {0.0975, 0.33}});
    write_config(study_dir_, make_config("mlp-small", 10000, 8, 1, kOneRank));
    write_config(study_dir_, make_config("mlp-small", 10000, 8, 2, {150, 152, 148, 151, 149}));
    write_config(study_dir_, make_config("mlp-big", 1000000, 8, 1, kOneRank));
    write_config(study_dir_, make_config("mlp-big", 1000000, 8, 2, kTwoRanks));
    study_ = load_studies({study_dir_});
    analysis_ = analyze_study(study_.configs);
  }
  ReportResult write(const std::string& out) {
    ReportOptions options;
    options.out_dir = out;
    options.inputs = {study_dir_};
    options.command_line = "ddpscale report " + study_dir_ + " --out " + out;
    options.price_per_gpu_hour = 2.0;
    return write_report(study_, analysis_, options);
  }
  static void expect_tables(const std::string& out, const ReportResult& result) {
    for (const char* name : {"report.md", "report.html", "summary.csv", "summary.json"}) {
      EXPECT_TRUE(fs::is_regular_file(fs::path(out) / name)) << name;
      EXPECT_GT(fs::file_size(fs::path(out) / name), 100u) << name;
    }
    ASSERT_GE(result.files.size(), 4u);
    EXPECT_EQ(result.files[0], (fs::path(out) / "report.md").string());
    const std::string md = read_text(fs::path(out) / "report.md");
    size_t last = 0;
    for (const char* heading : {"## 1. Executive summary\n", "## 2. Test configuration\n", "## 3. Model specifications\n",
                                "## 4. Results per model\n", "## 5. Where the time goes\n", "## 6. NCCL profiles compared\n",
                                "## 7. Parameter-threshold analysis\n", "## 8. Cost\n",
                                "## 9. Methodology and reproducibility\n"}) {
      const size_t at = md.find(heading);
      ASSERT_NE(at, std::string::npos) << heading;
      EXPECT_GT(at, last) << heading << " out of order";
      last = at;
    }
    // Section 2 from study.h5, section 3 from the parameters, section 8 from the price:
    // 2.0 x 1 rank x 10^6 / (100 samples/s x 3600) = 5.5556 per 10^6 samples.
    EXPECT_TRUE(contains(md, "| hosts | node-a, node-b |"));
    EXPECT_TRUE(contains(md, "| 4,096 | 12.00 | 0.340 | 0.330 |"));
    EXPECT_TRUE(contains(md, "| mlp-big | 1,000,000 |"));
    EXPECT_TRUE(contains(md, "| 5.56 |"));
    EXPECT_EQ(Csv(read_text(fs::path(out) / "summary.csv")).rows.size(), 4u);
  }

  TempDir tmp_;
  std::string study_dir_;
  LoadedStudy study_;
  StudyAnalysis analysis_;
};

TEST_F(WriteReport, WritesEveryFileAndThePlots) {
  if (!gnuplot_on_path()) GTEST_SKIP() << "gnuplot not on PATH (Debian: gnuplot-nox)";
  const std::string out = tmp_ / "report";
  const ReportResult result = write(out);
  EXPECT_EQ(result.plots_note, "");
  expect_tables(out, result);
  // Throughput and phases per model, speedup against parameters for 2 ranks.
  for (const char* stem : {"throughput_mlp-small", "throughput_mlp-big", "phases_mlp-small", "phases_mlp-big",
                           "speedup_vs_parameters_w2"}) {
    const fs::path png = fs::path(out) / "plots" / (std::string(stem) + ".png");
    const fs::path svg = fs::path(out) / "plots" / (std::string(stem) + ".svg");
    ASSERT_TRUE(fs::is_regular_file(png)) << png;
    ASSERT_TRUE(fs::is_regular_file(svg)) << svg;
    EXPECT_EQ(read_text(png).substr(0, 8), "\x89PNG\r\n\x1a\n") << png;
    EXPECT_TRUE(contains(read_text(svg), "<svg")) << svg;
    EXPECT_EQ(std::count(result.files.begin(), result.files.end(), png.string()), 1) << png;
  }
  const std::string html = read_text(fs::path(out) / "report.html");
  EXPECT_EQ(count_of(html, "src=\"data:image/png;base64,"), 5u);
  EXPECT_FALSE(contains(html, "src=\"http"));
  const std::string md = read_text(fs::path(out) / "report.md");
  EXPECT_TRUE(contains(md, "![mlp-big: samples/s against batch per rank"));
  EXPECT_TRUE(contains(md, "](plots/throughput_mlp-big.svg)"));
}

TEST_F(WriteReport, WithoutGnuplotTheTablesAreStillWritten) {
  const std::string out = tmp_ / "report-no-gnuplot";
  const std::string empty_bin = tmp_ / "empty-bin";
  fs::create_directories(empty_bin);
  ReportResult result;
  {
    ScopedEnv path("PATH", empty_bin);
    result = write(out);
  }
  EXPECT_TRUE(std::getenv("PATH") && std::string(std::getenv("PATH")) != empty_bin) << "PATH not restored";
  EXPECT_TRUE(contains(result.plots_note, "plots skipped")) << result.plots_note;
  EXPECT_TRUE(contains(result.plots_note, "gnuplot")) << result.plots_note;
  expect_tables(out, result);
  EXPECT_EQ(result.files.size(), 5u);  // md, html, summary csv and json, commbench.csv; no plot files
  EXPECT_EQ(read_text(fs::path(out) / "commbench.csv").rfind("bytes,time_us,algbw_gbs,busbw_gbs,ranks\n", 0), 0u);
  for (const auto& entry : fs::recursive_directory_iterator(out))
    EXPECT_NE(entry.path().extension(), ".png") << entry.path();
  const std::string html = read_text(fs::path(out) / "report.html");
  EXPECT_FALSE(contains(html, "data:image/png"));
  EXPECT_TRUE(contains(read_text(fs::path(out) / "report.md"), "Plots: plots skipped: gnuplot not found on PATH"));
}

}  // namespace
}  // namespace ddpscale
