// The report's parameter-threshold section: per group of rank count, execution mode and
// precision, the share of configurations that paid off per size range, the break-even fit
// (pooled and per model family), the pays-off matrix, the thresholds read off the
// measurements batch by batch, and the speedup plot; and the threshold sentences the
// executive summary repeats. Apart from report_writer.cpp, which orders the sections.
#pragma once
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_document.hpp"
#include "results/report/report_plots.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ddpscale {

// The parameter count stored with a model's configurations (0 when none is).
int64_t parameters_of(const StudyAnalysis& analysis, const std::string& model);

// One speedup as a plot point at x, its 95% interval as the error bar (none where the
// interval is not valid).
void add_speedup_point(PlotSeries& series, double x, const ConfigSpeedup& speedup);
// A series' points in ascending x, so the line is drawn left to right.
void sort_by_x(PlotSeries& series);

class ThresholdsText {
 public:
  using AddFigure = std::function<void(const LinePlot& plot, const std::string& caption)>;
  // own_section: how the prose refers to this section ("section 7").
  ThresholdsText(const StudyAnalysis& analysis, ReportDocument& doc, AddFigure add_figure, std::string own_section)
      : a_(analysis), doc_(doc), add_figure_(std::move(add_figure)), own_section_(std::move(own_section)) {}

  // The section's body, below its heading.
  void break_even_paragraphs(const ThresholdGroup& group);
  void write_section();
  void measured_threshold_sentence(const ThresholdGroup& group, const std::vector<MeasuredThreshold>& rows);

 private:
  const ConfigSummary& cfg(size_t i) const { return a_.configs[i]; }
  std::string break_even_sentence(const ThresholdGroup& group, const BreakEven& be) const;
  std::string break_even_verdict(const ThresholdGroup& group, const BreakEven& be, const std::string& family) const;
  std::string range_verdict(const ThresholdGroup& group, const std::string& family) const;
  void pays_off_matrix(const ThresholdGroup& group);
  void measured_threshold_table(const ThresholdGroup& group);
  void speedup_plot(const ThresholdGroup& group);

  const StudyAnalysis& a_;
  ReportDocument& doc_;
  AddFigure add_figure_;
  std::string own_section_;
};

}  // namespace ddpscale
