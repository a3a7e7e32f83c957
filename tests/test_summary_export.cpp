// summary.csv and summary.json (summary_export): RFC 4180 fields, a fixed header with one row
// per configuration, empty cells and JSON null where there is no number.
#include "results/report/summary_export.hpp"
#include "results/store/csv_text.hpp"
#include "tests/report_test_helpers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace ddpscale {
namespace {

using namespace report_test;

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

TEST(SummaryExport, CsvFieldAlwaysQuotedReadsBackTheSame) {
  EXPECT_EQ(csv_field("adam", CsvQuoting::always), "\"adam\"");
  EXPECT_EQ(csv_field("", CsvQuoting::always), "\"\"");
  EXPECT_EQ(csv_field("gemm<float, 2>(\"x\")", CsvQuoting::always), "\"gemm<float, 2>(\"\"x\"\")\"");
  EXPECT_EQ(parse_csv(csv_field("a,b", CsvQuoting::always) + "," + csv_field("c", CsvQuoting::always) + "\n"),
            (std::vector<std::vector<std::string>>{{"a,b", "c"}}));
}

TEST(SummaryExport, CsvHasOneRowPerConfigurationAndAFixedHeader) {
  const ConfigRecord one = make_config("mlp", 1000, 32, 1, kOneRank);
  const ConfigRecord two = make_config("mlp", 1000, 32, 2, kTwoRanks);
  const ConfigRecord four = make_config("mlp", 1000, 64, 4, {300, 310, 305});
  const StudyAnalysis a = analyze_study({one, two, four});
  const Csv csv(summary_csv(a));
  ASSERT_EQ(csv.rows.size(), 3u);
  // 25 identifying and counting columns, 8 summaries (samples/s and 7 phases) of 8 columns
  // (n, mean, sd, ci95_low, ci95_high, median, q1, q3), memory, utilisation and GPU busy, and
  // the comparison's speedup, its CI, efficiency, welch_p and paid_off: 25 + 64 + 3 + 6; then
  // the paired design's: whether it measured the speedup, its pairs and block steps, and the
  // A/A (1 rank, N ranks) and solo (1 rank, N ranks) ratios with their CIs: 3 + 4 x 3.
  EXPECT_EQ(csv.header.size(), 115u);
  EXPECT_EQ(csv.header.front(), "id");
  EXPECT_EQ(csv.header[99], "paid_off");
  EXPECT_EQ(csv.header[100], "speedup_paired");
  EXPECT_EQ(csv.header.back(), "solo_check_n_ranks_ci95_high");
  for (const auto& row : csv.rows) EXPECT_EQ(row.size(), csv.header.size()) << row[0];
  for (const char* name : {"model", "world_size", "allreduce_dtype", "engine", "runs_failed", "success_rate", "outliers_removed", "samples_per_s_mean",
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

}  // namespace
}  // namespace ddpscale
