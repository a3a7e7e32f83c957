// The report's "Where the time goes" section: per model, each configuration's time per step
// by phase (data, forward, backward, allreduce total and exposed, optimizer, step), how much
// of the allreduce the overlap hid, how CPU ranks shared the host's cores, the bars of the
// phases, and eager steps beside the same configurations run as one CUDA graph. Apart from
// report_writer.cpp, which orders the sections.
#pragma once
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_document.hpp"
#include "results/report/report_plots.hpp"

#include <functional>
#include <string>

namespace ddpscale {

// A phase's time per step in ms ("mean ± half-width"), or why there is none: "not split" in
// a step run as one CUDA graph, "none" for one rank's allreduce.
std::string phase_cell(const ConfigSummary& c, Phase p);

class TimeBreakdownText {
 public:
  using AddBars = std::function<void(const StackedBarPlot& plot, const std::string& caption)>;
  TimeBreakdownText(const StudyAnalysis& analysis, ReportDocument& doc, AddBars add_bars)
      : a_(analysis), doc_(doc), add_bars_(std::move(add_bars)) {}

  // The section's body, below its heading.
  void write_section();

 private:
  void cpu_cores_of(const std::string& model);
  void eager_against_graph();
  void add_bar(StackedBarPlot& bars, const ConfigSummary& c) const;

  const StudyAnalysis& a_;
  ReportDocument& doc_;
  AddBars add_bars_;
};

}  // namespace ddpscale
