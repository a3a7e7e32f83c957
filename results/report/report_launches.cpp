#include "results/report/report_launches.hpp"

#include "results/report/report_format.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace ddpscale {
namespace {

const std::vector<float>* instrument(const RankTimings& rank, const char* name) {
  const auto found = rank.instruments.find(name);
  return found == rank.instruments.end() || found->second.empty() ? nullptr : &found->second;
}

std::string mhz_text(double mhz) { return std::isfinite(mhz) ? format_number(std::round(mhz), 4) : "n/a"; }

// Each launch's mean, "n/a" for a launch without a kept run; launches after the last one
// measured are left out (a comparison that met the spec's target_half_width stopped there).
std::string launch_means_text(const LaunchGroups& groups) {
  size_t end = groups.size();
  while (end > 1 && groups[end - 1].empty()) --end;
  std::string text;
  for (size_t l = 0; l < end; ++l)
    text += (text.empty() ? "" : " / ") + (groups[l].empty() ? "n/a" : format_number(mean(groups[l]), 4));
  return text;
}

// The launches a configuration's kept runs came from, and "6 of 40" where the study had more.
int measured_launches(const ConfigSummary& c) {
  return static_cast<int>(std::set<int>(c.kept_launches.begin(), c.kept_launches.end()).size());
}
std::string launches_text(const ConfigSummary& c) {
  const int measured = measured_launches(c);
  return measured < c.launches ? std::to_string(measured) + " of " + std::to_string(c.launches)
                               : std::to_string(c.launches);
}

std::string half_width_text(const ConfigSpeedup& s) {
  const double h = relative_half_width(s.speedup, s.speedup_ci);
  return std::isfinite(h) ? "±" + short_percent(h) : "n/a";
}

// A count of launches, or a median of counts: "30", "38.5".
std::string launch_count_text(double launches) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", launches);
  return text;
}

std::string levels_text(const ConfigSummary& c) {
  if (!c.separate_levels) return "no";
  return "**yes**: " + format_number(c.levels.low_mean, 4) + " (" + std::to_string(c.levels.low_count) + " runs) and " +
         format_number(c.levels.high_mean, 4) + " (" + std::to_string(c.levels.n - c.levels.low_count) +
         " runs), p = " + p_text(c.levels.p_value);
}

}  // namespace

std::string config_label(const ConfigParams& p) {
  return p.model + " b" + std::to_string(p.batch_per_rank) + " " + ranks_text(p) + exec_dtype_text(p.exec, p.dtype) +
         engine_text(p.engine);
}

