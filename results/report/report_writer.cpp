// The report's sections in order (ReportBuilder), rendered by report_document.cpp and
// written beside summary.csv/json. Over 500 lines because the sections share one builder's
// state (the analysis, the document, the plotter); the parameter-threshold section, the
// largest, lives apart in report_thresholds.cpp, the number formats in report_format.cpp.
#include "results/report/report_writer.hpp"

#include "results/report/report_answer.hpp"
#include "results/report/report_document.hpp"
#include "results/report/report_drift.hpp"
#include "results/report/report_engines.hpp"
#include "results/report/report_format.hpp"
#include "results/report/report_launches.hpp"
#include "results/report/report_paired.hpp"
#include "results/report/report_plots.hpp"
#include "results/report/report_thresholds.hpp"
#include "results/report/report_why_not.hpp"
#include "results/report/summary_export.hpp"
#include "results/store/text_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace ddpscale {

std::string spec_name(const std::string& spec_text) {
  std::istringstream lines(spec_text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("name:", 0) != 0) continue;  // a top-level key starts its line
    std::string value = line.substr(5);
    if (const size_t comment = value.find(" #"); comment != std::string::npos) value.erase(comment);
    const size_t first = value.find_first_not_of(" \t");
    const size_t last = value.find_last_not_of(" \t\r");
    if (first == std::string::npos) return "";
    value = value.substr(first, last - first + 1);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    return value;
  }
  return "";
}

namespace {

// The stopping rule of the study's spec (launch_precision.hpp); of the first study given
// where several are reported together.
LaunchRule launch_rule_of(const LoadedStudy& study) {
  for (const StudySource& source : study.sources)
    if (source.metadata && !source.metadata->spec_text.empty()) return launch_rule_of_spec(source.metadata->spec_text);
  return {};
}

class ReportBuilder {
 public:
  ReportBuilder(const LoadedStudy& study, const StudyAnalysis& analysis, const ReportOptions& options)
      : study_(study), a_(analysis), options_(options), plotter_((fs::path(options.out_dir) / "plots").string()) {
    if (!options.plots) plots_note_ = "plots were not asked for (--no-plots)";
    else if (!plotter_.available()) plots_note_ = "plots skipped: " + plotter_.unavailable_reason();
  }

  ReportDocument build() {
    doc_.title = "ddpscale report: " + study_name();
    const std::vector<SectionPlan> plan = applicable_sections();
    for (size_t i = 0; i < plan.size(); ++i) {
      doc_.heading(std::to_string(i + 1) + ". " + plan[i].title);
      (this->*plan[i].write)();
    }
    for (size_t j = 0; j < options_.extra_sections.size(); ++j) {
      doc_.heading(std::to_string(plan.size() + j + 1) + ". " + options_.extra_sections[j].title);
      options_.extra_sections[j].write(doc_, [this](const LinePlot& plot, const std::string& caption) { add_figure(plot, caption); });
    }
    return std::move(doc_);
  }

  const std::string& plots_note() const { return plots_note_; }
  const std::vector<std::string>& plot_files() const { return plot_files_; }

 private:
  enum class Section {
    executive_summary,
    test_configuration,
    model_specifications,
    results_per_model,
    paired,
    host_drift,
    launches,
    engines,
    time_breakdown,
    nccl_profiles,
    parameter_thresholds,
    cost,
    methodology
  };
  struct SectionPlan {
    Section id;
    const char* title;
    void (ReportBuilder::*write)();  // everything below the heading
    bool (ReportBuilder::*applies)() const = nullptr;  // null: always; else left out where it says false
  };
  // The sections in order: headings and cross-references ("section 9") take their numbers
  // from here, so a section added or moved renumbers the prose too.
  static const std::vector<SectionPlan>& sections() {
    static const std::vector<SectionPlan> plan = {
        {Section::executive_summary, "Executive summary", &ReportBuilder::executive_summary},
        {Section::test_configuration, "Test configuration", &ReportBuilder::test_configuration},
        {Section::model_specifications, "Model specifications", &ReportBuilder::model_specifications},
        {Section::results_per_model, "Results per model", &ReportBuilder::results_per_model},
        {Section::paired, "Paired speedups and their checks", &ReportBuilder::paired, &ReportBuilder::has_paired},
        {Section::host_drift, "Host drift", &ReportBuilder::host_drift},
        {Section::launches, "Launches and speed levels", &ReportBuilder::launches},
        {Section::engines, "Beside PyTorch DDP", &ReportBuilder::engines, &ReportBuilder::has_both_engines},
        {Section::time_breakdown, "Where the time goes", &ReportBuilder::time_breakdown},
        {Section::nccl_profiles, "NCCL profiles compared", &ReportBuilder::nccl_profiles,
         &ReportBuilder::compares_nccl_profiles},
        {Section::parameter_thresholds, "Parameter-threshold analysis", &ReportBuilder::parameter_thresholds},
        {Section::cost, "Cost", &ReportBuilder::cost, &ReportBuilder::has_price},
        {Section::methodology, "Methodology and reproducibility", &ReportBuilder::methodology}};
    return plan;
  }
  // A section that would only say it has nothing to show is left out (a CPU study has no
  // NCCL profiles to compare, a study without a price no cost); the others number on.
  std::vector<SectionPlan> applicable_sections() const {
    std::vector<SectionPlan> plan;
    for (const SectionPlan& p : sections())
      if (!p.applies || (this->*p.applies)()) plan.push_back(p);
    return plan;
  }
  std::string section_ref(Section section) const {
    const std::vector<SectionPlan> plan = applicable_sections();
    const auto at = std::find_if(plan.begin(), plan.end(), [section](const SectionPlan& p) { return p.id == section; });
    return "section " + std::to_string(at - plan.begin() + 1);
  }
  bool compares_nccl_profiles() const { return a_.nccl_profiles.size() > 1; }
  bool has_price() const { return std::isfinite(options_.price_per_gpu_hour); }
  bool has_both_engines() const { return engines_.applies(); }
  bool has_paired() const { return paired_.applies(); }
  bool on_gpus() const { return device_word() == "GPUs"; }

