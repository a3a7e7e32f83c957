// The report's sections in order (ReportBuilder), rendered by report_document.cpp and
// written beside summary.csv/json. The builder holds what the sections share (the analysis,
// the document, the plotter) and writes the short sections itself; each longer one lives in a
// file of its own (report_results.cpp, report_time_breakdown.cpp, report_thresholds.cpp,
// report_methodology.cpp and the others included below), the number formats in
// report_format.cpp.
#include "results/report/report_writer.hpp"

#include "results/report/report_answer.hpp"
#include "results/report/report_document.hpp"
#include "results/report/report_drift.hpp"
#include "results/report/report_engines.hpp"
#include "results/report/report_format.hpp"
#include "results/report/report_launches.hpp"
#include "results/report/report_methodology.hpp"
#include "results/report/report_paired.hpp"
#include "results/report/report_plots.hpp"
#include "results/report/report_results.hpp"
#include "results/report/report_thresholds.hpp"
#include "results/report/report_time_breakdown.hpp"
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
    return ddpscale_comparisons_of(a_, model);
  }

  int64_t parameters_of(const std::string& model) const { return ddpscale::parameters_of(a_, model); }

  std::string device_word() const { return ddpscale::device_word(a_); }

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

  void results_per_model() { results_.write_section(); }

  void time_breakdown() { time_breakdown_.write_section(); }

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

  void methodology() { methodology_.write_section(plots_note_); }

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
  ResultsText results_{a_, doc_, [this](const LinePlot& plot, const std::string& caption) { add_figure(plot, caption); }};
  TimeBreakdownText time_breakdown_{
      a_, doc_, [this](const StackedBarPlot& plot, const std::string& caption) { add_figure(plot, caption); }};
  MethodologyText methodology_{study_, a_, doc_, options_.command_line, section_ref(Section::test_configuration),
                               section_ref(Section::results_per_model)};
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
