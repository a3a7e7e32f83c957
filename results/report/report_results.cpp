#include "results/report/report_results.hpp"

#include "results/report/report_format.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace ddpscale {

std::string device_word(const StudyAnalysis& analysis) {
  for (const ConfigSummary& c : analysis.configs)
    if (c.params.device == "cuda") return "GPUs";
  return "CPU ranks";
}

std::vector<const Comparison*> ddpscale_comparisons_of(const StudyAnalysis& analysis, const std::string& model) {
  std::vector<const Comparison*> out;
  for (const Comparison& c : analysis.comparisons)
    if (analysis.configs[c.n_gpu].params.model == model && analysis.configs[c.n_gpu].params.engine == kEngineDdpscale)
      out.push_back(&c);
  return out;
}

void ResultsText::write_section() {
  doc_.paragraph("Throughput is global samples per second (all ranks), the mean over runs and a 95% interval "
                 "[low, high]: the t-interval of the mean log throughput, exponentiated, which never reaches "
                 "below zero; speedup is N ranks over 1 with a 95% bootstrap interval, which decides whether more "
                 "ranks paid off (its low end above 1); p is Welch's two-tailed test of N ranks against 1, "
                 "a second opinion from another method." +
                 std::string(device_word(a_) == "GPUs" ? " Memory is the largest rank's allocator peak, GPU "
                                                         "utilisation the mean NVML sample (n/a where none was taken)."
                                                       : ""));
  for (const std::string& model : a_.models) {
    doc_.heading(model, 3);
    std::map<std::string, std::vector<const Comparison*>> by_variant;
    for (const Comparison* c : ddpscale_comparisons_of(a_, model)) by_variant[variant_of(cfg(c->n_gpu).params)].push_back(c);
    for (const auto& [variant, comparisons] : by_variant) {
      doc_.paragraph(variant + ":");
      doc_.table(comparison_table(comparisons));
    }
    unmatched_rows(model);
    throughput_plot(model);
  }
}

ReportTable ResultsText::comparison_table(const std::vector<const Comparison*>& comparisons) const {
  std::set<std::string> settings;
  for (const Comparison* c : comparisons) settings.insert(settings_of(cfg(c->n_gpu).params));
  const bool show_settings = settings.size() > 1;
  ReportTable t;
  const std::string unit = device_word(a_) == "GPUs" ? "GPU" : "rank";
  // Where no rank reported memory or utilisation (CPU ranks), the columns would only say n/a.
  const auto measured = [&](double ConfigSummary::*value) {
    return std::any_of(comparisons.begin(), comparisons.end(), [&](const Comparison* c) {
      return std::isfinite(cfg(c->one_gpu).*value) || std::isfinite(cfg(c->n_gpu).*value);
    });
  };
  const bool show_memory = measured(&ConfigSummary::peak_memory_bytes);
  const bool show_utilization = measured(&ConfigSummary::gpu_utilization_pct);
  t.header = {"batch/" + unit, "1 " + unit + " samples/s", "N", "N " + unit + "s samples/s", "speedup [95% CI]",
              "efficiency", "p"};
  if (show_memory) t.header.push_back("peak memory 1 → N");
  if (show_utilization) t.header.push_back("GPU util 1 → N");
  t.header.insert(t.header.end(), {"runs ok (1 / N)", "outliers (1 / N)"});
  if (show_settings) t.header.insert(t.header.begin() + 3, "overlap, bucket");
  t.right_aligned.assign(t.header.size(), true);
  for (const Comparison* c : comparisons) {
    const ConfigSummary& one = cfg(c->one_gpu);
    const ConfigSummary& n = cfg(c->n_gpu);
    std::vector<std::string> row = {
        std::to_string(n.params.batch_per_rank), throughput_text(one.throughput), std::to_string(n.params.world_size),
        throughput_text(n.throughput), speedup_text(c->speedup), percent(c->speedup.speedup / n.params.world_size),
        p_text(c->speedup.p_value)};
    if (show_memory) row.push_back(mib_text(one.peak_memory_bytes) + " → " + mib_text(n.peak_memory_bytes));
    if (show_utilization)
      row.push_back(percent(one.gpu_utilization_pct / 100) + " → " + percent(n.gpu_utilization_pct / 100));
    row.push_back(std::to_string(one.runs_ok) + "/" + std::to_string(one.runs_total) + " / " +
                  std::to_string(n.runs_ok) + "/" + std::to_string(n.runs_total));
    row.push_back(std::to_string(one.outliers_removed) + " / " + std::to_string(n.outliers_removed));
    if (show_settings) row.insert(row.begin() + 3, settings_of(n.params));
    t.rows.push_back(row);
  }
  return t;
}

void ResultsText::unmatched_rows(const std::string& model) {
  std::set<size_t> compared;
  for (const Comparison& c : a_.comparisons) compared.insert(c.one_gpu), compared.insert(c.n_gpu);
  ReportTable t;
  t.header = {"batch/rank", "ranks", "settings", "samples/s", "runs ok", "why alone"};
  t.right_aligned = {true, true, false, true, true, false};
  for (size_t i = 0; i < a_.configs.size(); ++i) {
    const ConfigSummary& c = cfg(i);
    if (c.params.model != model || compared.count(i)) continue;
    t.rows.push_back({std::to_string(c.params.batch_per_rank), std::to_string(c.params.world_size),
                      variant_of(c.params), throughput_text(c.throughput),
                      std::to_string(c.runs_ok) + "/" + std::to_string(c.runs_total),
                      c.params.world_size == 1 ? "no N-rank configuration to compare" : "no 1-rank twin measured"});
  }
  if (t.rows.empty()) return;
  doc_.paragraph("Configurations without a counterpart (shown, not compared):");
  doc_.table(t);
}

void ResultsText::throughput_plot(const std::string& model) {
  std::map<std::string, PlotSeries> series;  // by world size and variant
  for (const ConfigSummary& c : a_.configs) {
    if (c.params.model != model || c.throughput.n == 0) continue;
    std::string label = ranks_text(c.params);
    if (a_.nccl_profiles.size() > 1 || c.params.scaling != "weak") label += " (" + variant_of(c.params) + ")";
    PlotSeries& s = series[label];
    s.label = label;
    s.x.push_back(static_cast<double>(c.params.batch_per_rank));
    s.y.push_back(c.throughput.mean);
    s.y_low.push_back(std::isfinite(c.throughput.ci_low) ? c.throughput.ci_low : c.throughput.mean);
    s.y_high.push_back(std::isfinite(c.throughput.ci_high) ? c.throughput.ci_high : c.throughput.mean);
  }
  LinePlot plot;
  plot.name = "throughput_" + safe_stem(model);
  plot.title = model + ": throughput against batch size (95% CI)";
  plot.x_label = "batch per rank";
  plot.y_label = "samples/s (global)";
  plot.log_x = true;
  for (auto& [label, s] : series) plot.series.push_back(s);
  add_figure_(plot, model + ": samples/s against batch per rank, 1 and N ranks, 95% confidence intervals");
}

}  // namespace ddpscale