  // Each study by its spec's name (`name:`, as the sweep and the study command print it), or
  // where it has none by its folder: `ddpscale study --out DIR` keeps its study in DIR/study,
  // a folder every such study shares the name of.
  std::string study_name() const {
    std::string names;
    for (const auto& source : study_.sources) {
      std::string name = source.metadata ? spec_name(source.metadata->spec_text) : "";
      if (name.empty()) name = fs::path(source.path).lexically_normal().filename().string();
      if (name.empty() || name == "study") {
        const fs::path parent = fs::path(source.path).lexically_normal().parent_path();
        if (!parent.filename().empty()) name = parent.filename().string();
      }
      names += (names.empty() ? "" : ", ") + name;
    }
    return names.empty() ? "study" : names;
  }

  const ConfigSummary& cfg(size_t i) const { return a_.configs[i]; }

  std::vector<const Comparison*> comparisons_of(const std::string& model) const {
    std::vector<const Comparison*> out;
    for (const Comparison& c : a_.comparisons)  // ddpscale's engine: PyTorch DDP's has its own section
      if (cfg(c.n_gpu).params.model == model && cfg(c.n_gpu).params.engine == kEngineDdpscale) out.push_back(&c);
    return out;
  }

  int64_t parameters_of(const std::string& model) const { return ddpscale::parameters_of(a_, model); }

  std::string device_word() const {
    for (const ConfigSummary& c : a_.configs)
      if (c.params.device == "cuda") return "GPUs";
    return "CPU ranks";
  }

  // ---- Executive summary ----------------------------------------------------------
  void executive_summary() {
    answer_.write();
    if (a_.comparisons.empty()) {
      std::string instead;
      for (size_t j = 0; j < options_.extra_sections.size(); ++j)
        if (!options_.extra_sections[j].instead_of_measured_speedups.empty())
          instead += " Section " + std::to_string(applicable_sections().size() + j + 1) + ", \"" +
                     options_.extra_sections[j].title + "\", " + options_.extra_sections[j].instead_of_measured_speedups;
      doc_.paragraph("No configuration with more than one rank has a one-rank counterpart in these inputs, so no "
                     "speedup was measured." +
                     (instead.empty() ? std::string(" Measure world sizes 1 and N of the same model and batch.")
                                      : instead));
    }
    std::vector<std::string> items;
    for (const std::string& model : a_.models) {
      const auto comparisons = comparisons_of(model);
      if (comparisons.empty()) continue;
      const Comparison* best = nullptr;
      const Comparison* best_unpaid = nullptr;  // the closest miss: its cause is the one worth naming
      int paid = 0, undecided = 0;
      for (const Comparison* c : comparisons) {
        paid += c->paid_off();
        undecided += c->payoff == Payoff::undecided;
        if (std::isfinite(c->speedup.speedup) && (!best || c->speedup.speedup > best->speedup.speedup)) best = c;
        if (!c->paid_off() && (!best_unpaid || c->speedup.speedup > best_unpaid->speedup.speedup)) best_unpaid = c;
      }
      std::string item = "**" + model + "** (" + group_thousands(parameters_of(model)) + " parameters): more " +
                         device_word() + " paid off in " + std::to_string(paid) + " of " +
                         std::to_string(comparisons.size()) + " configurations" +
                         (undecided > 0 ? " (" + std::to_string(undecided) + " undecided)" : "");
      if (best) {
        const ConfigParams& p = cfg(best->n_gpu).params;
        item += "; best speedup " + speedup_text(best->speedup) + " with " + ranks_text(p) + " at batch " +
                std::to_string(p.batch_per_rank) + " per rank (" + variant_of(p) + "), efficiency " +
                percent(best->speedup.speedup / p.world_size);
      }
      if (best_unpaid) item += why_not_text(*best_unpaid);
      items.push_back(item + ".");
    }
    if (!items.empty()) doc_.bullets(items);
    if (has_paired()) doc_.paragraph(paired_.summary_note(section_ref(Section::paired)));
    if (const std::string note = launches_.summary_note(section_ref(Section::launches)); !note.empty())
      doc_.paragraph(note);
    if (has_both_engines()) doc_.paragraph(engines_.summary_note(section_ref(Section::engines)));
    superlinear_caution();
    for (const auto& [group, rows] : a_.measured_thresholds) thresholds_.measured_threshold_sentence(group, rows);
    size_t failed = 0, total = 0;
    for (const ConfigSummary& c : a_.configs) {
      failed += c.runs_failed;
      total += c.runs_total;
    }
    doc_.paragraph(std::to_string(a_.configs.size()) + " configurations, " + std::to_string(total) + " runs, " +
                   std::to_string(failed) + " failed (" + percent(total ? double(total - failed) / total : kNaN) +
                   " success rate); failed runs are listed in " + section_ref(Section::methodology) +
                   " and excluded from every statistic.");
  }

