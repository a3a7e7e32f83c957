// `ddpscale predict`'s output: predict.md and predict.html (one document: the self-check,
// the predictions, the predicted break-even sizes, plots of speedup and efficiency against
// N), predict.csv (one row per prediction), validation.csv (one row per measured N-GPU
// configuration) and predict.json. The same blocks make the "Predicted scaling" section of
// `ddpscale report --predict`.
#pragma once
#include "prediction/scaling_prediction.hpp"
#include "results/report/report_document.hpp"
#include "results/report/report_plots.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ddpscale {

// Draws a plot and adds it to the document as a figure (or leaves it out, when plots are off).
using AddLinePlot = std::function<void(const LinePlot& plot, const std::string& caption)>;

// The prediction as document blocks, below a heading the caller writes; heading_level: the
// level of its own sub-headings (2 in predict.md, 3 inside the report's section).
void add_prediction_blocks(ReportDocument& doc, const ScalingPrediction& result, const PredictOptions& options,
                           const std::string& source, int heading_level, const AddLinePlot& add_plot);

// Per model, scaling and exec: predicted speedup, then efficiency, against the rank count N
// with 95% intervals, one line per batch through every N (a second topology of an N already
// on the line, 2x4 beside 1x8, gets its own line); with each plot its caption.
std::vector<std::pair<LinePlot, std::string>> prediction_plots(const ScalingPrediction& result);

std::string prediction_csv(const ScalingPrediction& result);
std::string validation_csv(const ScalingPrediction& result);
std::string prediction_json(const ScalingPrediction& result, const PredictOptions& options, const std::string& source);

struct PredictionFiles {
  std::vector<std::string> files;  // every file written, predict.md first
  std::string plots_note;          // empty when the plots were drawn; otherwise why not
};

// predict.md, predict.html and plots/ (with_plots and gnuplot at hand) into out_dir (created
// if missing). Throws std::runtime_error naming a file it cannot write.
PredictionFiles write_prediction(const ScalingPrediction& result, const PredictOptions& options,
                                 const std::string& source, const std::string& out_dir, bool with_plots = true);
// predict.csv, validation.csv and predict.json alone (beside a report's report.md).
std::vector<std::string> write_prediction_tables(const ScalingPrediction& result, const PredictOptions& options,
                                                 const std::string& source, const std::string& out_dir);

// "1x4" (nodes x GPUs per node) as the tables write a topology.
std::string topology_text(const Topology& topology);

}  // namespace ddpscale
