// The report's "Methodology and reproducibility" section: the runs per configuration, the
// builds that measured them, outliers, failed runs, the run order, the statistics used, the
// commands that made the study and the report, and where the plots are. Apart from
// report_writer.cpp, which orders the sections.
#pragma once
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_document.hpp"

#include <string>

namespace ddpscale {

class MethodologyText {
 public:
  // command_line: the report's own; the sections: how the prose refers to them ("section 2").
  MethodologyText(const LoadedStudy& study, const StudyAnalysis& analysis, ReportDocument& doc,
                  std::string command_line, std::string test_configuration_section, std::string results_section)
      : study_(study),
        a_(analysis),
        doc_(doc),
        command_line_(std::move(command_line)),
        test_configuration_section_(std::move(test_configuration_section)),
        results_section_(std::move(results_section)) {}

  // The section's body, below its heading; plots_note: why plots are missing ("" : drawn).
  void write_section(const std::string& plots_note);

 private:
  std::string builds_text() const;
  std::string run_order_text() const;

  const LoadedStudy& study_;
  const StudyAnalysis& a_;
  ReportDocument& doc_;
  std::string command_line_;
  std::string test_configuration_section_;
  std::string results_section_;
};

}  // namespace ddpscale
