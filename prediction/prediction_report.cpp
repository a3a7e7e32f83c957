#include "prediction_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "json_writer.hpp"
#include "text_io.hpp"

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

std::string percent(double fraction) { return fixed(100 * fraction, 1) + "%"; }

std::string csv_number(double value) { return std::isfinite(value) ? round_trip_text(value) : ""; }

void write_value(JsonWriter& json, const std::string& name, const PredictedValue& v) {
  json.key(name).begin_object().field("point", v.point).field("low", v.interval95.low).field("high", v.interval95.high);
  json.end_object();
}

void write_prediction_object(JsonWriter& json, const Prediction& p) {
  json.begin_object()
      .field("model", p.model)
      .field("parameters", p.parameters)
      .field("scaling", p.scaling)
      .field("exec", p.exec)
      .field("nodes", p.topology.nodes)
      .field("gpus_per_node", p.topology.gpus_per_node)
      .field("batch_per_rank", p.batch_per_rank)
      .field("global_batch", p.global_batch)
      .field("algorithm", p.algorithm)
      .field("allreduce_total_us", p.allreduce_total_us)
      .field("allreduce_exposed_us", p.allreduce_exposed_us)
      .field("calibrated", p.calibrated);
  write_value(json, "step_us", p.step_us);
  write_value(json, "throughput", p.throughput);
  write_value(json, "speedup", p.speedup);
  write_value(json, "efficiency", p.efficiency);
  json.end_object();
}

// Per model family, scaling, exec, batch and topology: the smallest model from which every
// larger one is predicted to pay off (speedup interval above 1), as the report's measured
// thresholds are read (results/thresholds.hpp), and the largest that is not.
std::string break_even_table(const std::vector<Prediction>& predictions) {
  std::map<std::string, std::vector<const Prediction*>> groups;
  for (const Prediction& p : predictions) {
    const std::string family = p.model.substr(0, p.model.find_first_of("@-"));
    groups[family + " | " + p.scaling + " | " + p.exec + " | " + std::to_string(p.batch_per_rank) + " | " +
           topology_text(p.topology)]
        .push_back(&p);
  }
  std::ostringstream md;
  md << "| family | scaling | exec | batch/GPU | nodes x GPUs | pays off from | largest that does not |\n"
     << "|---|---|---|---:|---:|---|---|\n";
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
    md << "| " << key << " | " << (from ? from->model + " (" + std::to_string(from->parameters) + ")" : "none") << " | "
       << (largest_not ? largest_not->model + " (" + std::to_string(largest_not->parameters) + ")" : "none") << " |\n";
  }
  return md.str();
}

}  // namespace

std::string topology_text(const Topology& topology) {
  return std::to_string(topology.nodes) + "x" + std::to_string(topology.gpus_per_node);
}

std::string prediction_markdown(const ScalingPrediction& result, const PredictOptions& options, const std::string& source) {
  std::ostringstream md;
  md << "# Predicted scaling\n\nFrom `" << source << "`. Every interval is a 95% prediction interval"
     << " (docs/methodology.md, \"Predicted scaling\", says what it covers and what it does not).\n\n";
  const ValidationSummary& s = result.summary;
  md << "## Self-check against the study's own measurements\n\n";
  if (s.configurations == 0) {
    md << "The study has no N-GPU configuration with its 1-GPU twin: nothing to check the predictor against.\n\n";
  } else {
    md << "Each measured N-GPU configuration predicted without its own runs. **Model only** (its 1-GPU twin and the"
       << " allreduce curve): median absolute error " << percent(s.model_only_median_abs_error) << ", the measured"
       << " mean inside the interval for " << percent(s.model_only_coverage) << " of " << s.configurations
       << " configurations. **Calibrated** (also the model errors of the other N-GPU configurations, leave one out):"
       << " median absolute error " << percent(s.calibrated_median_abs_error) << ", coverage "
       << percent(s.calibrated_coverage) << ".\n\n";
    md << "| configuration | N | measured samples/s | model only | error | in | calibrated | error | in |\n"
       << "|---|---:|---:|---:|---:|:-:|---:|---:|:-:|\n";
    for (const ValidationRow& row : result.validation)
      md << "| " << row.id << " | " << row.world_size << " | " << fixed(row.measured_throughput, 0) << " | "
         << with_interval(row.model_only.throughput, 0) << " | " << percent(row.model_only_error) << " | "
         << (row.model_only_covered ? "yes" : "**no**") << " | " << with_interval(row.calibrated.throughput, 0) << " | "
         << percent(row.calibrated_error) << " | " << (row.calibrated_covered ? "yes" : "**no**") << " |\n";
    md << "\n";
  }
  md << "## Predictions\n\nAllreduce curve interpolation error (log sd): " << fixed(result.allreduce_log_sd, 3)
     << "; calibrated by " << result.calibration_configurations << " measured N-GPU configurations"
     << (options.network.bytes_per_s > 0 ? "; network between nodes: " + options.network.text : std::string()) << ".\n\n";
  md << "| model | parameters | scaling | exec | batch/GPU | nodes x GPUs | allreduce | exposed us | step us | samples/s | speedup | efficiency |\n"
     << "|---|---:|---|---|---:|---:|---|---:|---:|---:|---:|---:|\n";
  for (const Prediction& p : result.predictions)
    md << "| " << p.model << " | " << p.parameters << " | " << p.scaling << " | " << p.exec << " | " << p.batch_per_rank
       << " | " << topology_text(p.topology) << " | " << p.algorithm << " | " << fixed(p.allreduce_exposed_us, 1) << " | "
       << with_interval(p.step_us, 1) << " | " << with_interval(p.throughput, 0) << " | " << with_interval(p.speedup, 2)
       << " | " << with_interval(p.efficiency, 3) << " |\n";
  md << "\n## Predicted break-even model size\n\nPays off: the whole speedup interval lies above 1. Per group,"
     << " the smallest model from which every larger one is predicted to pay off, and the largest that is not.\n\n"
     << break_even_table(result.predictions);
  if (!result.notes.empty()) {
    md << "\n## Notes\n\n";
    for (const std::string& note : result.notes) md << "- " << note << "\n";
  }
  return md.str();
}