  // "; why not at batch 8 per rank: ..." for a comparison that did not pay off.
  std::string why_not_text(const Comparison& c) const {
    const std::string clause = why_not_clause(cfg(c.one_gpu), cfg(c.n_gpu), c.speedup);
    if (clause.empty()) return "";
    return "; why not, at batch " + std::to_string(cfg(c.n_gpu).params.batch_per_rank) + " per rank (" +
           speedup_text(c.speedup) + (c.payoff == Payoff::undecided ? ", undecided" : "") + "): " + clause;
  }

  // Under weak scaling every rank does the 1-rank configuration's work plus communication,
  // so N ranks cannot be more than N times as fast unless the two were measured under
  // different conditions: on the 2-GPU machine the host's speed drifted 2.5x within minutes
  // (docs/methodology.md, "Order of a study"), and eager steps are host work. Said where the whole
  // interval lies above N, so noise alone does not raise it.
  void superlinear_caution() {
    std::vector<std::string> items;
    for (size_t i = 0; i < a_.comparisons.size(); ++i) {
      const Comparison& c = a_.comparisons[i];
      const ConfigParams& p = cfg(c.n_gpu).params;
      if (p.scaling != "weak" || !c.speedup.speedup_ci.valid() || c.speedup.speedup_ci.low <= p.world_size) continue;
      const std::string calibration = drift_.calibration_note(i);
      items.push_back(p.model + " at batch " + std::to_string(p.batch_per_rank) + " per rank (" + variant_of(p) +
                      "): " + speedup_text(c.speedup) + " on " + std::to_string(p.world_size) + " ranks, efficiency " +
                      percent(c.speedup.speedup / p.world_size) +
                      (calibration.empty() ? "; no calibration recorded" : "; " + calibration));
    }
    if (items.empty()) return;
    doc_.paragraph("**Caution:** " + std::to_string(items.size()) +
                   (items.size() == 1 ? " comparison is" : " comparisons are") +
                   " faster than linear under weak scaling, with the whole 95% interval above the rank count. "
                   "Data parallelism cannot do that with the same per-rank work, so the 1-rank and N-rank "
                   "configurations ran under different conditions (for example the host's speed drifting "
                   "between them, which moves host-bound eager steps). Treat these speedups as unreliable and "
                   "measure them again close together (the host's calibration of both halves beside each, "
                   + section_ref(Section::host_drift) + "):");
    doc_.bullets(items);
  }

  // ---- Host drift --------------------------------------------------------------------
  void host_drift() { drift_.write_section(); }
  void launches() { launches_.write_section(); }
  void paired() { paired_.write_section(); }
  void engines() { engines_.write_section(); }

