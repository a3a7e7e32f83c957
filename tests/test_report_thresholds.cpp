// The parameter-threshold analysis (study_analysis, report_thresholds): one threshold table and
// break-even fit per (world size, exec, dtype) group and per model family, and how the
// report's threshold section and summary.json state them.
#include "tests/report_test_helpers.hpp"
#include "tests/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace ddpscale {
namespace {

using namespace report_test;

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
  // Stated in the threshold section only, not again in the executive summary.
  EXPECT_EQ(count_of(md, "Break-even model size for 2 ranks, exec graph ("), 1u) << md;
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
  // Measured, with no line: mlp paid off from 100M (1.2x) but not at 10M (1.0x, an interval
  // holding 1: undecided); transformer (1.1x upward) at every size.
  EXPECT_TRUE(contains(md, "| mlp | 32 | 3 | mlp@100M (100M) and every larger one | mlp@10M (10.0M), undecided |"))
      << md;
  EXPECT_TRUE(contains(md, "| transformer | 32 | 3 | transformer@1M (1.00M): every size measured | none |")) << md;
  EXPECT_TRUE(contains(json, "\"pays_off_from_model\": \"mlp@100M\"")) << json;
  EXPECT_TRUE(contains(md, "Measured thresholds for 2 ranks, batch by batch with no fitted line (section 8; batch "
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

// A family that paid off at no size measured reads as a sentence, naming the largest size.
TEST(Thresholds, AFamilyThatNeverPaidOffSaysSoInASentence) {
  const std::vector<double> slower = {60, 61, 59, 60, 60};
  std::vector<ConfigRecord> configs;
  for (int64_t batch : {8, 64})
    for (const auto& [model, parameters] : {std::pair<const char*, int64_t>{"mlp@1M", 1'000'000}, {"mlp@10M", 10'000'000}}) {
      ConfigRecord one = make_config(model, parameters, batch, 1, kOneRank);
      ConfigRecord two = make_config(model, parameters, batch, 2, slower);
      configs.push_back(one);
      configs.push_back(two);
    }
  TempDir out;
  const std::string md = markdown_report(in_memory_study(configs), analyze_study(configs), out.path());
  EXPECT_TRUE(contains(md, "batch per rank): mlp does not pay off, not even at mlp@10M at batch 8 and 64.")) << md;
  EXPECT_FALSE(contains(md, "undecided")) << md;
}

// A family whose largest size's speedup interval holds 1 is not shown to pay off, which the
// sentence, the matrix and the table say apart from "does not pay off". 2 ranks read
// {80, 120, 100, 140, 60} samples/s against {100 x 5} on 1: a mean speedup of 1.0 whose
// interval holds 1 by construction, whatever the bootstrap draws.
TEST(Thresholds, AFamilyWhoseIntervalHoldsOneIsUndecided) {
  const std::vector<double> spread = {80, 120, 100, 140, 60};
  const std::vector<double> level = {100, 100, 100, 100, 100};
  std::vector<ConfigRecord> configs;
  for (const auto& [model, parameters] : {std::pair<const char*, int64_t>{"mlp@1M", 1'000'000}, {"mlp@10M", 10'000'000}}) {
    configs.push_back(make_config(model, parameters, 8, 1, level));
    configs.push_back(make_config(model, parameters, 8, 2, spread));
  }
  const StudyAnalysis a = analyze_study(configs);
  ASSERT_EQ(a.comparisons.size(), 2u);
  for (const Comparison& c : a.comparisons) {
    ASSERT_TRUE(c.speedup.speedup_ci.contains(1.0)) << c.speedup.speedup_ci.low << " " << c.speedup.speedup_ci.high;
    EXPECT_EQ(c.payoff, Payoff::undecided);
    EXPECT_FALSE(c.paid_off());
  }
  TempDir out;
  const std::string md = markdown_report(in_memory_study(configs), a, out.path());
  EXPECT_TRUE(contains(md, "batch per rank): mlp is not shown to pay off, undecided at mlp@10M at batch 8. "
                           "Undecided: the speedup's 95% interval holds 1.")) << md;
  EXPECT_TRUE(contains(md, "| mlp@10M | 10,000,000 | undecided 1.00x |")) << md;
  EXPECT_TRUE(contains(md, "mlp@10M (10.0M), undecided |")) << md;
  // The answer and each model's bullet count the undecided apart.
  EXPECT_TRUE(contains(md, "in 0 of 2 comparisons (2 undecided: the speedup's interval holds 1), for none of the "
                           "models measured.")) << md;
  EXPECT_TRUE(contains(md, "paid off in 0 of 1 configurations (1 undecided)")) << md;
}

}  // namespace
}  // namespace ddpscale
