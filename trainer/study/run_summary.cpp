#include "trainer/study/run_summary.hpp"

#include "trainer/study/train_options.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace ddpscale {
namespace {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<long>(mid), values.end());
  double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  return (upper + *std::max_element(values.begin(), values.begin() + static_cast<long>(mid))) / 2.0;
}

// A run's per-phase median over steps: rank 0's phases, but the slowest rank's step
// time, since the slowest rank sets the pace of data-parallel training.
double run_phase_median(const RunRecord& run, Phase phase) {
  if (run.ranks.empty()) return 0.0;
  const auto p = static_cast<size_t>(phase);
  if (phase != Phase::step) {
    const auto& series = run.ranks[0].phase_us[p];
    return median_of(std::vector<double>(series.begin(), series.end()));
  }
  std::vector<double> slowest(run.ranks[0].phase_us[p].size(), 0.0);
  for (const auto& rank : run.ranks)
    for (size_t s = 0; s < slowest.size() && s < rank.phase_us[p].size(); ++s)
      slowest[s] = std::max(slowest[s], static_cast<double>(rank.phase_us[p][s]));
  return median_of(slowest);
}

bool has_phase_timing(const RunRecord& run) {
  return !run.ranks.empty() && !run.ranks[0].phase_us[static_cast<size_t>(Phase::step)].empty();
}

// With --alternate-phase-timing: throughput of the timed runs against the untimed ones.
void print_timing_cost_line(std::FILE* out, const std::vector<double>& timed, const std::vector<double>& untimed) {
  if (timed.empty() || untimed.empty()) return;
  const double on = median_of(timed), off = median_of(untimed);
  std::fprintf(out, "#   phase timing cost %+.2f%%: median %.1f samples/s over %zu timed runs, %.1f over %zu untimed\n",
               100.0 * (1.0 - on / off), on, timed.size(), off, untimed.size());
}

// What the overlap bought: the share of the allreduce that ran while backward still did.
// Nothing to say without communication (one rank) or without phase timing.
void print_overlap_line(std::FILE* out, double allreduce_total_us, double allreduce_exposed_us) {
  if (!(allreduce_total_us > 0)) return;
  const double hidden_us = std::max(0.0, allreduce_total_us - allreduce_exposed_us);
  std::fprintf(out, "#   overlap hid %.1f of %.1f us of allreduce (%.0f%%); %.1f us exposed after backward\n", hidden_us,
               allreduce_total_us, 100.0 * hidden_us / allreduce_total_us, allreduce_exposed_us);
}

// With --placement-shifts: each placement's median throughput over its ok runs, and how far
// the slowest placement is behind the fastest, which the runs' spread alone would hide
// inside one interval.
void print_placement_line(std::FILE* out, const ConfigRecord& record, const std::vector<int>& shifts) {
  if (shifts.size() < 2) return;
  std::vector<std::vector<double>> by_shift(shifts.size());
  for (const auto& run : record.runs)
    if (run.status == RunStatus::ok && run.index >= 0)
      by_shift[placement_of_run(shifts.size(), run.index)].push_back(run.samples_per_second);
  std::string parts;
  double slowest = std::numeric_limits<double>::infinity(), fastest = 0;
  for (size_t i = 0; i < shifts.size(); ++i) {
    if (by_shift[i].empty()) continue;
    const double median = median_of(by_shift[i]);
    slowest = std::min(slowest, median);
    fastest = std::max(fastest, median);
    char part[96];
    std::snprintf(part, sizeof(part), "%s%d MiB %.1f (%zu)", parts.empty() ? "" : ", ", shifts[i], median,
                  by_shift[i].size());
    parts += part;
  }
  if (fastest <= 0) return;
  std::fprintf(out, "#   by placement (MiB held first: median samples/s (runs)): %s; slowest %.2f%% behind fastest\n",
               parts.c_str(), 100.0 * (1.0 - slowest / fastest));
}

}  // namespace

void print_run_line(std::FILE* out, const RunRecord& run) {
  if (run.status != RunStatus::ok) {
    std::fprintf(out, "run %3d  FAILED: %s\n", run.index, run.failure.c_str());
    std::fflush(out);
    return;
  }
  if (!has_phase_timing(run)) {
    std::fprintf(out, "run %3d  %12.1f samples/s  untimed (no phase timing)  loss %.4f -> %.4f\n", run.index,
                 run.samples_per_second, run.loss.empty() ? 0.0 : run.loss.front(),
                 run.loss.empty() ? 0.0 : run.loss.back());
    std::fflush(out);
    return;
  }
  std::fprintf(out, "run %3d  %12.1f samples/s  step %9.1f us  fwd %8.1f  bwd %8.1f  ar-total %8.1f  ar-exposed %8.1f  opt %8.1f  loss %.4f -> %.4f\n",
               run.index, run.samples_per_second, run_phase_median(run, Phase::step),
               run_phase_median(run, Phase::forward), run_phase_median(run, Phase::backward),
               run_phase_median(run, Phase::allreduce_total), run_phase_median(run, Phase::allreduce_exposed),
               run_phase_median(run, Phase::optimizer), run.loss.empty() ? 0.0 : run.loss.front(),
               run.loss.empty() ? 0.0 : run.loss.back());
  std::fflush(out);
}

void print_config_summary(std::FILE* out, const ConfigRecord& record, const std::vector<int>& placement_shifts_mib) {
  std::vector<double> throughput, timed, untimed;
  std::vector<std::vector<double>> phases(kPhaseCount);
  for (const auto& run : record.runs) {
    if (run.status != RunStatus::ok) continue;
    throughput.push_back(run.samples_per_second);
    (has_phase_timing(run) ? timed : untimed).push_back(run.samples_per_second);
    if (!has_phase_timing(run)) continue;  // an untimed run has no phases, not phases of 0
    for (int p = 0; p < kPhaseCount; ++p) phases[static_cast<size_t>(p)].push_back(run_phase_median(run, static_cast<Phase>(p)));
  }
  std::fprintf(out, "# summary: %zu of %zu runs ok; medians over runs of per-run medians\n", throughput.size(),
               record.runs.size());
  if (throughput.empty()) return;
  std::fprintf(out, "#   throughput %.1f samples/s\n", median_of(throughput));
  print_timing_cost_line(out, timed, untimed);
  print_placement_line(out, record, placement_shifts_mib);
  if (timed.empty()) return;
  for (int p = 0; p < kPhaseCount; ++p)
    std::fprintf(out, "#   %-18s %10.1f us\n", phase_name(static_cast<Phase>(p)), median_of(phases[static_cast<size_t>(p)]));
  print_overlap_line(out, median_of(phases[static_cast<size_t>(Phase::allreduce_total)]),
                     median_of(phases[static_cast<size_t>(Phase::allreduce_exposed)]));
  std::fflush(out);
}

}  // namespace ddpscale

namespace ddpscale {

std::string config_summary_line(const ConfigRecord& record) {
  std::vector<double> throughput, step_us;
  for (const auto& run : record.runs) {
    if (run.status != RunStatus::ok) continue;
    throughput.push_back(run.samples_per_second);
    step_us.push_back(run_phase_median(run, Phase::step));
  }
  char line[160];
  std::snprintf(line, sizeof(line), "%.1f samples/s, step %.3f ms (medians), %zu/%zu runs ok", median_of(throughput),
                median_of(step_us) / 1000.0, throughput.size(), record.runs.size());
  return line;
}

}  // namespace ddpscale
