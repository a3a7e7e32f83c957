// The report's host-drift section: every run's calibration on the study's time line (a
// plot), each comparison's two halves side by side with a flag where they ran at speeds
// more than kDriftThreshold apart, and the calibration note the executive summary's
// faster-than-linear caution carries. Apart from report_writer.cpp, which orders sections.
#pragma once
#include "results/analysis/host_drift.hpp"
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_document.hpp"
#include "results/report/report_plots.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ddpscale {

class DriftText {
 public:
  using AddFigure = std::function<void(const LinePlot& plot, const std::string& caption)>;
  DriftText(const StudyAnalysis& analysis, const std::vector<ConfigRecord>& configs, ReportDocument& doc,
            AddFigure add_figure);

  // The section's body, below its heading.
  void write_section();
  // For comparison i: "host calibration 1 → N rank(s): 812 → 640 us (21% apart, flagged)",
  // or "" where its halves carry no calibration.
  std::string calibration_note(size_t comparison) const;

 private:
  void timeline_plot(const std::vector<CalibrationPoint>& points);
  void halves_table();
  const DriftCheck* check_of(size_t comparison) const;

  const StudyAnalysis& a_;
  const std::vector<ConfigRecord>& configs_;
  ReportDocument& doc_;
  AddFigure add_figure_;
  std::vector<DriftCheck> checks_;
};

}  // namespace ddpscale
