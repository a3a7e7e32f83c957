#include "results/report/report_methodology.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace ddpscale {

// "commit (N configurations, finished FIRST to LAST)" per build, in order of first finish:
// a study continued with --resume may have been measured by several builds.
std::string MethodologyText::builds_text() const {
  struct Build {
    size_t configs = 0;
    std::string first, last;
  };
  std::map<std::string, Build> builds;
  size_t unrecorded = 0;
  for (const ConfigRecord& record : study_.configs) {
    if (record.git_commit.empty()) {
      ++unrecorded;
      continue;
    }
    Build& b = builds[record.git_commit];
    ++b.configs;
    if (b.first.empty() || record.finished_utc < b.first) b.first = record.finished_utc;
    if (record.finished_utc > b.last) b.last = record.finished_utc;
  }
  std::vector<std::pair<std::string, Build>> ordered(builds.begin(), builds.end());
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
  std::string text;
  for (const auto& [commit, b] : ordered) {
    text += (text.empty() ? "" : "; ") + commit + " (" + std::to_string(b.configs) +
            (b.configs == 1 ? " configuration" : " configurations");
    if (!b.first.empty()) text += ", finished " + (b.first == b.last ? b.first : b.first + " to " + b.last);
    text += ")";
  }
  if (unrecorded > 0)
    text += (text.empty() ? "" : "; ") + std::string("not recorded for ") + std::to_string(unrecorded) +
            (unrecorded == 1 ? " configuration" : " configurations") + " (files written before the build was stored "
            "per configuration; the study's own commit is in " + test_configuration_section_ + ")";
  return text;
}

// How the halves of the speedups ran, from the runs' start times (config_summary.hpp).
std::string MethodologyText::run_order_text() const {
  size_t interleaved = 0, apart = 0, unknown = 0;
  for (const Comparison& c : a_.comparisons) {
    switch (run_order(a_.configs[c.one_gpu], a_.configs[c.n_gpu])) {
      case RunOrder::interleaved: ++interleaved; break;
      case RunOrder::one_after_the_other: ++apart; break;
      case RunOrder::unknown: ++unknown; break;
    }
  }
  if (a_.comparisons.empty()) return "no N-GPU configuration with a 1-GPU twin";
  std::string text = "of " + std::to_string(a_.comparisons.size()) + " comparisons, " + std::to_string(interleaved) +
                     " ran their 1-GPU and N-GPU runs interleaved (A B B A, the sweep's default), " +
                     std::to_string(apart) + " one configuration after the other";
  if (unknown > 0) text += ", " + std::to_string(unknown) + " without stored start times";
  return text;
}

void MethodologyText::write_section(const std::string& plots_note) {
  std::set<std::string> plans;
  size_t outliers = 0, failed = 0;
  std::vector<std::string> failures;
  for (const ConfigSummary& c : a_.configs) {
    plans.insert(std::to_string(c.params.runs) + " runs x (" + std::to_string(c.params.warmup_steps) +
                 " warm-up + " + std::to_string(c.params.measured_steps) + " measured steps)");
    outliers += c.outliers_removed;
    failed += c.runs_failed;
    for (const std::string& f : c.failures) failures.push_back(c.id + ": " + f);
  }
  std::string plan_text;
  for (const auto& p : plans) plan_text += (plan_text.empty() ? "" : "; ") + p;
  doc_.bullets({
      "Runs per configuration: " + plan_text + "; run k's data and dropout come from seed + k (initial "
          "parameters: docs/methodology.md, \"What one run is\").",
      "Builds that measured the configurations: " + builds_text() + ".",
      "Outliers: modified Z-score (Iglewicz and Hoaglin) of run throughputs above 3.5 removed: " +
          std::to_string(outliers) + " runs in all, counted per configuration in " + results_section_ + ".",
      "Failed runs (excluded, counted): " + std::to_string(failed) + ".",
      "Run order: " + run_order_text() + ".",
      "Means with 95% Student-t intervals; medians and quartiles (R type 7) in summary.csv.",
      "Speedup: ratio of mean throughputs, 95% percentile bootstrap (10,000 resamples of each group, fixed seed "
      "20240917); efficiency = speedup / ranks; p: Welch's two-tailed t-test.",
      "Break-even: least squares of speedup on log10 parameters, crossing 1.0; 95% bootstrap over configurations.",
      "Details and reasons: docs/methodology.md."});
  if (!failures.empty()) {
    doc_.paragraph("Failed runs:");
    if (failures.size() > 50) {
      const size_t more = failures.size() - 50;
      failures.resize(50);
      failures.push_back("... and " + std::to_string(more) + " more (summary.json lists all)");
    }
    doc_.bullets(failures);
  }
  std::string commands;
  for (const StudySource& source : study_.sources)
    if (source.metadata && !source.metadata->command_line.empty())
      commands += source.metadata->command_line + "\n";
  commands += command_line_ + "\n";
  doc_.paragraph("Commands that produced the study and this report:");
  doc_.preformatted(commands);
  if (!study_.skipped.empty()) {
    doc_.paragraph("Inputs skipped (--skip-bad):");
    doc_.bullets(study_.skipped);
  }
  doc_.paragraph(plots_note.empty() ? "Plots: gnuplot, data and scripts beside the images in plots/."
                                     : "Plots: " + plots_note + ".");
}

}  // namespace ddpscale
