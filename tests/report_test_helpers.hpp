// What the report tests share (tests/test_report_*.cpp and the others built into
// test_report, see tests/report_tests.cmake): synthetic configurations with known
// throughputs and phase times, a study held in memory, the report written without plots,
// and readers for what it wrote (text, lines, an RFC 4180 CSV reader).
//
// Expected values are worked out by hand next to each check, or (Welch p-values) were
// computed once outside this code with scipy 1.10.1 (Debian python3-scipy):
//   scipy.stats.ttest_ind(n_rank, one_rank, equal_var=False).pvalue
#pragma once
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_writer.hpp"
#include "results/report/summary_export.hpp"
#include "results/store/csv_text.hpp"
#include "results/store/run_record.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace ddpscale::report_test {

namespace fs = std::filesystem;

inline constexpr int kSteps = 4;

// Step time of rank r at step s (the "step" phase); the other phases are 100 (p + 1) + s.
// The slowest rank is the last one, so a run's median step is 1000 + 15 + 5 (world - 1):
// the median over s = 0..3 of 1000 + 10 s + 5 (world - 1).
inline float phase_value(int phase, int rank, int step) {
  if (phase == static_cast<int>(Phase::step)) return 1000.0f + 10.0f * step + 5.0f * rank;
  return 100.0f * (phase + 1) + step;
}

// A configuration whose ok runs have exactly the given throughputs (samples/s).
inline ConfigRecord make_config(const std::string& model, int64_t parameters, int64_t batch_per_rank, int world,
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
inline void add_failed_run(ConfigRecord& c, const std::string& failure) {
  RunRecord run;
  run.index = static_cast<int>(c.runs.size());
  run.seed = 42 + c.runs.size();
  run.status = RunStatus::failed;
  run.failure = failure;
  c.runs.push_back(run);
  c.params.runs = static_cast<int>(c.runs.size());
}

inline size_t index_of(const StudyAnalysis& a, const std::string& id) {
  for (size_t i = 0; i < a.configs.size(); ++i)
    if (a.configs[i].id == id) return i;
  ADD_FAILURE() << "no configuration " << id;
  return a.configs.size();
}

// A whole file as bytes.
inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
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

// Whether a gnuplot is on PATH (the plots are written only where it is).
inline bool gnuplot_on_path() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((fs::path(dir) / "gnuplot").c_str(), X_OK) == 0) return true;
  return false;
}

// The configurations as one study loaded from "synthetic-study", with study.h5's metadata if given.
inline LoadedStudy in_memory_study(const std::vector<ConfigRecord>& configs,
                                   const std::optional<StudyMetadata>& meta = {}) {
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
inline std::string markdown_report(const LoadedStudy& study, const StudyAnalysis& analysis, const fs::path& out) {
  ReportOptions options;
  options.out_dir = out.string();
  options.plots = false;
  write_report(study, analysis, options);
  return read_text(out / "report.md");
}

// Throughputs (samples/s) of five runs on 1 rank and on 2 ranks: means 100 and 180, speedup
// 1.8; Welch p = 5.437303319663031e-09 (scipy, see the top of this file).
inline const std::vector<double> kOneRank = {100, 102, 98, 101, 99};
inline const std::vector<double> kTwoRanks = {180, 184, 176, 182, 178};

}  // namespace ddpscale::report_test
