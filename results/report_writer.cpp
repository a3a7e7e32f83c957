#include "report_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "report_document.hpp"
#include "report_format.hpp"
#include "report_plots.hpp"
#include "summary_export.hpp"
#include "text_io.hpp"

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

class ReportBuilder {
 public:
  ReportBuilder(const LoadedStudy& study, const StudyAnalysis& analysis, const ReportOptions& options)
      : study_(study), a_(analysis), options_(options), plotter_((fs::path(options.out_dir) / "plots").string()) {
    if (!options.plots) plots_note_ = "plots were not asked for (--no-plots)";
    else if (!plotter_.available()) plots_note_ = "plots skipped: " + plotter_.unavailable_reason();
  }

  ReportDocument build() {
    doc_.title = "ddpscale report: " + study_name();
    executive_summary();
    test_configuration();
    model_specifications();
    results_per_model();
    time_breakdown();
    nccl_profiles();
    parameter_thresholds();
    cost();
    methodology();
    return std::move(doc_);
  }

  const std::string& plots_note() const { return plots_note_; }
  const std::vector<std::string>& plot_files() const { return plot_files_; }

 private:
  std::string study_name() const {
    std::string names;
    for (const auto& source : study_.sources) names += (names.empty() ? "" : ", ") + fs::path(source.path).filename().string();
    return names.empty() ? "study" : names;
  }

  const ConfigSummary& cfg(size_t i) const { return a_.configs[i]; }

  std::vector<const Comparison*> comparisons_of(const std::string& model) const {
    std::vector<const Comparison*> out;
    for (const Comparison& c : a_.comparisons)
      if (cfg(c.n_gpu).params.model == model) out.push_back(&c);
    return out;
  }

  int64_t parameters_of(const std::string& model) const {
    for (const ConfigSummary& c : a_.configs)
      if (c.params.model == model) return c.params.parameters;
    return 0;
  }

  std::string device_word() const {
    for (const ConfigSummary& c : a_.configs)
      if (c.params.device == "cuda") return "GPUs";
    return "CPU ranks";
  }

  // ---- 1. Executive summary ----------------------------------------------------------
  void executive_summary() {
    doc_.heading("1. Executive summary");
    if (a_.comparisons.empty()) {
      doc_.paragraph("No configuration with more than one rank has a one-rank counterpart in these inputs, so no "
                     "speedup can be stated. Measure world sizes 1 and N of the same model and batch.");
    }
    std::vector<std::string> items;
    for (const std::string& model : a_.models) {
      const auto comparisons = comparisons_of(model);
      if (comparisons.empty()) continue;
      const Comparison* best = nullptr;
      int paid = 0;
      for (const Comparison* c : comparisons) {
        paid += c->paid_off;
        if (std::isfinite(c->speedup.speedup) && (!best || c->speedup.speedup > best->speedup.speedup)) best = c;
      }
      std::string item = "**" + model + "** (" + group_thousands(parameters_of(model)) + " parameters): more " +
                         device_word() + " paid off (faster and significant at 0.05) in " + std::to_string(paid) +
                         " of " + std::to_string(comparisons.size()) + " configurations";
      if (best) {
        const ConfigParams& p = cfg(best->n_gpu).params;
        item += "; best speedup " + speedup_text(best->speedup) + " with " + ranks_text(p) + " at batch " +
                std::to_string(p.batch_per_rank) + " per rank (" + variant_of(p) + "), efficiency " +
                percent(best->speedup.speedup / p.world_size);
      }
      items.push_back(item + ".");
    }
    if (!items.empty()) doc_.bullets(items);
    superlinear_caution();
    for (const auto& entry : a_.break_even) break_even_paragraphs(entry.first);
    for (const auto& [group, rows] : a_.measured_thresholds) measured_threshold_sentence(group, rows);
    size_t failed = 0, total = 0;
    for (const ConfigSummary& c : a_.configs) {
      failed += c.runs_failed;
      total += c.runs_total;
    }
    doc_.paragraph(std::to_string(a_.configs.size()) + " configurations, " + std::to_string(total) + " runs, " +
                   std::to_string(failed) + " failed (" + percent(total ? double(total - failed) / total : kNaN) +
                   " success rate); failed runs are listed in section 9 and excluded from every statistic.");
  }