  // ---- Test configuration ------------------------------------------------------------
  void test_configuration() {
    for (const StudySource& source : study_.sources) {
      if (study_.sources.size() > 1) doc_.heading(source.path, 3);
      if (!source.metadata) {
        doc_.paragraph(source.path + " has no study.h5: hardware and software were not recorded for it.");
        continue;
      }
      const StudyMetadata& m = *source.metadata;
      auto list = [](const std::vector<std::string>& v) {
        std::map<std::string, int> counts;
        for (const auto& x : v) ++counts[x];
        std::string out;
        for (const auto& [name, n] : counts) out += (out.empty() ? "" : ", ") + (n > 1 ? std::to_string(n) + "x " : "") + name;
        return out.empty() ? std::string("none") : out;
      };
      auto known = [](const std::string& v) { return v.empty() ? std::string("n/a") : v; };
      ReportTable t;
      t.header = {"what", "value"};
      t.rows = {{"hosts", list(m.hostnames)}};
      // A CPU study has no GPUs, driver, CUDA or NCCL to speak of; NCCL variables set in its
      // environment are still shown (a cluster's launch sets them for its GPU studies too).
      std::string nccl;
      for (const auto& [k, v] : m.nccl_variables) nccl += (nccl.empty() ? "" : " ") + k + "=" + v;
      if (on_gpus()) {
        t.rows.insert(t.rows.end(), {{"GPUs", list(m.gpu_names)},
                                     {"GPU link topology", known(m.link_topology)},
                                     {"GPU driver", known(m.gpu_driver)},
                                     {"CUDA", known(m.cuda_version)},
                                     {"NCCL", known(m.nccl_version)},
                                     {"NCCL variables in effect", nccl.empty() ? "none set" : nccl}});
      } else if (!nccl.empty()) {
        t.rows.push_back({"NCCL variables in effect", nccl});
      }
      t.rows.insert(t.rows.end(), {{"MPI", known(m.mpi_version)},
                                   {"LibTorch", known(m.torch_version)},
                                   {"HDF5", known(m.hdf5_version)},
                                   {"ddpscale", known(m.tool_version) + " (commit " + known(m.git_commit) + ")"},
                                   {"study started (UTC)", known(m.created_utc)}});
      doc_.table(t);
      if (source.commbench) commbench_table(*source.commbench);
    }
  }

  void commbench_table(const CommBenchTable& bench) {
    doc_.paragraph("Allreduce bandwidth measured at the start of the study (float32 sum, nccl-tests' definitions: "
                   "busbw = algbw x 2(n-1)/n):");
    ReportTable t;
    t.header = {"bytes", "time (us)", "algbw (GB/s)", "busbw (GB/s)"};
    t.right_aligned = {true, true, true, true};
    for (size_t i = 0; i < bench.bytes.size(); ++i)
      t.rows.push_back({group_thousands(static_cast<int64_t>(bench.bytes[i])), format_number(bench.time_us[i], 4),
                        format_number(bench.algbw_gbs[i], 3), format_number(bench.busbw_gbs[i], 3)});
    doc_.table(t);
  }

  // ---- Model specifications -------------------------------------------------------
  void model_specifications() {
    ReportTable t;
    t.header = {"model", "parameters", "layers", "weights (fp32)", "Adam state (fp32)"};
    t.right_aligned = {false, true, false, true, true};
    for (const std::string& model : a_.models) {
      const int64_t n = parameters_of(model);
      std::string layers = "n/a";
      if (options_.describe_model) {
        const ModelArchitecture arch = options_.describe_model(model, n);
        if (!arch.layers.empty()) layers = arch.layers;
      }
      t.rows.push_back({model, group_thousands(n), layers, mib_text(4.0 * n), mib_text(8.0 * n)});
    }
    doc_.table(t);
  }

  // ---- Results per model -------------------------------------------------------------
  void results_per_model() {
    doc_.paragraph("Throughput is global samples per second (all ranks), the mean over runs and a 95% interval "
                   "[low, high]: the t-interval of the mean log throughput, exponentiated, which never reaches "
                   "below zero; speedup is N ranks over 1 with a 95% bootstrap interval, which decides whether more "
                   "ranks paid off (its low end above 1); p is Welch's two-tailed test of N ranks against 1, "
                   "a second opinion from another method." +
                   std::string(on_gpus() ? " Memory is the largest rank's allocator peak, GPU utilisation the mean "
                                           "NVML sample (n/a where none was taken)."
                                         : ""));
    for (const std::string& model : a_.models) {
      doc_.heading(model, 3);
      std::map<std::string, std::vector<const Comparison*>> by_variant;
      for (const Comparison* c : comparisons_of(model)) by_variant[variant_of(cfg(c->n_gpu).params)].push_back(c);
      for (const auto& [variant, comparisons] : by_variant) {
        doc_.paragraph(variant + ":");
        doc_.table(comparison_table(comparisons));
      }
      unmatched_rows(model);
      throughput_plot(model);
    }
  }

