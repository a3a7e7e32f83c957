// Stored text in the report: escaped in HTML and in Markdown outside code blocks, pipes
// escaped in Markdown table cells, commas and quotes quoted in summary.csv.
#include "tests/report_test_helpers.hpp"
#include "tests/sample_records.hpp"
#include "tests/temp_dir.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace ddpscale {
namespace {

using namespace report_test;

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
  // A GPU study: its report shows the GPUs, their link and the NCCL variables.
  for (ConfigRecord* c : {&one, &two}) c->params.device = "cuda";
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

}  // namespace
}  // namespace ddpscale