  // Under weak scaling every rank does the 1-rank configuration's work plus communication,
  // so N ranks cannot be more than N times as fast unless the two were measured under
  // different conditions: on the 2-GPU machine the host's speed drifted 2.5x within minutes
  // (docs/benchmarks.md, 2026-11-23), and eager steps are host work. Said where the whole
  // interval lies above N, so noise alone does not raise it.
  void superlinear_caution() {
    std::vector<std::string> items;
    for (const Comparison& c : a_.comparisons) {
      const ConfigParams& p = cfg(c.n_gpu).params;
      if (p.scaling != "weak" || !c.speedup.speedup_ci.valid() || c.speedup.speedup_ci.low <= p.world_size) continue;
      items.push_back(p.model + " at batch " + std::to_string(p.batch_per_rank) + " per rank (" + variant_of(p) +
                      "): " + speedup_text(c.speedup) + " on " + std::to_string(p.world_size) + " ranks, efficiency " +
                      percent(c.speedup.speedup / p.world_size));
    }
    if (items.empty()) return;
    doc_.paragraph("**Caution:** " + std::to_string(items.size()) +
                   (items.size() == 1 ? " comparison is" : " comparisons are") +
                   " faster than linear under weak scaling, with the whole 95% interval above the rank count. "
                   "Data parallelism cannot do that with the same per-rank work, so the 1-rank and N-rank "
                   "configurations ran under different conditions (for example the host's speed drifting "
                   "between them, which moves host-bound eager steps). Treat these speedups as unreliable and "
                   "measure them again close together:");
    doc_.bullets(items);
  }

  std::string break_even_sentence(const ThresholdGroup& group, const BreakEven& be) const {
    return "Break-even model size for " + group.label() + " (speedup 1.0 on a least-squares line of speedup "
           "against log10 parameters, " + std::to_string(be.configs) + " configurations): " +
           break_even_verdict(group, be, "");
  }

  // The pooled fit, then one per model family where the group compared several: families
  // whose speedups grow differently with size can put the pooled crossing where neither is.
  void break_even_paragraphs(const ThresholdGroup& group) {
    doc_.paragraph(break_even_sentence(group, a_.break_even.at(group)));
    const auto families = a_.break_even_by_family.find(group);
    if (families == a_.break_even_by_family.end()) return;
    std::vector<std::string> items;
    for (const auto& [family, be] : families->second)
      items.push_back(family + " (" + std::to_string(be.configs) + " configurations): " +
                      break_even_verdict(group, be, family));
    doc_.paragraph("The same fit for each model family on its own (" + group.label() +
                   "); where the families disagree, these are the break-evens to read, not the pooled one:");
    doc_.bullets(items);
  }

  // family empty: every model of the group.
  std::string break_even_verdict(const ThresholdGroup& group, const BreakEven& be, const std::string& family) const {
    if (!be.found)
      return "not found: " + (be.reason.empty() ? "no crossing" : be.reason) + "." + range_verdict(group, family);
    if (be.far_extrapolated)
      return "not given: the fitted line crosses 1.0 more than ten times outside the measured sizes, too far to "
             "quote." + range_verdict(group, family);
    std::string s = "**" + parameters_text(be.parameters) + " parameters**";
    if (be.ci.valid())
      s += ", 95% bootstrap CI " + parameters_text(be.ci.low) + " to " + parameters_text(be.ci.high);
    else
      s += " (no confidence interval: " + (be.reason.empty() ? std::string("too few resamples cross 1.0") : be.reason) + ")";
    if (be.extrapolated) s += "; extrapolated beyond the measured sizes, so treat it as a hint";
    return s + ".";
  }

  // Without a crossing, what the measurements do say: every size paid off (the break-even
  // lies below the smallest model measured), or none did (above the largest).
  std::string range_verdict(const ThresholdGroup& group, const std::string& family) const {
    int compared = 0, paid = 0;
    double smallest = kNaN, largest = kNaN;
    for (const Comparison& c : a_.comparisons) {
      const ConfigParams& p = cfg(c.n_gpu).params;
      if (!group.contains(p) || (!family.empty() && model_family(p.model) != family)) continue;
      ++compared;
      paid += c.paid_off;
      const double n = static_cast<double>(p.parameters);
      if (!(n >= smallest)) smallest = n;
      if (!(n <= largest)) largest = n;
    }
    if (compared == 0) return "";
    if (paid == compared)
      return " Every compared configuration paid off, so for this machine the break-even lies below the smallest "
             "model measured (" + parameters_text(smallest) + " parameters).";
    if (paid == 0)
      return " No compared configuration paid off, so the break-even lies above the largest model measured (" +
             parameters_text(largest) + " parameters), if there is one.";
    return "";
  }