std::string prediction_csv(const ScalingPrediction& result) {
  std::ostringstream csv;
  csv << "model,parameters,scaling,exec,batch_per_rank,global_batch,nodes,gpus_per_node,algorithm,allreduce_total_us,"
         "allreduce_exposed_us,step_us,step_us_low,step_us_high,samples_per_s,samples_per_s_low,samples_per_s_high,"
         "speedup,speedup_low,speedup_high,efficiency,efficiency_low,efficiency_high,calibrated\n";
  for (const Prediction& p : result.predictions) {
    csv << p.model << "," << p.parameters << "," << p.scaling << "," << p.exec << "," << p.batch_per_rank << ","
        << p.global_batch << "," << p.topology.nodes << "," << p.topology.gpus_per_node << "," << p.algorithm << ","
        << csv_number(p.allreduce_total_us) << "," << csv_number(p.allreduce_exposed_us);
    for (const PredictedValue* v : {&p.step_us, &p.throughput, &p.speedup, &p.efficiency})
      csv << "," << csv_number(v->point) << "," << csv_number(v->interval95.low) << "," << csv_number(v->interval95.high);
    csv << "," << (p.calibrated ? "true" : "false") << "\n";
  }
  return csv.str();
}

std::string validation_csv(const ScalingPrediction& result) {
  std::ostringstream csv;
  csv << "id,model,exec,parameters,batch_per_rank,world_size,measured_samples_per_s,model_only,model_only_low,"
         "model_only_high,model_only_error,model_only_covered,calibrated,calibrated_low,calibrated_high,"
         "calibrated_error,calibrated_covered\n";
  for (const ValidationRow& r : result.validation)
    csv << r.id << "," << r.model << "," << r.exec << "," << r.parameters << "," << r.batch_per_rank << ","
        << r.world_size << "," << csv_number(r.measured_throughput) << "," << csv_number(r.model_only.throughput.point)
        << "," << csv_number(r.model_only.throughput.interval95.low) << ","
        << csv_number(r.model_only.throughput.interval95.high) << "," << csv_number(r.model_only_error) << ","
        << (r.model_only_covered ? "true" : "false") << "," << csv_number(r.calibrated.throughput.point) << ","
        << csv_number(r.calibrated.throughput.interval95.low) << "," << csv_number(r.calibrated.throughput.interval95.high)
        << "," << csv_number(r.calibrated_error) << "," << (r.calibrated_covered ? "true" : "false") << "\n";
  return csv.str();
}

std::string prediction_json(const ScalingPrediction& result, const PredictOptions& options, const std::string& source) {
  JsonWriter json;
  json.begin_object().field("source", source).field("network", options.network.text);
  json.field("allreduce_log_sd", result.allreduce_log_sd);
  json.key("validation_summary")
      .begin_object()
      .field("configurations", static_cast<int64_t>(result.summary.configurations))
      .field("model_only_median_abs_error", result.summary.model_only_median_abs_error)
      .field("model_only_coverage", result.summary.model_only_coverage)
      .field("calibrated_median_abs_error", result.summary.calibrated_median_abs_error)
      .field("calibrated_coverage", result.summary.calibrated_coverage)
      .end_object();
  json.key("predictions").begin_array();
  for (const Prediction& p : result.predictions) write_prediction_object(json, p);
  json.end_array();
  json.key("validation").begin_array();
  for (const ValidationRow& r : result.validation) {
    json.begin_object().field("id", r.id).field("measured_samples_per_s", r.measured_throughput);
    json.field("model_only_error", r.model_only_error).field("model_only_covered", r.model_only_covered);
    json.field("calibrated_error", r.calibrated_error).field("calibrated_covered", r.calibrated_covered);
    json.key("model_only");
    write_prediction_object(json, r.model_only);
    json.key("calibrated");
    write_prediction_object(json, r.calibrated);
    json.end_object();
  }
  json.end_array();
  json.key("notes").begin_array();
  for (const std::string& note : result.notes) json.value(note);
  json.end_array().end_object();
  return json.str() + "\n";
}

void write_prediction(const ScalingPrediction& result, const PredictOptions& options, const std::string& source,
                      const std::string& out_dir) {
  std::filesystem::create_directories(out_dir);
  const auto at = [&](const char* name) { return (std::filesystem::path(out_dir) / name).string(); };
  write_whole_file(at("predict.md"), prediction_markdown(result, options, source));
  write_whole_file(at("predict.csv"), prediction_csv(result));
  write_whole_file(at("validation.csv"), validation_csv(result));
  write_whole_file(at("predict.json"), prediction_json(result, options, source));
}

}  // namespace ddpscale
