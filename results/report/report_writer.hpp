// `ddpscale report`: a study's HDF5 runs turned into report.md, report.html, plots (SVG,
// PNG) and summary.csv / summary.json. Every number comes from the analysis
// (study_analysis.hpp); a number that cannot be formed is printed as "n/a".
#pragma once
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_document.hpp"
#include "results/report/report_format.hpp"  // group_thousands, format_number
#include "results/report/report_plots.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ddpscale {

// What the report says about a model's architecture; the model registry lives outside
// results/ (it needs LibTorch), so the caller supplies it. Empty layers: unknown.
struct ModelArchitecture {
  std::string layers;
};
using DescribeModel = std::function<ModelArchitecture(const std::string& model, int64_t parameters)>;

// A section composed outside results/ (the CLI's "Predicted scaling", from prediction/, which
// results/ must not depend on): written after the report's own sections, numbered on.
struct ExtraSection {
  using AddFigure = std::function<void(const LinePlot& plot, const std::string& caption)>;
  std::string title;
  // Everything below the heading; add_figure draws into the report's plots/ (or does
  // nothing, with --no-plots or without gnuplot) and adds the figure.
  std::function<void(ReportDocument& doc, const AddFigure& add_figure)> write;
  // Where the study measured no speedup (no N-rank configuration with its 1-rank twin), what
  // this section offers instead, for the executive summary to point to ("" : nothing).
  std::string instead_of_measured_speedups;
};

struct ReportOptions {
  std::string out_dir;
  std::vector<std::string> inputs;         // as given, for the reproducibility section
  std::string command_line;                // the report's own command line
  double price_per_gpu_hour = kNaN;        // NaN: no cost section numbers
  bool plots = true;                       // false: tables only (--no-plots)
  DescribeModel describe_model;            // may be empty
  std::vector<ExtraSection> extra_sections;  // after the report's own
};

struct ReportResult {
  std::vector<std::string> files;  // every file written, report.md first
  std::string plots_note;          // empty when the plots were drawn; otherwise why not
};

// The spec's `name:` ("seed-study"), which titles its report; "" where the spec has none.
std::string spec_name(const std::string& spec_text);

// Writes the report into options.out_dir (created if missing). Throws std::runtime_error
// naming the file on a write error.
ReportResult write_report(const LoadedStudy& study, const StudyAnalysis& analysis, const ReportOptions& options);

}  // namespace ddpscale
