#include "results/report/report_time_breakdown.hpp"

#include "results/report/report_format.hpp"
#include "results/report/report_why_not.hpp"
#include "results/store/text_io.hpp"

#include <cmath>
#include <map>
#include <vector>

namespace ddpscale {

std::string phase_cell(const ConfigSummary& c, Phase p) {
  if (c.params.exec == "graph" && p != Phase::step) return "not split";  // one CUDA graph per step
  if (c.params.world_size == 1 && (p == Phase::allreduce_total || p == Phase::allreduce_exposed))
    return "none";  // one rank runs no communication code
  return mean_pm_ci(c.phase_us[static_cast<size_t>(p)], fixed_ms, fixed_ms);
}

void TimeBreakdownText::write_section() {
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
    add_bars_(bars, model + ": median ms per step by phase (data, forward, backward, exposed allreduce, optimizer)");
  }
  eager_against_graph();
}

// On CPU the ranks' compute phases depend on whether they shared the host's cores: said
// for each N-rank configuration whose ranks recorded their CPU masks and threads.
void TimeBreakdownText::cpu_cores_of(const std::string& model) {
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
void TimeBreakdownText::eager_against_graph() {
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

// One configuration's bar: the median time per step of each phase, in ms.
void TimeBreakdownText::add_bar(StackedBarPlot& bars, const ConfigSummary& c) const {
  bars.bars.push_back("b" + std::to_string(c.params.batch_per_rank) + " x" + std::to_string(c.params.world_size) +
                      (a_.nccl_profiles.size() > 1 ? " " + c.params.nccl_profile : ""));
  const Phase segments[] = {Phase::data, Phase::forward, Phase::backward, Phase::allreduce_exposed, Phase::optimizer};
  for (size_t i = 0; i < bars.segments.size(); ++i) {
    const bool no_communication = c.params.world_size == 1 && segments[i] == Phase::allreduce_exposed;
    const double median_us = no_communication ? 0.0 : c.phase_us[static_cast<size_t>(segments[i])].median;
    bars.values[i].push_back(std::isfinite(median_us) ? median_us / 1000 : 0.0);
  }
}

}  // namespace ddpscale
