// The whole report written from a study on disk: every file, the nine sections in order, the
// plots (where gnuplot is on PATH) embedded in report.html, and the tables still written
// without gnuplot.
#include "results/store/run_store.hpp"
#include "tests/report_test_helpers.hpp"
#include "tests/sample_records.hpp"
#include "tests/temp_dir.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace ddpscale {
namespace {

using namespace report_test;

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
    // CPU ranks and one NCCL profile: no "NCCL profiles compared"; the price gives "Cost".
    for (const char* heading : {"## 1. Executive summary\n", "## 2. Test configuration\n", "## 3. Model specifications\n",
                                "## 4. Results per model\n", "## 5. Host drift\n", "## 6. Launches and speed levels\n",
                                "## 7. Where the time goes\n", "## 8. Parameter-threshold analysis\n", "## 9. Cost\n",
                                "## 10. Methodology and reproducibility\n"}) {
      const size_t at = md.find(heading);
      ASSERT_NE(at, std::string::npos) << heading;
      EXPECT_GT(at, last) << heading << " out of order";
      last = at;
    }
    // Section 2 from study.h5, section 3 from the parameters, section 9 from the price:
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
  // The answer's chart, throughput and phases per model, speedup against parameters for 2 ranks.
  for (const char* stem : {"answer_speedup", "throughput_mlp-small", "throughput_mlp-big", "phases_mlp-small",
                           "phases_mlp-big", "speedup_vs_parameters_w2"}) {
    const fs::path png = fs::path(out) / "plots" / (std::string(stem) + ".png");
    const fs::path svg = fs::path(out) / "plots" / (std::string(stem) + ".svg");
    ASSERT_TRUE(fs::is_regular_file(png)) << png;
    ASSERT_TRUE(fs::is_regular_file(svg)) << svg;
    EXPECT_EQ(read_text(png).substr(0, 8), "\x89PNG\r\n\x1a\n") << png;
    EXPECT_TRUE(contains(read_text(svg), "<svg")) << svg;
    EXPECT_EQ(std::count(result.files.begin(), result.files.end(), png.string()), 1) << png;
  }
  const std::string html = read_text(fs::path(out) / "report.html");
  EXPECT_EQ(count_of(html, "src=\"data:image/png;base64,"), 6u);
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
