// One rule for "paid off" (the speedup's whole 95% interval above 1, thresholds.hpp) in
// every place the report states it: the answer's count, each model's bullet, the tables'
// intervals, the pays-off matrix, summary.csv and the answer chart's error bars. The study
// holds a speedup whose interval clears 1 while Welch's p does not reach 0.05, the case
// where a rule on p told the text one thing and the chart another.
#include "tests/report_test_helpers.hpp"
#include "tests/temp_dir.hpp"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace ddpscale {
namespace {

using namespace report_test;

// clear: 1.8x; edge: 1.2x with an interval above 1 but Welch's p above 0.05 (the fast
// 1-rank run is rarely drawn three times by the bootstrap, while Welch's variance counts it
// in full); flat: no faster.
std::vector<ConfigRecord> three_models() {
  return {make_config("clear", 1'000'000, 8, 1, kOneRank), make_config("clear", 1'000'000, 8, 2, kTwoRanks),
          make_config("edge", 2'000'000, 8, 1, {90, 100, 110, 100, 140}),
          make_config("edge", 2'000'000, 8, 2, {128, 129, 130, 131, 132}),
          make_config("flat", 3'000'000, 8, 1, kOneRank), make_config("flat", 3'000'000, 8, 2, {99, 103, 97, 101, 100})};
}

const Comparison& comparison_of(const StudyAnalysis& a, const std::string& model) {
  for (const Comparison& c : a.comparisons)
    if (a.configs[c.n_gpu].params.model == model) return c;
  throw std::runtime_error("no comparison of " + model);
}

// The printed "1.12x \[1.04, 1.20\]" (brackets escaped for Markdown) of the model's row in
// section 4: is its low end above 1?
bool table_interval_above_one(const std::string& md, const std::string& model) {
  const size_t heading = md.find("### " + model + "\n");
  EXPECT_NE(heading, std::string::npos) << model;
  std::smatch match;
  const std::string after = md.substr(heading);
  EXPECT_TRUE(std::regex_search(after, match, std::regex(R"(\| [0-9.]+x \\\[([0-9.]+), [0-9.]+\\\] \|)"))) << model;
  return std::stod(match[1]) > 1;
}

// The answer chart's data: per point "x y low high"; true where the point's low end is above 1.
std::map<double, bool> chart_low_above_one(const fs::path& dat) {
  std::map<double, bool> points;
  std::istringstream in(read_text(dat));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    double x, y, low, high;
    if (fields >> x >> y >> low >> high) points[x] = low > 1;
  }
  return points;
}

TEST(ReportPaidOff, TextTablesCsvAndChartApplyTheSameRule) {
  const LoadedStudy study = in_memory_study(three_models());
  const StudyAnalysis a = analyze_study(study.configs);
  const Comparison& edge = comparison_of(a, "edge");
  // The case the rule settles: an interval above 1 that Welch's test does not call significant.
  ASSERT_GT(edge.speedup.speedup_ci.low, 1.0);
  ASSERT_GT(edge.speedup.p_value, 0.05);
  EXPECT_TRUE(edge.paid_off());
  EXPECT_TRUE(comparison_of(a, "clear").paid_off());
  EXPECT_FALSE(comparison_of(a, "flat").paid_off());

  TempDir dir;
  ReportOptions options;
  options.out_dir = (dir.path() / "report").string();
  options.plots = gnuplot_on_path();
  write_report(study, a, options);
  const std::string md = read_text(dir.path() / "report" / "report.md");
  EXPECT_TRUE(contains(md, "2 ranks paid off (the speedup's whole 95% interval above 1) in 2 of 3 comparisons")) << md;
  EXPECT_EQ(count_of(md, "the speedup's whole 95% interval above 1"), 1u) << "the rule is stated once";
  const Csv csv(read_text(dir.path() / "report" / "summary.csv"));
  int yes_cells = 0;
  for (const char* model : {"clear", "edge", "flat"}) {
    SCOPED_TRACE(model);
    const Comparison& c = comparison_of(a, model);
    EXPECT_EQ(table_interval_above_one(md, model), c.paid_off());
    EXPECT_TRUE(contains(md, "**" + std::string(model) + "** (")) << md;
    EXPECT_TRUE(contains(md, "paid off in " + std::string(c.paid_off() ? "1" : "0") + " of 1 configurations")) << md;
    EXPECT_EQ(csv.cell(a.configs[c.n_gpu].id, "paid_off"), c.paid_off() ? "true" : "false");
    yes_cells += c.paid_off();
  }
  EXPECT_EQ(count_of(md, "**yes** "), static_cast<size_t>(yes_cells)) << "the pays-off matrix";
  if (!options.plots) GTEST_SKIP() << "gnuplot not on PATH: the chart is not drawn (Debian: gnuplot-nox)";
  const std::map<double, bool> chart = chart_low_above_one(dir.path() / "report" / "plots" / "answer_speedup.dat");
  ASSERT_EQ(chart.size(), 3u);
  for (const char* model : {"clear", "edge", "flat"}) {
    const Comparison& c = comparison_of(a, model);
    EXPECT_EQ(chart.at(static_cast<double>(a.configs[c.n_gpu].params.parameters)), c.paid_off()) << model;
  }
}

}  // namespace
}  // namespace ddpscale
