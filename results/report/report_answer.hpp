// The executive summary's opening: the answer to the question the study asks (do more
// GPUs pay off here, from what model size, under weak and under strong scaling) in a
// sentence or two, and one chart of speedup against parameter count per model family.
// Apart from report_writer.cpp, which orders the sections.
#pragma once
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_document.hpp"
#include "results/report/report_plots.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ddpscale {

// What "paid off" means, stated where the answer first uses it (thresholds.hpp, pays_off).
inline constexpr const char* kPaidOffRule = "the speedup's whole 95% interval above 1";

// The answer for one scaling mode ("weak" or "strong"), "" where the study compared none.
// Exposed for the tests: the wording is the report's contract with its reader.
std::string scaling_answer(const StudyAnalysis& analysis, const std::string& scaling);

class AnswerText {
 public:
  using AddFigure = std::function<void(const LinePlot& plot, const std::string& caption)>;
  AnswerText(const StudyAnalysis& analysis, ReportDocument& doc, AddFigure add_figure)
      : a_(analysis), doc_(doc), add_figure_(std::move(add_figure)) {}

  void write();

 private:
  void speedup_chart();

  const StudyAnalysis& a_;
  ReportDocument& doc_;
  AddFigure add_figure_;
};

}  // namespace ddpscale