  // ---- 2. Test configuration ------------------------------------------------------------
  void test_configuration() {
    doc_.heading("2. Test configuration");
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
      t.rows = {{"hosts", list(m.hostnames)},
                {"GPUs", list(m.gpu_names)},
                {"GPU link topology", known(m.link_topology)},
                {"GPU driver", known(m.gpu_driver)},
                {"CUDA", known(m.cuda_version)},
                {"NCCL", known(m.nccl_version)},
                {"MPI", known(m.mpi_version)},
                {"LibTorch", known(m.torch_version)},
                {"HDF5", known(m.hdf5_version)},
                {"ddpscale", known(m.tool_version) + " (commit " + known(m.git_commit) + ")"},
                {"study started (UTC)", known(m.created_utc)}};
      std::string nccl;
      for (const auto& [k, v] : m.nccl_variables) nccl += (nccl.empty() ? "" : " ") + k + "=" + v;
      t.rows.push_back({"NCCL variables in effect", nccl.empty() ? "none set" : nccl});
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

  // ---- 3. Model specifications -------------------------------------------------------
  void model_specifications() {
    doc_.heading("3. Model specifications");
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

  // ---- 4. Results per model -------------------------------------------------------------
  void results_per_model() {
    doc_.heading("4. Results per model");
    doc_.paragraph("Throughput is global samples per second (all ranks), mean ± half-width of the 95% t-interval "
                   "over runs; speedup is N ranks over 1 with a 95% bootstrap interval; p is Welch's two-tailed "
                   "test of N ranks against 1. The interval and p come from different methods and can disagree "
                   "near the edge (an interval just above 1 with p slightly over 0.05); 'paid off' requires p < "
                   "0.05. Memory is the largest rank's allocator peak, GPU utilisation the mean NVML sample (n/a "
                   "where none was taken, e.g. on CPU).");
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
    t.header = {"batch/" + unit, "1 " + unit + " samples/s", "N", "N " + unit + "s samples/s", "speedup [95% CI]",
                "efficiency", "p",
                "peak memory 1 → N", "GPU util 1 → N", "runs ok (1 / N)", "outliers (1 / N)"};
    if (show_settings) t.header.insert(t.header.begin() + 3, "overlap, bucket");
    t.right_aligned.assign(t.header.size(), true);
    for (const Comparison* c : comparisons) {
      const ConfigSummary& one = cfg(c->one_gpu);
      const ConfigSummary& n = cfg(c->n_gpu);
      std::vector<std::string> row = {
          std::to_string(n.params.batch_per_rank), throughput_text(one.throughput), std::to_string(n.params.world_size),
          throughput_text(n.throughput), speedup_text(c->speedup), percent(c->speedup.speedup / n.params.world_size),
          p_text(c->speedup.p_value), mib_text(one.peak_memory_bytes) + " → " + mib_text(n.peak_memory_bytes),
          percent(one.gpu_utilization_pct / 100) + " → " + percent(n.gpu_utilization_pct / 100),
          std::to_string(one.runs_ok) + "/" + std::to_string(one.runs_total) + " / " + std::to_string(n.runs_ok) + "/" +
              std::to_string(n.runs_total),
          std::to_string(one.outliers_removed) + " / " + std::to_string(n.outliers_removed)};
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

  // ---- 5. Where the time goes ----------------------------------------------------------
  void time_breakdown() {
    doc_.heading("5. Where the time goes");
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
      add_figure(bars, model + ": median ms per step by phase (data, forward, backward, exposed allreduce, optimizer)");
    }
    eager_against_graph();
  }

  // Each configuration run as one CUDA graph beside the same configuration run op by op.
  // The graph's step is what is left once the host no longer issues every kernel: eager /
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

  // ---- 6. NCCL profiles ---------------------------------------------------------------
  void nccl_profiles() {
    doc_.heading("6. NCCL profiles compared");
    if (a_.nccl_profiles.size() < 2) {
      doc_.paragraph("This study ran one NCCL profile (" + (a_.nccl_profiles.empty() ? "default" : a_.nccl_profiles[0]) +
                     "); run experiments/nccl-profiles.yaml with scripts/sweep-nccl-profiles.sh to compare settings.");
      return;
    }
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

  // ---- 7. Parameter thresholds --------------------------------------------------------
  void parameter_thresholds() {
    doc_.heading("7. Parameter-threshold analysis");
    if (a_.thresholds.empty()) {
      doc_.paragraph("No N-rank configuration was compared with 1 rank: no threshold can be derived.");
      return;
    }
    doc_.paragraph("A configuration pays off when N ranks are faster than 1 (speedup > 1) and the difference is "
                   "significant (Welch p < 0.05). Each row counts the compared configurations whose model lies in "
                   "the parameter range; the share's interval is Wilson's 95% score interval. Ranges without a "
                   "measurement say so.");
    for (const auto& [group, rows] : a_.thresholds) {
      doc_.heading(group.label() + " against 1", 3);
      ReportTable t;
      t.header = {"parameter range", "multi-GPU benefit", "confidence", "models measured"};
      for (const ThresholdRow& r : rows) {
        std::string models;
        for (const auto& m : r.models) models += (models.empty() ? "" : ", ") + m;
        const std::string benefit = r.measured ? r.word + " (" + std::to_string(r.paid_off) + " of " +
                                                     std::to_string(r.measured) + ", " + percent(r.share) + ")"
                                               : "not measured";
        t.rows.push_back({r.range.label, benefit, r.measured ? r.confidence : "n/a", models.empty() ? "none" : models});
      }
      doc_.table(t);
      break_even_paragraphs(group);
      pays_off_matrix(group);
      measured_threshold_table(group);
      speedup_plot(group);
    }
  }

  void pays_off_matrix(const ThresholdGroup& group) {
    std::set<int64_t> batches;
    std::map<std::string, std::map<int64_t, std::string>> cells;
    for (const Comparison& c : a_.comparisons) {
      const ConfigParams& p = cfg(c.n_gpu).params;
      if (!group.contains(p)) continue;
      batches.insert(p.batch_per_rank);
      std::string& cell = cells[p.model][p.batch_per_rank];
      cell += (cell.empty() ? "" : "; ") + std::string(c.paid_off ? "**yes** " : "no ") +
              (std::isfinite(c.speedup.speedup) ? format_number(c.speedup.speedup, 3) + "x" : "n/a");
    }
    ReportTable t;
    t.header = {"model", "parameters"};
    for (int64_t b : batches) t.header.push_back("batch " + std::to_string(b));
    t.right_aligned.assign(t.header.size(), true);
    t.right_aligned[0] = false;
    for (const std::string& model : a_.models) {
      if (!cells.count(model)) continue;
      std::vector<std::string> row = {model, group_thousands(parameters_of(model))};
      for (int64_t b : batches) row.push_back(cells[model].count(b) ? cells[model][b] : "not measured");
      t.rows.push_back(row);
    }
    doc_.paragraph("Does it pay off, model by batch size (yes = faster and significant):");
    doc_.table(t);
  }

  // Section 7's measured thresholds in one sentence: per family, the batch sizes that share
  // an outcome together, those where it paid off first ("mlp pays off from mlp@30M at batch
  // 256, but not even at mlp@500M at batch 16 and 64").
  void measured_threshold_sentence(const ThresholdGroup& group, const std::vector<MeasuredThreshold>& rows) {
    struct Outcome {
      std::string text;
      bool paid = true;
      std::vector<int64_t> batches;
    };
    std::map<std::string, std::vector<Outcome>> by_family;
    for (const MeasuredThreshold& m : rows) {
      const std::string text = m.pays_from < 0            ? "not even at " + m.largest_not_paying_model
                               : m.largest_not_paying < 0 ? "at every size measured (from " + m.pays_from_model + ")"
                                                          : "from " + m.pays_from_model;
      auto& outcomes = by_family[m.family];
      auto same = std::find_if(outcomes.begin(), outcomes.end(), [&](const Outcome& o) { return o.text == text; });
      if (same == outcomes.end()) outcomes.push_back({text, m.pays_from >= 0, {m.batch}});
      else same->batches.push_back(m.batch);
    }
    if (by_family.empty()) return;
    const auto listed = [](const std::vector<std::string>& items) {
      std::string text;
      for (size_t i = 0; i < items.size(); ++i)
        text += (i == 0 ? "" : i + 1 == items.size() ? (items.size() > 2 ? ", and " : " and ") : ", ") + items[i];
      return text;
    };
    std::vector<std::string> families;
    for (auto& [family, outcomes] : by_family) {
      std::vector<std::string> paid, not_paid;
      for (const Outcome& o : outcomes) {
        std::vector<std::string> batches;
        for (int64_t b : o.batches) batches.push_back(std::to_string(b));
        (o.paid ? paid : not_paid).push_back(o.text + " at batch " + listed(batches));
      }
      families.push_back(family + " pays off " + listed(paid) + (paid.empty() || not_paid.empty() ? "" : ", but ") +
                         listed(not_paid));
    }
    std::string text = "Measured thresholds for " + group.label() +
                       ", batch by batch with no fitted line (section 7; batch per rank): ";
    for (size_t i = 0; i < families.size(); ++i) text += (i == 0 ? "" : "; ") + families[i];
    doc_.paragraph(text + ".");
  }

  // The threshold read off the measurements, batch by batch, beside the fitted line (which
  // pools batch sizes and can mislead where the speedup depends on batch more than on size).
  void measured_threshold_table(const ThresholdGroup& group) {
    const auto found = a_.measured_thresholds.find(group);
    if (found == a_.measured_thresholds.end() || found->second.empty()) return;
    const auto size_text = [](const std::string& model, int64_t parameters) {
      return model + " (" + parameters_text(static_cast<double>(parameters)) + ")";
    };
    ReportTable t;
    t.header = {"family", "batch/rank", "sizes compared", "pays off from", "largest size that did not"};
    t.right_aligned = {false, true, true, false, false};
    for (const MeasuredThreshold& m : found->second) {
      const std::string from = m.pays_from < 0 ? "not even at the largest size measured"
                               : size_text(m.pays_from_model, m.pays_from) +
                                     (m.largest_not_paying < 0 ? ": every size measured" : " and every larger one");
      t.rows.push_back({m.family, std::to_string(m.batch), std::to_string(m.sizes), from,
                        m.largest_not_paying < 0 ? "none" : size_text(m.largest_not_paying_model, m.largest_not_paying)});
    }
    doc_.paragraph("From which size on did it pay off, measured batch by batch with no fitted line: the smallest "
                   "model from which every larger model of the family paid off; the threshold lies between it and "
                   "the largest size that did not:");
    doc_.table(t);
  }

  void speedup_plot(const ThresholdGroup& group) {
    std::map<int64_t, PlotSeries> by_batch;
    for (const Comparison& c : a_.comparisons) {
      const ConfigParams& p = cfg(c.n_gpu).params;
      if (!group.contains(p) || !std::isfinite(c.speedup.speedup)) continue;
      PlotSeries& s = by_batch[p.batch_per_rank];
      s.label = "batch " + std::to_string(p.batch_per_rank);
      s.x.push_back(static_cast<double>(p.parameters));
      s.y.push_back(c.speedup.speedup);
      s.y_low.push_back(c.speedup.speedup_ci.valid() ? c.speedup.speedup_ci.low : c.speedup.speedup);
      s.y_high.push_back(c.speedup.speedup_ci.valid() ? c.speedup.speedup_ci.high : c.speedup.speedup);
    }
    LinePlot plot;
    plot.name = "speedup_vs_parameters_" + group.stem();
    plot.title = "Speedup of " + group.label() + " over 1 against model size";
    plot.x_label = "parameters";
    plot.y_label = "speedup (95% bootstrap CI)";
    plot.log_x = true;
    plot.draw_reference_line = true;
    plot.reference_y = 1.0;
    for (auto& [batch, s] : by_batch) {
      sort_by_x(s);
      plot.series.push_back(s);
    }
    add_figure(plot, "Speedup of " + group.label() + " over 1 against parameters (log scale); above "
                     "the dashed line at 1.0 more ranks are faster");
  }

  static void sort_by_x(PlotSeries& s) {
    std::vector<size_t> order(s.x.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s.x[a] < s.x[b]; });
    PlotSeries sorted;
    sorted.label = s.label;
    for (size_t i : order) {
      sorted.x.push_back(s.x[i]);
      sorted.y.push_back(s.y[i]);
      sorted.y_low.push_back(s.y_low[i]);
      sorted.y_high.push_back(s.y_high[i]);
    }
    s = sorted;
  }

  // ---- 8. Cost ------------------------------------------------------------------------
  void cost() {
    doc_.heading("8. Cost");
    if (!std::isfinite(options_.price_per_gpu_hour)) {
      doc_.paragraph("Pass --price-per-gpu-hour PRICE to see the cost per million training samples at each rank "
                     "count (price x ranks / samples per hour).");
      return;
    }
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

  // ---- 9. Methodology -----------------------------------------------------------------
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
              "per configuration; the study's own commit is in section 2)";
    return text;
  }

  void methodology() {
    doc_.heading("9. Methodology and reproducibility");
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
            std::to_string(outliers) + " runs in all, counted per configuration in section 4.",
        "Failed runs (excluded, counted): " + std::to_string(failed) + ".",
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
  result.files.insert(result.files.end(), builder.plot_files().begin(), builder.plot_files().end());
  result.plots_note = builder.plots_note();
  return result;
}

}  // namespace ddpscale