std::string core_ranges(const std::vector<int>& cores) {
  std::string text;
  for (size_t i = 0; i < cores.size();) {
    size_t j = i;
    while (j + 1 < cores.size() && cores[j + 1] == cores[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + std::to_string(cores[i]) + (j > i ? "-" + std::to_string(cores[j]) : "");
    i = j + 1;
  }
  return text;
}

std::string clock_event_reason_names(uint64_t reasons) {
  // nvml.h's nvmlClocksEventReason* bits.
  static const std::pair<uint64_t, const char*> kNames[] = {
      {0x1, "GPU idle"},          {0x2, "application clocks"}, {0x4, "SW power cap"},
      {0x8, "HW slowdown"},       {0x10, "sync boost"},        {0x20, "SW thermal slowdown"},
      {0x40, "HW thermal slowdown"}, {0x80, "HW power brake"}, {0x100, "display clock"}};
  std::string text;
  for (const auto& [bit, name] : kNames)
    if (reasons & bit) text += (text.empty() ? "" : ", ") + std::string(name);
  return text.empty() ? "none" : text;
}

std::vector<LaunchInstruments> instruments_by_launch(const ConfigRecord& config) {
  std::map<int, std::vector<const RunRecord*>> by_launch;
  for (const RunRecord& run : config.runs) by_launch[run.launch].push_back(&run);
  std::vector<LaunchInstruments> result;
  for (const auto& [launch, runs] : by_launch) {
    LaunchInstruments li;
    li.launch = launch;
    li.runs = runs.size();
    std::set<int> cores;
    std::vector<double> mhz, switches, steal, sm, memory, shift, throughput;
    for (const RunRecord* run : runs) {
      if (run->status == RunStatus::ok) throughput.push_back(run->samples_per_second);
      double run_switches = 0;
      bool has_switches = false;
      for (const RankTimings& rank : run->ranks) {
        if (rank.process_id > 0 &&
            std::find(li.process_ids.begin(), li.process_ids.end(), rank.process_id) == li.process_ids.end())
          li.process_ids.push_back(rank.process_id);
        if (const auto* c = instrument(rank, "cpu_cores"))
          for (float core : *c) cores.insert(static_cast<int>(core));
        if (const auto* m = instrument(rank, "cpu_mhz")) mhz.push_back(m->front());
        if (const auto* s = instrument(rank, "context_switches"); s && s->size() >= 2) {
          run_switches += (*s)[1];
          has_switches = true;
        }
        if (const auto* s = instrument(rank, "gpu_sm_clock_mhz")) sm.insert(sm.end(), s->begin(), s->end());
        if (const auto* s = instrument(rank, "gpu_memory_clock_mhz")) memory.insert(memory.end(), s->begin(), s->end());
        if (const auto* r = instrument(rank, "gpu_clock_event_reasons"))
          li.clock_event_reasons |= static_cast<uint64_t>(r->front());
        if (const auto* m = instrument(rank, "process_shift_mib")) shift.push_back(m->front());
      }
      if (has_switches) switches.push_back(run_switches);
      // Steal is host-wide: rank 0's reading stands for the run.
      if (!run->ranks.empty())
        if (const auto* s = instrument(run->ranks.front(), "host_steal_ms")) steal.push_back(s->front());
    }
    li.cores = core_ranges({cores.begin(), cores.end()});
    li.cpu_mhz = median(mhz);
    li.involuntary_switches = median(switches);
    li.steal_ms = median(steal);
    li.gpu_sm_clock_mhz = median(sm);
    li.gpu_memory_clock_mhz = median(memory);
    li.process_shift_mib = median(shift);
    li.mean_throughput = mean(throughput);
    result.push_back(li);
  }
  return result;
}

LaunchText::LaunchText(const StudyAnalysis& analysis, const std::vector<ConfigRecord>& configs,
                       const LaunchRule& rule, ReportDocument& doc)
    : a_(analysis), configs_(configs), rule_(rule), doc_(doc) {}

LaunchText::PrecisionTally LaunchText::precision_tally() const {
  PrecisionTally tally;
  for (const ConfigSummary& c : a_.configs) tally.most_launches = std::max(tally.most_launches, c.launches);
  int last_launch_measured = 0;  // 1-based
  for (const ConfigRecord& record : configs_)
    for (const RunRecord& run : record.runs) last_launch_measured = std::max(last_launch_measured, run.launch + 1);
  for (const Comparison& c : a_.comparisons) {
    ++tally.comparisons;
    const double h = relative_half_width(c.speedup.speedup, c.speedup.speedup_ci);
    const ConfigSummary& n = a_.configs[c.n_gpu];
    if (std::isfinite(h) && h <= rule_.target_half_width) {
      tally.launches_of_met.push_back(c.speedup.launches);
    } else {
      const std::string entry = config_label(n.params) + ": " + half_width_text(c.speedup) + " over " +
                                std::to_string(c.speedup.launches) + " launches";
      // Still open while the study never reached its last launch: it stopped (a time limit,
      // a crash) before the rule let this comparison go, and --resume goes on. (A study
      // that did reach it and lacks a launch here lost that launch's runs: they ran out.)
      if (c.speedup.launches < n.launches && last_launch_measured < n.launches)
        tally.short_unfinished.push_back(entry);
      else
        tally.short_of_target.push_back(entry);
    }
  }
  return tally;
}

const ConfigRecord* LaunchText::record_of(const std::string& id) const {
  for (const ConfigRecord& record : configs_)
    if (record.id == id) return &record;
  return nullptr;
}

std::string LaunchText::summary_note(const std::string& section_ref) const {
  int most_launches = 1;
  size_t leveled = 0;
  for (const ConfigSummary& c : a_.configs) {
    most_launches = std::max(most_launches, c.launches);
    if (c.separate_levels) ++leveled;
  }
  if (most_launches == 1 && leveled == 0) return "";
  std::string text;
  if (rule_.target_half_width > 0 && !a_.comparisons.empty()) {
    const PrecisionTally tally = precision_tally();
    const std::string target = "±" + short_percent(rule_.target_half_width);
    text += "Launches ran until each speedup's 95% interval was within " + target + " of it, " +
            std::to_string(tally.most_launches) + " at most: " + std::to_string(tally.launches_of_met.size()) +
            " of " + std::to_string(tally.comparisons) + " speedups got there" +
            (tally.launches_of_met.empty()
                 ? ""
                 : " (median " + launch_count_text(median(tally.launches_of_met)) + " launches)") +
            (tally.short_of_target.empty() ? "" : "; " + std::to_string(tally.short_of_target.size()) +
                                                      " did not within the launches allowed") +
            (tally.short_unfinished.empty()
                 ? ""
                 : "; " + std::to_string(tally.short_unfinished.size()) +
                       " had not yet when the study stopped, before its last launch (the sweep with --resume goes "
                       "on)") +
            ". ";
  } else if (most_launches > 1) {
    text += "Each configuration's runs came from " + std::to_string(most_launches) +
            " launches of fresh processes; its intervals are computed over launches. ";
  }
  if (leveled > 0)
    text += std::to_string(leveled) + " of " + std::to_string(a_.configs.size()) +
            " configurations ran at two separate speed levels (" + section_ref + ").";
  else
    text += "No configuration's runs fell into separate speed levels (" + section_ref + ").";
  return text;
}

void LaunchText::write_section() {
  int most_launches = 1;
  for (const ConfigSummary& c : a_.configs) most_launches = std::max(most_launches, c.launches);
  if (most_launches > 1)
    doc_.paragraph(
        "Each configuration's runs were split over " + std::to_string(most_launches) +
        " launches: fresh processes, communicators and device contexts, as a user's rerun gets. Runs of one launch "
        "share its host state, so a speedup's interval is computed over launches (a two-level bootstrap: launches, "
        "then runs within each; a Student-t quantile with launches - 1 degrees of freedom), and is as wide as the "
        "launches disagree. The share between launches below is the intraclass correlation of the throughputs "
        "(one-way random effects, method of moments).");
  else
    doc_.paragraph(
        "This study ran in one launch: its intervals cover what varies between runs of one set of processes, not "
        "between launches. A rerun may meet another host state; `launches:` in the spec samples it.");
  doc_.paragraph(
      "Speed levels: the runs' throughputs are tested for two separate levels with Engelman and Hartigan's test for "
      "two clusters (the largest share of the sum of squares one split explains, against normal samples of the same "
      "size); a configuration is flagged at p < 0.01 when each level holds two runs or more and the levels are at "
      "least 5% apart.");
  precision_paragraph();
  spread_table();
  instruments_table();
}

void LaunchText::precision_paragraph() {
  if (rule_.target_half_width <= 0 || a_.comparisons.empty()) return;
  const PrecisionTally tally = precision_tally();
  const int least = rule_.min_launches > 0 ? rule_.min_launches : std::min(kDefaultMinLaunches, tally.most_launches);
  const std::string target = "±" + short_percent(rule_.target_half_width);
  std::string text = "Launches until precise (the spec's target_half_width " +
                     launch_count_text(rule_.target_half_width) + "): every comparison ran " +
                     std::to_string(least) + " launches; after each later one, a comparison whose speedup's 95% " +
                     "interval over the launches so far was within " + target + " of the speedup got no more, the " +
                     "others got the next one, up to " + std::to_string(tally.most_launches) + ". " +
                     std::to_string(tally.launches_of_met.size()) + " of " + std::to_string(tally.comparisons) +
                     " speedups met the target";
  if (!tally.launches_of_met.empty()) {
    const auto [low, high] = std::minmax_element(tally.launches_of_met.begin(), tally.launches_of_met.end());
    text += *low == *high ? ", after " + launch_count_text(*low) + " launches"
                          : ", after " + launch_count_text(*low) + " to " + launch_count_text(*high) +
                                " launches (median " + launch_count_text(median(tally.launches_of_met)) + ")";
  }
  text += ".";
  if (!tally.short_of_target.empty()) {
    text += " Short of it when the launches ran out: ";
    for (size_t i = 0; i < tally.short_of_target.size(); ++i)
      text += (i ? "; " : "") + tally.short_of_target[i];
    text += ".";
  }
  if (!tally.short_unfinished.empty()) {
    text += " Short of it when the study stopped, with launches left (the study is unfinished: the same sweep "
            "command with --resume measures them): ";
    for (size_t i = 0; i < tally.short_unfinished.size(); ++i)
      text += (i ? "; " : "") + tally.short_unfinished[i];
    text += ".";
  }
  text += " Stopping on the interval's width, never on the speedup itself, keeps the interval honest; the "
          "simulation in docs/methodology.md (\"Launches\") gives its coverage.";
  doc_.paragraph(text);
}

double LaunchText::planned_half_width() const {
  return rule_.target_half_width > 0 ? rule_.target_half_width : kPlannedHalfWidth;
}

// The launches an N-rank configuration's speedup interval would need for a half-width of
// planned_half_width() at the spread between launches it shows (launches_for_half_width); -1
// for a 1-rank configuration and where it cannot be said.
int LaunchText::launches_needed(size_t config) const {
  for (const Comparison& c : a_.comparisons)
    if (c.n_gpu == config)
      return launches_for_half_width(c.speedup.speedup, c.speedup.speedup_ci, c.speedup.launches,
                                     planned_half_width());
  return -1;
}

void LaunchText::spread_table() {
  ReportTable table;
  const std::string planned = "±" + short_percent(planned_half_width());
  table.header = {"configuration", "launches", "runs kept", "samples/s per launch", "between launches",
                  "separate levels", "speedup's 95% half-width", "launches for a " + planned + " speedup interval"};
  table.right_aligned = {false, true, true, true, true, false, true, true};
  std::vector<double> needed;
  for (size_t i = 0; i < a_.configs.size(); ++i) {
    const ConfigSummary& c = a_.configs[i];
    const LaunchGroups groups = throughputs_by_launch(c);
    const int launches = launches_needed(i);
    if (launches > 0) needed.push_back(launches);
    std::string half_width = "";
    for (const Comparison& comparison : a_.comparisons)
      if (comparison.n_gpu == i) half_width = half_width_text(comparison.speedup);
    table.rows.push_back({config_label(c.params), launches_text(c), std::to_string(c.kept_throughputs.size()),
                          launch_means_text(groups),
                          std::isfinite(c.launch_variance.between_share) ? percent(c.launch_variance.between_share)
                                                                         : "n/a",
                          levels_text(c), half_width, launches > 0 ? std::to_string(launches) : "n/a"});
  }
  doc_.table(table);
  if (needed.empty()) return;
  doc_.paragraph(
      "The last column sizes a rerun: at the spread between launches each speedup's interval shows, the launches "
      "that would bring its 95% interval to " + planned + " of the speedup (Kalibera and Jones's rule of sizing repetitions "
      "by the variance at the level that varies; docs/methodology.md, \"Launches\"). Median over the " +
      std::to_string(needed.size()) + " speedups: " + launch_count_text(median(needed)) + " launches; n/a where "
      "more than 1,000 would be needed or the interval cannot be formed.");
}

void LaunchText::instruments_table() {
  bool any = false;
  for (const ConfigRecord& record : configs_)
    for (const RunRecord& run : record.runs)
      for (const RankTimings& rank : run.ranks) any = any || !rank.instruments.empty();
  if (!any) {
    doc_.paragraph("The runs carry no instruments (written before ddpscale recorded them).");
    return;
  }
  doc_.paragraph(
      "What each launch's runs met (medians over its runs): the process ids, the cores the ranks' threads last ran "
      "on, their clock, the involuntary context switches per run (all ranks), the hypervisor's steal per run (all "
      "cores), the GPUs' SM and memory clocks during the measured steps and every clock-event reason NVML gave, "
      "and, where the study's launches hold device memory first in turn (process_shifts_mib), how much.");
  bool gpu = false;
  for (const ConfigSummary& c : a_.configs) gpu = gpu || c.params.device == "cuda";
  // Each configuration's launches, once: they also decide whether the table needs the column
  // of memory held first, only where some launch held some (process_shifts_mib).
  std::vector<std::pair<const ConfigSummary*, std::vector<LaunchInstruments>>> launches_of;
  bool shifted = false;
  for (const ConfigSummary& c : a_.configs) {
    const ConfigRecord* record = record_of(c.id);
    if (!record) continue;
    launches_of.emplace_back(&c, instruments_by_launch(*record));
    for (const LaunchInstruments& li : launches_of.back().second) shifted = shifted || li.process_shift_mib > 0;
  }
  ReportTable table;
  table.header = {"configuration", "launch", "runs", "samples/s", "process ids", "cores", "CPU MHz",
                  "involuntary switches", "steal ms"};
  if (gpu) table.header.insert(table.header.end(), {"SM MHz", "memory MHz", "clock events"});
  table.right_aligned.assign(table.header.size(), true);
  table.right_aligned[0] = table.right_aligned[4] = table.right_aligned[5] = false;
  if (gpu) table.right_aligned.back() = false;
  if (shifted) {
    table.header.push_back("MiB held first");
    table.right_aligned.push_back(true);
  }
  for (const auto& [c, launches] : launches_of) {
    for (const LaunchInstruments& li : launches) {
      std::string pids;
      for (int64_t pid : li.process_ids) pids += (pids.empty() ? "" : ",") + std::to_string(pid);
      std::vector<std::string> row = {config_label(c->params), std::to_string(li.launch + 1), std::to_string(li.runs),
                                      format_number(li.mean_throughput, 4), pids.empty() ? "n/a" : pids,
                                      li.cores.empty() ? "n/a" : li.cores, mhz_text(li.cpu_mhz),
                                      format_number(li.involuntary_switches, 3), format_number(li.steal_ms, 3)};
      if (gpu)
        row.insert(row.end(), {mhz_text(li.gpu_sm_clock_mhz), mhz_text(li.gpu_memory_clock_mhz),
                               clock_event_reason_names(li.clock_event_reasons)});
      if (shifted)
        row.push_back(std::isnan(li.process_shift_mib) ? "n/a" : std::to_string(std::lround(li.process_shift_mib)));
      table.rows.push_back(row);
    }
  }
  doc_.table(table);
}

}  // namespace ddpscale