  ReportTable comparison_table(const std::vector<const Comparison*>& comparisons) const {
    std::set<std::string> settings;
    for (const Comparison* c : comparisons) settings.insert(settings_of(cfg(c->n_gpu).params));
    const bool show_settings = settings.size() > 1;
    ReportTable t;
    const std::string unit = device_word() == "GPUs" ? "GPU" : "rank";
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

  void unmatched_rows(const std::string& model) {
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

  void throughput_plot(const std::string& model) {
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
    add_figure(plot, model + ": samples/s against batch per rank, 1 and N ranks, 95% confidence intervals");
  }

  // ---- Where the time goes ----------------------------------------------------------
  void time_breakdown() {
    doc_.paragraph("Per-phase time per step in ms (mean over runs of each run's median step ± half-width of the "
                   "95% t-interval). Allreduce total runs from the first bucket's launch to the last bucket's end and "
                   "overlaps backward; allreduce exposed is the part after backward ended, the communication the "
                   "overlap did not hide. 'Hidden' = 1 - exposed / total. Step is the slowest rank's; the other "
                   "phases are means over ranks, so they need not add up to it exactly. A step run as one CUDA "
                   "graph (exec graph) is timed as a whole: its phases are 'not split'.");
    const Phase phases[] = {Phase::data, Phase::forward, Phase::backward, Phase::allreduce_total,
                            Phase::allreduce_exposed, Phase::optimizer, Phase::step};
    for (const std::string& model : a_.models) {
      ReportTable t;
      t.header = {"batch/rank", "ranks", "settings"};
      for (Phase p : phases) t.header.push_back(std::string(phase_name(p)) + " (ms)");
      t.header.push_back("hidden");
      t.right_aligned.assign(t.header.size(), true);
      t.right_aligned[2] = false;
      StackedBarPlot bars;
      bars.name = "phases_" + safe_stem(model);
      bars.title = model + ": median time per step by phase";
      bars.y_label = "ms per step";
      bars.segments = {"data", "forward", "backward", "allreduce exposed", "optimizer"};
      bars.values.assign(bars.segments.size(), {});
      for (const ConfigSummary& c : a_.configs) {
        if (c.params.model != model) continue;
        std::vector<std::string> row = {std::to_string(c.params.batch_per_rank), std::to_string(c.params.world_size),
                                        variant_of(c.params) + (c.params.world_size > 1 ? ", " + settings_of(c.params) : "")};
        for (Phase p : phases) row.push_back(phase_cell(c, p));
        const double total = c.phase_us[size_t(Phase::allreduce_total)].mean;
        const double exposed = c.phase_us[size_t(Phase::allreduce_exposed)].mean;
        row.push_back(c.params.world_size > 1 && total > 0 && c.params.exec != "graph" ? percent(1 - exposed / total)
                                                                                     : "n/a");
        t.rows.push_back(row);
        add_bar(bars, c);
      }
      if (t.rows.empty()) continue;
      doc_.heading(model, 3);
      doc_.table(t);
      cpu_cores_of(model);
      add_figure(bars, model + ": median ms per step by phase (data, forward, backward, exposed allreduce, optimizer)");
    }
    eager_against_graph();
  }

  // On CPU the ranks' compute phases depend on whether they shared the host's cores: said
  // for each N-rank configuration whose ranks recorded their CPU masks and threads.
  void cpu_cores_of(const std::string& model) {
    std::vector<std::string> items;
    for (const ConfigSummary& c : a_.configs) {
      if (c.params.model != model || c.params.device != "cpu" || c.params.world_size < 2) continue;
      const std::string sentence = core_sharing_sentence(c.cores);
      if (!sentence.empty())
        items.push_back("batch " + std::to_string(c.params.batch_per_rank) + " per rank on " +
                        std::to_string(c.params.world_size) + " ranks: " + sentence);
    }
    if (items.empty()) return;
    doc_.paragraph("How the CPU ranks used the host's cores (their CPU masks, sched_getaffinity, and LibTorch's "
                   "intra-op threads): ranks sharing cores slow each other's forward, backward and optimizer.");
    doc_.bullets(items);
  }

  // Each configuration run as one CUDA graph beside the same configuration run op by op.
  // The graph's step is what is left once the host does not issue every kernel: eager /
  // graph is how many times over that floor the ordinary loop's step is.
  void eager_against_graph() {
    auto same_but_exec = [](ConfigParams p) {
      p.exec = "eager";
      return twin_key(p) + "|" + std::to_string(p.world_size) + "|" + round_trip_text(p.bucket_mb) + "|" +
             (p.overlap ? "overlap" : "sequential") + "|" + p.allreduce_dtype;
    };
    std::map<std::string, size_t> eager_index;
    for (size_t i = 0; i < a_.configs.size(); ++i)
      if (a_.configs[i].params.exec == "eager") eager_index[same_but_exec(a_.configs[i].params)] = i;
    ReportTable t;
    t.header = {"model", "batch/rank", "ranks", "eager step (ms)", "graph step (ms)", "eager / graph",
                "graph samples/s over eager", "GPU busy (ms)", "eager / busy", "graph / busy"};
    t.right_aligned.assign(t.header.size(), true);
    t.right_aligned[0] = false;
    for (const ConfigSummary& graph : a_.configs) {
      if (graph.params.exec != "graph") continue;
      const auto twin = eager_index.find(same_but_exec(graph.params));
      if (twin == eager_index.end()) continue;
      const ConfigSummary& eager = a_.configs[twin->second];
      const double eager_step = eager.phase_us[size_t(Phase::step)].mean;
      const double graph_step = graph.phase_us[size_t(Phase::step)].mean;
      // Both modes run the same kernels (the graph is captured from an eager step), so either
      // measures the floor, and both can only over-state it: an NCCL kernel that waits for its
      // peer counts as busy. The smaller is the tighter. Eager's rank that reaches a collective
      // first waits longest (2x H200, mlp-large batch 32 on 2 GPUs: eager 0.604 ms against
      // graph 0.476 ms, with a 0.528 ms graph step).
      const double busy = std::fmin(eager.gpu_busy_us, graph.gpu_busy_us);  // fmin skips a NaN
      auto over_busy = [busy](double step) { return std::isfinite(busy) && busy > 0 ? format_number(step / busy, 3) + "x" : "n/a"; };
      t.rows.push_back({graph.params.model, std::to_string(graph.params.batch_per_rank),
                        std::to_string(graph.params.world_size), fixed_ms(eager_step), fixed_ms(graph_step),
                        format_number(eager_step / graph_step, 3) + "x",
                        format_number(graph.throughput.mean / eager.throughput.mean, 3) + "x",
                        std::isfinite(busy) ? fixed_ms(busy) : "n/a", over_busy(eager_step), over_busy(graph_step)});
    }
    if (t.rows.empty()) return;
    doc_.heading("Eager against CUDA graph", 3);
    doc_.paragraph("The same configurations run op by op (eager) and as one CUDA graph per step (exec graph), "
                   "step time as the mean over runs of each run's median step. The graph removes the host's "
                   "per-kernel launch work, so its step is the floor for this model on this machine, and eager / "
                   "graph says how many times over that floor ordinary training runs. GPU busy is the kernel-time "
                   "floor: the time per step the GPU spent in kernels, copies and memsets (their union, so "
                   "overlapping streams count once), from the profiler over extra steps after the measured ones "
                   "(gpu_busy_steps; median over runs of the least busy rank, since an NCCL kernel waiting for a "
                   "peer counts as busy; n/a where not measured). step / busy "
                   "is how far each mode is from the hardware.");
    doc_.table(t);
  }

  // A phase's time per step in ms, or why there is none.
  static std::string phase_cell(const ConfigSummary& c, Phase p) {
    if (c.params.exec == "graph" && p != Phase::step) return "not split";  // one CUDA graph per step
    if (c.params.world_size == 1 && (p == Phase::allreduce_total || p == Phase::allreduce_exposed))
      return "none";  // one rank runs no communication code
    return mean_pm_ci(c.phase_us[static_cast<size_t>(p)], fixed_ms, fixed_ms);
  }

  void add_bar(StackedBarPlot& bars, const ConfigSummary& c) {
    bars.bars.push_back("b" + std::to_string(c.params.batch_per_rank) + " x" + std::to_string(c.params.world_size) +
                        (a_.nccl_profiles.size() > 1 ? " " + c.params.nccl_profile : ""));
    const Phase segments[] = {Phase::data, Phase::forward, Phase::backward, Phase::allreduce_exposed, Phase::optimizer};
    for (size_t i = 0; i < bars.segments.size(); ++i) {
      const bool no_communication = c.params.world_size == 1 && segments[i] == Phase::allreduce_exposed;
      const double median_us = no_communication ? 0.0 : c.phase_us[static_cast<size_t>(segments[i])].median;
      bars.values[i].push_back(std::isfinite(median_us) ? median_us / 1000 : 0.0);
    }
  }

  // ---- NCCL profiles ---------------------------------------------------------------
  // Only where the study ran two profiles or more (compares_nccl_profiles).
  void nccl_profiles() {
    ReportTable t;
    t.header = {"model", "batch/rank", "ranks", "NCCL profile", "samples/s", "speedup [95% CI]", "allreduce total (ms)",
                "allreduce exposed (ms)"};
    t.right_aligned = {false, true, true, false, true, true, true, true};
    for (const Comparison& c : a_.comparisons) {
      const ConfigSummary& n = cfg(c.n_gpu);
      t.rows.push_back({n.params.model, std::to_string(n.params.batch_per_rank), std::to_string(n.params.world_size),
                        n.params.nccl_profile, throughput_text(n.throughput), speedup_text(c.speedup),
                        phase_cell(n, Phase::allreduce_total), phase_cell(n, Phase::allreduce_exposed)});
    }
    doc_.table(t);
    std::vector<std::string> settings;
    for (const std::string& profile : a_.nccl_profiles) {
      for (const ConfigSummary& c : a_.configs) {
        if (c.params.nccl_profile != profile || c.params.world_size == 1) continue;
        std::string vars;
        for (const auto& [k, v] : c.params.nccl_variables) vars += (vars.empty() ? "" : " ") + k + "=" + v;
        settings.push_back(profile + ": " + (vars.empty() ? "no NCCL variables set" : vars));
        break;
      }
    }
    doc_.paragraph("NCCL variables in effect per profile (recorded by the trainer):");
    doc_.bullets(settings);
  }

  void parameter_thresholds() { thresholds_.write_section(); }

  // ---- Cost ------------------------------------------------------------------------
  // Only with --price-per-gpu-hour (has_price).
  void cost() {
    doc_.paragraph("At " + format_number(options_.price_per_gpu_hour, 4) + " per GPU-hour; cost per million samples = "
                   "price x ranks x 10^6 / (samples/s x 3600), from the mean throughput.");
    ReportTable t;
    t.header = {"model", "batch/rank", "settings", "ranks", "samples/s", "cost per 10^6 samples"};
    t.right_aligned = {false, true, false, true, true, true};
    for (const ConfigSummary& c : a_.configs) {
      const double per_million =
          options_.price_per_gpu_hour * c.params.world_size * 1e6 / (c.throughput.mean * 3600.0);
      t.rows.push_back({c.params.model, std::to_string(c.params.batch_per_rank), variant_of(c.params),
                        std::to_string(c.params.world_size), throughput_text(c.throughput),
                        std::isfinite(per_million) && c.throughput.mean > 0 ? format_number(per_million, 3) : "n/a"});
    }
    doc_.table(t);
  }

  // ---- Methodology -----------------------------------------------------------------
  // "commit (N configurations, finished FIRST to LAST)" per build, in order of first finish:
  // a study continued with --resume may have been measured by several builds.
  std::string builds_text() const {
    struct Build {
      size_t configs = 0;
      std::string first, last;
    };
    std::map<std::string, Build> builds;
    size_t unrecorded = 0;
    for (const ConfigRecord& record : study_.configs) {
      if (record.git_commit.empty()) {
        ++unrecorded;
        continue;
      }
      Build& b = builds[record.git_commit];
      ++b.configs;
      if (b.first.empty() || record.finished_utc < b.first) b.first = record.finished_utc;
      if (record.finished_utc > b.last) b.last = record.finished_utc;
    }
    std::vector<std::pair<std::string, Build>> ordered(builds.begin(), builds.end());
    std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
    std::string text;
    for (const auto& [commit, b] : ordered) {
      text += (text.empty() ? "" : "; ") + commit + " (" + std::to_string(b.configs) +
              (b.configs == 1 ? " configuration" : " configurations");
      if (!b.first.empty()) text += ", finished " + (b.first == b.last ? b.first : b.first + " to " + b.last);
      text += ")";
    }
    if (unrecorded > 0)
      text += (text.empty() ? "" : "; ") + std::string("not recorded for ") + std::to_string(unrecorded) +
              (unrecorded == 1 ? " configuration" : " configurations") + " (files written before the build was stored "
              "per configuration; the study's own commit is in " + section_ref(Section::test_configuration) + ")";
    return text;
  }

  // How the halves of the speedups ran, from the runs' start times (config_summary.hpp).
  std::string run_order_text() const {
    size_t interleaved = 0, apart = 0, unknown = 0;
    for (const Comparison& c : a_.comparisons) {
      switch (run_order(a_.configs[c.one_gpu], a_.configs[c.n_gpu])) {
        case RunOrder::interleaved: ++interleaved; break;
        case RunOrder::one_after_the_other: ++apart; break;
        case RunOrder::unknown: ++unknown; break;
      }
    }
    if (a_.comparisons.empty()) return "no N-GPU configuration with a 1-GPU twin";
    std::string text = "of " + std::to_string(a_.comparisons.size()) + " comparisons, " + std::to_string(interleaved) +
                       " ran their 1-GPU and N-GPU runs interleaved (A B B A, the sweep's default), " +
                       std::to_string(apart) + " one configuration after the other";
    if (unknown > 0) text += ", " + std::to_string(unknown) + " without stored start times";
    return text;
  }

  void methodology() {
    std::set<std::string> plans;
    size_t outliers = 0, failed = 0;
    std::vector<std::string> failures;
    for (const ConfigSummary& c : a_.configs) {
      plans.insert(std::to_string(c.params.runs) + " runs x (" + std::to_string(c.params.warmup_steps) +
                   " warm-up + " + std::to_string(c.params.measured_steps) + " measured steps)");
      outliers += c.outliers_removed;
      failed += c.runs_failed;
      for (const std::string& f : c.failures) failures.push_back(c.id + ": " + f);
    }
    std::string plan_text;
    for (const auto& p : plans) plan_text += (plan_text.empty() ? "" : "; ") + p;
    doc_.bullets({
        "Runs per configuration: " + plan_text + "; run k's data and dropout come from seed + k (initial "
            "parameters: docs/methodology.md, \"What one run is\").",
        "Builds that measured the configurations: " + builds_text() + ".",
        "Outliers: modified Z-score (Iglewicz and Hoaglin) of run throughputs above 3.5 removed: " +
            std::to_string(outliers) + " runs in all, counted per configuration in " + section_ref(Section::results_per_model) + ".",
        "Failed runs (excluded, counted): " + std::to_string(failed) + ".",
        "Run order: " + run_order_text() + ".",
        "Means with 95% Student-t intervals; medians and quartiles (R type 7) in summary.csv.",
        "Speedup: ratio of mean throughputs, 95% percentile bootstrap (10,000 resamples of each group, fixed seed "
        "20240917); efficiency = speedup / ranks; p: Welch's two-tailed t-test.",
        "Break-even: least squares of speedup on log10 parameters, crossing 1.0; 95% bootstrap over configurations.",
        "Details and reasons: docs/methodology.md."});
    if (!failures.empty()) {
      doc_.paragraph("Failed runs:");
      if (failures.size() > 50) {
        const size_t more = failures.size() - 50;
        failures.resize(50);
        failures.push_back("... and " + std::to_string(more) + " more (summary.json lists all)");
      }
      doc_.bullets(failures);
    }
    std::string commands;
    for (const StudySource& source : study_.sources)
      if (source.metadata && !source.metadata->command_line.empty())
        commands += source.metadata->command_line + "\n";
    commands += options_.command_line + "\n";
    doc_.paragraph("Commands that produced the study and this report:");
    doc_.preformatted(commands);
    if (!study_.skipped.empty()) {
      doc_.paragraph("Inputs skipped (--skip-bad):");
      doc_.bullets(study_.skipped);
    }
    doc_.paragraph(plots_note_.empty() ? "Plots: gnuplot, data and scripts beside the images in plots/."
                                       : "Plots: " + plots_note_ + ".");
  }

  // ---- figures ---------------------------------------------------------------------
  template <typename Plot>
  void add_figure(const Plot& plot, const std::string& caption) {
    if (!plots_note_.empty()) return;
    try {
      const PlotFiles files = plotter_.draw(plot);
      if (!files.drawn()) return;
      ReportFigure figure;
      figure.caption = caption;
      figure.svg_file = "plots/" + fs::path(files.svg).filename().string();
      figure.png_file = "plots/" + fs::path(files.png).filename().string();
      figure.png_bytes = read_whole_file(files.png);
      doc_.figure(figure);
      plot_files_.push_back(files.svg);
      plot_files_.push_back(files.png);
    } catch (const std::exception& e) {
      plots_note_ = std::string("plots stopped: ") + e.what();
    }
  }

  const LoadedStudy& study_;
  const StudyAnalysis& a_;
  const ReportOptions& options_;
  Plotter plotter_;
  std::string plots_note_;
  std::vector<std::string> plot_files_;
  ReportDocument doc_;
  DriftText drift_{a_, study_.configs, doc_,
                   [this](const LinePlot& plot, const std::string& caption) { add_figure(plot, caption); }};
  LaunchText launches_{a_, study_.configs, launch_rule_of(study_), doc_};
  EngineText engines_{a_, doc_};
  PairedText paired_{a_, doc_};
  AnswerText answer_{a_, doc_, [this](const LinePlot& plot, const std::string& caption) { add_figure(plot, caption); }};
  ThresholdsText thresholds_{a_, doc_,
                             [this](const LinePlot& plot, const std::string& caption) { add_figure(plot, caption); },
                             section_ref(Section::parameter_thresholds)};
};

}  // namespace

ReportResult write_report(const LoadedStudy& study, const StudyAnalysis& analysis, const ReportOptions& options) {
  std::error_code ec;
  fs::create_directories(options.out_dir, ec);
  if (ec) throw std::runtime_error(options.out_dir + ": cannot create the report folder: " + ec.message());
  ReportBuilder builder(study, analysis, options);
  const ReportDocument document = builder.build();

  ReportResult result;
  const auto out = [&](const std::string& name, const std::string& text) {
    const std::string path = (fs::path(options.out_dir) / name).string();
    write_whole_file(path, text);
    result.files.push_back(path);
  };
  out("report.md", render_markdown(document));
  out("report.html", render_html(document));
  out("summary.csv", summary_csv(analysis));
  out("summary.json", summary_json(analysis));
  // The allreduce curve, so that `ddpscale predict REPORT_DIR` works once the runs are gone.
  for (const StudySource& source : study.sources) {
    if (!source.commbench || source.commbench->bytes.empty() || analysis.world_sizes.empty()) continue;
    out("commbench.csv", commbench_csv(*source.commbench, analysis.world_sizes.back()));
    break;
  }
  result.files.insert(result.files.end(), builder.plot_files().begin(), builder.plot_files().end());
  result.plots_note = builder.plots_note();
  return result;
}

}  // namespace ddpscale
