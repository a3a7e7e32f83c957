// The report's "Results per model" section: per model and setting, each N-rank
// configuration's throughput beside its 1-rank twin's, the speedup, its interval and its
// test; the configurations without a counterpart; and the throughput plot. Apart from
// report_writer.cpp, which orders the sections.
#pragma once
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_document.hpp"
#include "results/report/report_plots.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ddpscale {

// "GPUs" where any configuration ran on CUDA, else "CPU ranks": what the prose calls a rank.
std::string device_word(const StudyAnalysis& analysis);

// The model's comparisons by ddpscale's engine (PyTorch DDP's have a section of their own).
std::vector<const Comparison*> ddpscale_comparisons_of(const StudyAnalysis& analysis, const std::string& model);

class ResultsText {
 public:
  using AddFigure = std::function<void(const LinePlot& plot, const std::string& caption)>;
  ResultsText(const StudyAnalysis& analysis, ReportDocument& doc, AddFigure add_figure)
      : a_(analysis), doc_(doc), add_figure_(std::move(add_figure)) {}

  // The section's body, below its heading.
  void write_section();

 private:
  const ConfigSummary& cfg(size_t i) const { return a_.configs[i]; }
  ReportTable comparison_table(const std::vector<const Comparison*>& comparisons) const;
  void unmatched_rows(const std::string& model);
  void throughput_plot(const std::string& model);

  const StudyAnalysis& a_;
  ReportDocument& doc_;
  AddFigure add_figure_;
};

}  // namespace ddpscale
