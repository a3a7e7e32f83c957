// The report's section on the paired design (docs/methodology.md, "The paired speedup"): per
// comparison, the speedup from 1-rank and N-rank blocks taking turns inside each launch, the
// block length the host's timescale gave, and the checks that show the design honest (the
// A/A pairs, whose intervals must hold 1, and the solo check against the 1-rank runs).
// Apart from report_writer.cpp, which orders sections.
#pragma once
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_document.hpp"

#include <string>

namespace ddpscale {

// A/A and solo verdicts in words, for the table and the summary.
std::string aa_verdict(const PairedEstimate& estimate);    // "holds 1", "FAILS: excludes 1", "n/a"
std::string solo_verdict(const PairedEstimate& estimate);  // "level", "slower by 4.2% [2.1, 6.3]", ...

class PairedText {
 public:
  PairedText(const StudyAnalysis& analysis, ReportDocument& doc) : a_(analysis), doc_(doc) {}
  bool applies() const;  // some comparison was measured by the paired design
  void write_section();
  // For the executive summary: how many speedups the paired design measured, their median
  // half-width, and whether every check held; "" where none was measured.
  std::string summary_note(const std::string& section_ref) const;

 private:
  void checks_table();
  void timescale_paragraph();
  void launch_spread_paragraph();

  const StudyAnalysis& a_;
  ReportDocument& doc_;
};

}  // namespace ddpscale
