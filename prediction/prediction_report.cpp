#include "prediction/prediction_report.hpp"

#include "results/report/report_format.hpp"
#include "results/store/csv_text.hpp"
#include "results/store/text_io.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>

namespace ddpscale {
namespace {

std::string fixed(double value, int digits) {
  if (!std::isfinite(value)) return "n/a";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string with_interval(const PredictedValue& v, int digits) {
  return fixed(v.point, digits) + " [" + fixed(v.interval95.low, digits) + ", " + fixed(v.interval95.high, digits) + "]";
}

// One decimal, as the self-check line prints it (report_format's percent() keeps three digits).
std::string percent_one_decimal(double fraction) { return fixed(100 * fraction, 1) + "%"; }

std::string csv_number(double value) { return std::isfinite(value) ? round_trip_text(value) : ""; }

// How a prediction's buckets became ready, as predict.csv and predict.json say it.
std::string bucket_ready_text(const Prediction& p) { return p.recorded_gradient_timing ? "recorded" : "even_stream"; }

nlohmann::ordered_json value_json(const PredictedValue& v) {
  return {{"point", v.point}, {"low", v.interval95.low}, {"high", v.interval95.high}};
}

nlohmann::ordered_json prediction_object(const Prediction& p) {
  return {{"model", p.model},
          {"parameters", p.parameters},
          {"scaling", p.scaling},
          {"exec", p.exec},
          {"nodes", p.topology.nodes},
          {"gpus_per_node", p.topology.gpus_per_node},
          {"batch_per_rank", p.batch_per_rank},
          {"global_batch", p.global_batch},
          {"algorithm", p.algorithm},
          {"allreduce_total_us", p.allreduce_total_us},
          {"allreduce_exposed_us", p.allreduce_exposed_us},
          {"calibrated", p.calibrated},
          {"bucket_ready", bucket_ready_text(p)},
          {"step_us", value_json(p.step_us)},
          {"throughput", value_json(p.throughput)},
          {"speedup", value_json(p.speedup)},
          {"efficiency", value_json(p.efficiency)}};
}

// Per model family, scaling, exec, batch and topology: the smallest model from which every
// larger one is predicted to pay off (speedup interval above 1), as the report's measured
// thresholds are read (results/analysis/thresholds.hpp), and the largest that is not.
ReportTable break_even_table(const std::vector<Prediction>& predictions) {
  std::map<std::string, std::vector<const Prediction*>> groups;
  for (const Prediction& p : predictions) {
    const std::string family = p.model.substr(0, p.model.find_first_of("@-"));
    groups[family + "|" + p.scaling + "|" + p.exec + "|" + std::to_string(p.batch_per_rank) + "|" +
           topology_text(p.topology)]
        .push_back(&p);
  }
  ReportTable table;
  table.header = {"family", "scaling", "exec", "batch/GPU", "nodes x GPUs", "pays off from", "largest that does not"};
  table.right_aligned = {false, false, false, true, true, false, false};
  auto named = [](const Prediction* p) { return p ? p->model + " (" + std::to_string(p->parameters) + ")" : "none"; };
  for (auto& [key, group] : groups) {
    std::sort(group.begin(), group.end(), [](const Prediction* a, const Prediction* b) { return a->parameters < b->parameters; });
    const Prediction* from = nullptr;
    const Prediction* largest_not = nullptr;
    for (auto it = group.rbegin(); it != group.rend(); ++it) {
      if ((*it)->speedup.interval95.low > 1) {
        if (!largest_not) from = *it;
      } else if (!largest_not) {
        largest_not = *it;
      }
    }
    const Prediction& first = *group.front();
    table.rows.push_back({first.model.substr(0, first.model.find_first_of("@-")), first.scaling, first.exec,
                          std::to_string(first.batch_per_rank), topology_text(first.topology), named(from),
                          named(largest_not)});
  }
  return table;
}

const char* covered_text(bool covered) { return covered ? "yes" : "**no**"; }

// Leave one model out: what the calibration is worth for a model never run on N GPUs.
std::string other_models_sentence(const ValidationSummary& s) {
  if (s.other_models_configurations == 0)
    return "**Other models only** (leave one model out): not made, the study measured one model on N GPUs.";
  return "**Other models only** (calibrated by the other models' N-GPU configurations alone, leave one model out, "
         "as a model the study never ran on N GPUs would be): median absolute error " +
         percent_one_decimal(s.other_models_median_abs_error) + ", coverage " +
         percent_one_decimal(s.other_models_coverage) + " of " + std::to_string(s.other_models_configurations) +
         " configurations.";
}

// Which allreduce curve the predictions rest on, and the approximation that carries it from
// the GPUs it was measured on to other counts.
std::string allreduce_curve_sentence(const ScalingPrediction& result) {
  const bool other_counts = std::any_of(result.predictions.begin(), result.predictions.end(), [&](const Prediction& p) {
    return p.topology.ranks() != result.allreduce_curve_ranks;
  });
  std::string text = "Allreduce curve: " + result.allreduce_curve + ".";
  if (other_counts)
    text += " Carried from its " + std::to_string(result.allreduce_curve_ranks) +
            " GPUs to other counts as a ring with the bus bandwidth held constant (busbw = algbw x 2(N-1)/N, "
            "nccl-tests' conversion; the latency grows with the ring's 2(N-1) steps): an approximation, which "
            "assumes the same link between every pair of GPUs at every N (an NVSwitch node, not a PCIe tree) and "
            "does not model the algorithms NCCL may choose at larger N (tree, NVLink SHARP).";
  return text;
}

// The measured speedup, "(paired)" where the paired design measured it.
std::string measured_speedup_text(const ValidationRow& row) {
  return fixed(row.measured_speedup, 2) + (row.measured_paired ? " (paired)" : "");
}

// What the self-check's errors and "in" are taken against.
constexpr const char* kCheckedAgainst =
    " Errors and \"in\" are of the predicted speedup against the paired design's measured speedup where the "
    "study has one (the host's state cancels in it), else of the predicted mean throughput against the measured "
    "one.";

// The check a one-GPU user cannot make: each N-GPU configuration predicted from its 1-GPU
// twin with the named profile's curve and node-sharing cost alone.
void add_node_sharing_check(ReportDocument& doc, const ScalingPrediction& result) {
  const ValidationSummary& s = result.summary;
  if (s.node_sharing_configurations == 0) return;
  doc.paragraph("**The named profile's node sharing only** (each configuration from its 1-GPU twin, the named "
                "allreduce curve and the profile's measured cost of sharing a node, as a study of one GPU on this "
                "hardware is predicted): median absolute error " + percent_one_decimal(s.node_sharing_median_abs_error) +
                ", coverage " + percent_one_decimal(s.node_sharing_coverage) + " of " +
                std::to_string(s.node_sharing_configurations) + " configurations.");
  ReportTable table;
  table.header = {"configuration", "N", "measured samples/s", "measured speedup", "node sharing only", "speedup",
                  "error", "in"};
  table.right_aligned = {false, true, true, true, true, true, true, false};
  for (const ValidationRow& row : result.validation)
    if (row.node_sharing)
      table.rows.push_back({row.id, std::to_string(row.world_size), fixed(row.measured_throughput, 0),
                            measured_speedup_text(row), with_interval(row.node_sharing_calibrated.throughput, 0),
                            with_interval(row.node_sharing_calibrated.speedup, 2),
                            percent_one_decimal(row.node_sharing_error), covered_text(row.node_sharing_covered)});
  doc.table(table);
}

void add_validation_blocks(ReportDocument& doc, const ScalingPrediction& result, int level) {
  const ValidationSummary& s = result.summary;
  doc.heading("Self-check against the study's own measurements", level);
  if (s.configurations == 0) {
    doc.paragraph("The study has no N-GPU configuration with its 1-GPU twin: nothing to check the predictor against.");
    return;
  }
  doc.paragraph("Each measured N-GPU configuration predicted without its own runs. **Model only** (its 1-GPU twin and "
                "the allreduce curve): median absolute error " + percent_one_decimal(s.model_only_median_abs_error) +
                ", the measured mean inside the interval for " + percent_one_decimal(s.model_only_coverage) + " of " +
                std::to_string(s.configurations) + " configurations. **Calibrated** (also the model errors of the "
                "other N-GPU configurations, leave one out): median absolute error " +
                percent_one_decimal(s.calibrated_median_abs_error) + ", coverage " + percent_one_decimal(s.calibrated_coverage) +
                ". " + other_models_sentence(s) + kCheckedAgainst);
  ReportTable table;
  table.header = {"configuration", "N", "measured samples/s", "measured speedup", "model only", "error", "in",
                  "calibrated", "error", "in", "other models only", "error", "in"};
  table.right_aligned = {false, true, true, true, true, true, false, true, true, false, true, true, false};
  for (const ValidationRow& row : result.validation)
    table.rows.push_back({row.id, std::to_string(row.world_size), fixed(row.measured_throughput, 0),
                          measured_speedup_text(row),
                          with_interval(row.model_only.throughput, 0), percent_one_decimal(row.model_only_error),
                          covered_text(row.model_only_covered), with_interval(row.calibrated.throughput, 0),
                          percent_one_decimal(row.calibrated_error), covered_text(row.calibrated_covered),
                          row.other_models ? with_interval(row.other_models_calibrated.throughput, 0) : "n/a",
                          row.other_models ? percent_one_decimal(row.other_models_error) : "n/a",
                          row.other_models ? covered_text(row.other_models_covered) : "n/a"});
  doc.table(table);
  add_node_sharing_check(doc, result);
}

ReportTable predictions_table(const ScalingPrediction& result) {
  ReportTable table;
  table.header = {"model", "parameters", "scaling", "exec", "batch/GPU", "nodes x GPUs", "allreduce", "exposed us",
                  "step us", "samples/s", "speedup", "efficiency"};
  table.right_aligned = {false, true, false, false, true, true, false, true, true, true, true, true};
  for (const Prediction& p : result.predictions)
    table.rows.push_back({p.model, std::to_string(p.parameters), p.scaling, p.exec, std::to_string(p.batch_per_rank),
                          topology_text(p.topology), p.algorithm, fixed(p.allreduce_exposed_us, 1),
                          with_interval(p.step_us, 1), with_interval(p.throughput, 0), with_interval(p.speedup, 2),
                          with_interval(p.efficiency, 3)});
  return table;
}

// One line of a prediction plot per batch, through every N; a second topology of the same N
// (2x4 beside 1x8) gets a line of its own, named by its topology.
std::string series_label(const Prediction& p) { return "batch " + std::to_string(p.batch_per_rank) + "/GPU"; }

LinePlot against_ranks(const std::string& what, const std::string& group_name, const std::string& y_label) {
  LinePlot plot;
  plot.name = "predicted_" + what + "_" + safe_stem(group_name);
  plot.title = group_name + ": predicted " + what;
  plot.x_label = "GPUs (N)";
  plot.y_label = y_label;
  plot.log_x = true;
  plot.draw_reference_line = true;  // speedup 1: pays off above; efficiency 1: perfect scaling
  plot.reference_y = 1.0;
  return plot;
}

void add_point(PlotSeries& series, double ranks, const PredictedValue& value) {
  series.x.push_back(ranks);
  series.y.push_back(value.point);
  series.y_low.push_back(value.interval95.low);
  series.y_high.push_back(value.interval95.high);
}

// How the predictions placed the gradient buckets they overlap with backward.
std::string bucket_placement_text(const std::vector<Prediction>& predictions) {
  const auto recorded = static_cast<size_t>(std::count_if(
      predictions.begin(), predictions.end(), [](const Prediction& p) { return p.recorded_gradient_timing; }));
  const std::string placed = "placed as the reducer places them, each ready when its recorded gradients were";
  const std::string even = "cut from one even stream of gradients over backward (no per-layer timing recorded)";
  if (recorded == predictions.size()) return "Buckets: " + placed + ".";
  if (recorded == 0) return "Buckets: " + even + ".";
  return "Buckets: " + placed + " in " + std::to_string(recorded) + " of " + std::to_string(predictions.size()) +
         " predictions; the others " + even + ".";
}

}  // namespace

std::string topology_text(const Topology& topology) {
  return std::to_string(topology.nodes) + "x" + std::to_string(topology.gpus_per_node);
}

std::vector<std::pair<LinePlot, std::string>> prediction_plots(const ScalingPrediction& result) {
  // Groups and their lines in the order the predictions come (study order), points by N.
  std::vector<std::string> group_order;
  std::map<std::string, std::vector<std::string>> line_order;
  std::map<std::string, std::map<std::string, std::vector<const Prediction*>>> lines;
  for (const Prediction& p : result.predictions) {
    const std::string group = p.model + ", " + p.scaling + " scaling, " + p.exec;
    if (!lines.count(group)) group_order.push_back(group);
    auto& by_label = lines[group];
    std::string label = series_label(p);
    const auto& line = by_label[label];
    if (std::any_of(line.begin(), line.end(), [&](const Prediction* q) { return q->topology.ranks() == p.topology.ranks(); }))
      label += ", " + topology_text(p.topology);
    if (by_label[label].empty()) line_order[group].push_back(label);
    by_label[label].push_back(&p);
  }
  std::vector<std::pair<LinePlot, std::string>> plots;
  for (const std::string& group : group_order) {
    LinePlot speedup = against_ranks("speedup", group, "speedup over 1 GPU");
    LinePlot efficiency = against_ranks("efficiency", group, "efficiency (speedup / N)");
    for (const std::string& label : line_order[group]) {
      auto points = lines[group][label];
      std::stable_sort(points.begin(), points.end(),
                       [](const Prediction* a, const Prediction* b) { return a->topology.ranks() < b->topology.ranks(); });
      PlotSeries speedup_line{label, {}, {}, {}, {}}, efficiency_line{label, {}, {}, {}, {}};
      for (const Prediction* p : points) {
        add_point(speedup_line, p->topology.ranks(), p->speedup);
        add_point(efficiency_line, p->topology.ranks(), p->efficiency);
      }
      speedup.series.push_back(speedup_line);
      efficiency.series.push_back(efficiency_line);
    }
    plots.emplace_back(speedup, group + ": predicted speedup against N GPUs, 95% prediction intervals");
    plots.emplace_back(efficiency, group + ": predicted efficiency against N GPUs, 95% prediction intervals");
  }
  return plots;
}

void add_prediction_blocks(ReportDocument& doc, const ScalingPrediction& result, const PredictOptions& options,
                           const std::string& source, int heading_level, const AddLinePlot& add_plot) {
  doc.paragraph("From " + source + ". Every interval is a 95% prediction interval (docs/methodology.md, \"Predicted "
                "scaling\", says what it covers and what it does not).");
  for (const std::string& warning : result.warnings) doc.paragraph("**Warning:** " + warning + ".");
  if (!result.unreliable.empty())
    doc.paragraph("**Unreliable:** the predictions below failed their self-check (" + result.unreliable +
                  "). They are listed for inspection only, and no break-even verdict is drawn from them.");
  add_validation_blocks(doc, result, heading_level);
  doc.heading("Predictions", heading_level);
  doc.paragraph(allreduce_curve_sentence(result));
  doc.paragraph("Allreduce curve interpolation error (log sd): " + fixed(result.allreduce_log_sd, 3) + "; " +
                (result.calibration.empty() ? std::string("model only: the study measured no N-GPU configuration "
                                                          "and the allreduce curve carries no cost of sharing a node")
                                            : "calibrated by " + result.calibration) +
                (options.network.given() ? "; network between nodes: " + options.network.text : std::string()) + ".");
  doc.paragraph(bucket_placement_text(result.predictions));
  doc.table(predictions_table(result));
  if (add_plot) {
    for (const auto& [plot, caption] : prediction_plots(result)) add_plot(plot, caption);
  }
  doc.heading("Predicted break-even model size", heading_level);
  if (!result.unreliable.empty()) {
    doc.paragraph("Not drawn: the predictions failed their self-check, so whether a model pays off cannot be read "
                  "from them.");
  } else {
    doc.paragraph("Pays off: the whole speedup interval lies above 1. Per group, the smallest model from which every "
                  "larger one is predicted to pay off, and the largest that is not.");
    doc.table(break_even_table(result.predictions));
  }
  if (!result.notes.empty()) {
    doc.heading("Notes", heading_level);
    doc.bullets(result.notes);
  }
}

std::string prediction_csv(const ScalingPrediction& result) {
  std::ostringstream csv;
  csv << "model,parameters,scaling,exec,batch_per_rank,global_batch,nodes,gpus_per_node,algorithm,allreduce_total_us,"
         "allreduce_exposed_us,step_us,step_us_low,step_us_high,samples_per_s,samples_per_s_low,samples_per_s_high,"
         "speedup,speedup_low,speedup_high,efficiency,efficiency_low,efficiency_high,calibrated,bucket_ready\n";
  for (const Prediction& p : result.predictions) {
    csv << csv_field(p.model) << "," << p.parameters << "," << csv_field(p.scaling) << "," << csv_field(p.exec) << ","
        << p.batch_per_rank << "," << p.global_batch << "," << p.topology.nodes << "," << p.topology.gpus_per_node << ","
        << csv_field(p.algorithm) << ","
        << csv_number(p.allreduce_total_us) << "," << csv_number(p.allreduce_exposed_us);
    for (const PredictedValue* v : {&p.step_us, &p.throughput, &p.speedup, &p.efficiency})
      csv << "," << csv_number(v->point) << "," << csv_number(v->interval95.low) << "," << csv_number(v->interval95.high);
    csv << "," << (p.calibrated ? "true" : "false") << "," << bucket_ready_text(p) << "\n";
  }
  return csv.str();
}

// One self-check's five validation.csv columns: the predicted throughput, its interval, the
// error against the measured mean and whether the interval covers it, each after a comma.
std::string checked_columns(const Prediction& p, double error, bool covered) {
  return "," + csv_number(p.throughput.point) + "," + csv_number(p.throughput.interval95.low) + "," +
         csv_number(p.throughput.interval95.high) + "," + csv_number(error) + "," + (covered ? "true" : "false");
}

std::string validation_csv(const ScalingPrediction& result) {
  std::ostringstream csv;
  csv << "id,model,exec,parameters,batch_per_rank,world_size,measured_samples_per_s,model_only,model_only_low,"
         "model_only_high,model_only_error,model_only_covered,calibrated,calibrated_low,calibrated_high,"
         "calibrated_error,calibrated_covered,other_models,other_models_low,other_models_high,other_models_error,"
         "other_models_covered,node_sharing,node_sharing_low,node_sharing_high,node_sharing_error,"
         "node_sharing_covered,measured_speedup,measured_speedup_paired,node_sharing_speedup,"
         "node_sharing_speedup_low,node_sharing_speedup_high\n";
  for (const ValidationRow& r : result.validation) {
    csv << csv_field(r.id) << "," << csv_field(r.model) << "," << csv_field(r.exec) << "," << r.parameters << "," << r.batch_per_rank << ","
        << r.world_size << "," << csv_number(r.measured_throughput)
        << checked_columns(r.model_only, r.model_only_error, r.model_only_covered)
        << checked_columns(r.calibrated, r.calibrated_error, r.calibrated_covered)
        << (r.other_models ? checked_columns(r.other_models_calibrated, r.other_models_error, r.other_models_covered)
                           : ",,,,,")
        << (r.node_sharing ? checked_columns(r.node_sharing_calibrated, r.node_sharing_error, r.node_sharing_covered)
                           : ",,,,,")
        << "," << csv_number(r.measured_speedup) << "," << (r.measured_paired ? "true" : "false")
        << (r.node_sharing ? "," + csv_number(r.node_sharing_calibrated.speedup.point) + "," +
                                 csv_number(r.node_sharing_calibrated.speedup.interval95.low) + "," +
                                 csv_number(r.node_sharing_calibrated.speedup.interval95.high)
                           : std::string(",,,"))
        << "\n";
  }
  return csv.str();
}

std::string prediction_json(const ScalingPrediction& result, const PredictOptions& options, const std::string& source) {
  const ValidationSummary& summary = result.summary;
  nlohmann::ordered_json json = {
      {"source", source},
      {"network", options.network.text},
      {"allreduce_log_sd", result.allreduce_log_sd},
      {"allreduce_curve", result.allreduce_curve},
      {"allreduce_curve_gpus", result.allreduce_curve_ranks},
      {"validation_summary",
       {{"configurations", static_cast<int64_t>(summary.configurations)},
        {"model_only_median_abs_error", summary.model_only_median_abs_error},
        {"model_only_coverage", summary.model_only_coverage},
        {"calibrated_median_abs_error", summary.calibrated_median_abs_error},
        {"calibrated_coverage", summary.calibrated_coverage},
        {"other_models_configurations", static_cast<int64_t>(summary.other_models_configurations)},
        {"other_models_median_abs_error", summary.other_models_median_abs_error},
        {"other_models_coverage", summary.other_models_coverage},
        {"node_sharing_configurations", static_cast<int64_t>(summary.node_sharing_configurations)},
        {"node_sharing_median_abs_error", summary.node_sharing_median_abs_error},
        {"node_sharing_coverage", summary.node_sharing_coverage}}},
      {"calibration", result.calibration}};
  // The named profile's cost per GPU count a node: measured there, or carried (and how).
  nlohmann::ordered_json& used = json["node_sharing_used"] = nlohmann::ordered_json::array();
  for (const NodeSharingAtN& at : result.node_sharing_used)
    used.push_back({{"gpus_per_node", at.gpus}, {"measured", at.measured}, {"how", at.how},
                    {"median_step_error", median(at.step_errors)}, {"model_sd", at.model_sd}});
  nlohmann::ordered_json& predictions = json["predictions"] = nlohmann::ordered_json::array();
  for (const Prediction& p : result.predictions) predictions.push_back(prediction_object(p));
  nlohmann::ordered_json& validation = json["validation"] = nlohmann::ordered_json::array();
  for (const ValidationRow& r : result.validation) {
    nlohmann::ordered_json row = {{"id", r.id},
                                  {"measured_samples_per_s", r.measured_throughput},
                                  {"measured_speedup", r.measured_speedup},
                                  {"measured_speedup_paired", r.measured_paired},
                                  {"model_only_error", r.model_only_error},
                                  {"model_only_covered", r.model_only_covered},
                                  {"calibrated_error", r.calibrated_error},
                                  {"calibrated_covered", r.calibrated_covered}};
    if (r.other_models) {
      row["other_models_error"] = r.other_models_error;
      row["other_models_covered"] = r.other_models_covered;
    }
    if (r.node_sharing) {
      row["node_sharing_error"] = r.node_sharing_error;
      row["node_sharing_covered"] = r.node_sharing_covered;
    }
    row["model_only"] = prediction_object(r.model_only);
    row["calibrated"] = prediction_object(r.calibrated);
    validation.push_back(std::move(row));
  }
  json["notes"] = result.notes;
  json["warnings"] = result.warnings;
  json["unreliable"] = result.unreliable;
  return json_text(json) + "\n";
}

std::vector<std::string> write_prediction_tables(const ScalingPrediction& result, const PredictOptions& options,
                                                 const std::string& source, const std::string& out_dir) {
  std::filesystem::create_directories(out_dir);
  std::vector<std::string> files;
  const auto out = [&](const char* name, const std::string& text) {
    files.push_back((std::filesystem::path(out_dir) / name).string());
    write_whole_file(files.back(), text);
  };
  out("predict.csv", prediction_csv(result));
  out("validation.csv", validation_csv(result));
  out("predict.json", prediction_json(result, options, source));
  if (result.measured_node_sharing.given()) {
    NodeSharingProfile costs = result.measured_node_sharing;
    for (NodeSharingCost& cost : costs.costs)
      cost.source = "`ddpscale predict " + source + "` with the allreduce curve " + result.allreduce_curve;
    out("node-sharing.yaml", "# This study's cost of sharing a node, for the entry of its machine in an interconnects "
                             "file\n# (experiments/interconnects.yaml shows the form; --interconnects FILE).\n" +
                                 node_sharing_yaml(costs));
  }
  return files;
}

PredictionFiles write_prediction(const ScalingPrediction& result, const PredictOptions& options,
                                 const std::string& source, const std::string& out_dir, bool with_plots) {
  std::filesystem::create_directories(out_dir);
  PredictionFiles written;
  std::optional<Plotter> plotter;
  if (!with_plots) {
    written.plots_note = "plots were not asked for (--no-plots)";
  } else {
    plotter.emplace((std::filesystem::path(out_dir) / "plots").string());
    if (!plotter->available()) written.plots_note = "plots skipped: " + plotter->unavailable_reason();
  }
  ReportDocument doc;
  doc.title = "Predicted scaling";
  std::vector<std::string> plot_files;
  // As the report draws its figures: a failing gnuplot stops the plots, not the tables.
  const AddLinePlot add_plot = [&](const LinePlot& plot, const std::string& caption) {
    if (!written.plots_note.empty()) return;
    try {
      const PlotFiles files = plotter->draw(plot);
      if (!files.drawn()) return;
      doc.figure(figure_of(files, caption));
      plot_files.insert(plot_files.end(), {files.svg, files.png});
    } catch (const std::exception& e) {
      written.plots_note = std::string("plots stopped: ") + e.what();
    }
  };
  add_prediction_blocks(doc, result, options, source, 2, add_plot);
  if (!written.plots_note.empty()) doc.paragraph("Plots: " + written.plots_note + ".");
  const auto out = [&](const char* name, const std::string& text) {
    written.files.push_back((std::filesystem::path(out_dir) / name).string());
    write_whole_file(written.files.back(), text);
  };
  out("predict.md", render_markdown(doc));
  out("predict.html", render_html(doc));
  const auto tables = write_prediction_tables(result, options, source, out_dir);
  written.files.insert(written.files.end(), tables.begin(), tables.end());
  written.files.insert(written.files.end(), plot_files.begin(), plot_files.end());
  return written;
}

}  // namespace ddpscale
