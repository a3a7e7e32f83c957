#include "results/report/report_drift.hpp"

#include "results/report/report_format.hpp"

#include <cmath>
#include <map>

namespace ddpscale {
namespace {

std::string us_text(double us) { return std::isfinite(us) ? format_number(us, 4) : "n/a"; }

std::string halves_text(double one, double n) {
  if (!std::isfinite(one) && !std::isfinite(n)) return "n/a";
  return us_text(one) + " → " + us_text(n);
}

std::string apart_text(double ratio) {
  const double drift = drift_of(ratio);
  if (!std::isfinite(drift)) return "n/a";
  return percent(drift) + (ratio >= 1 ? " slower" : " faster");
}

}  // namespace

DriftText::DriftText(const StudyAnalysis& analysis, const std::vector<ConfigRecord>& configs, ReportDocument& doc,
                     AddFigure add_figure)
    : a_(analysis), configs_(configs), doc_(doc), add_figure_(std::move(add_figure)), checks_(drift_checks(analysis)) {}

const DriftCheck* DriftText::check_of(size_t comparison) const {
  for (const DriftCheck& check : checks_)
    if (check.comparison == comparison) return &check;
  return nullptr;
}

std::string DriftText::calibration_note(size_t comparison) const {
  const DriftCheck* check = check_of(comparison);
  if (!check) return "";
  const int world = a_.configs[a_.comparisons[comparison].n_gpu].params.world_size;
  std::string note = "host calibration 1 → " + std::to_string(world) + " ranks: " +
                     halves_text(check->one_host_us, check->n_host_us) + " us (" + apart_text(check->host_ratio) + ")";
  if (std::isfinite(check->device_ratio))
    note += ", device launch " + halves_text(check->one_device_us, check->n_device_us) + " us (" +
            apart_text(check->device_ratio) + ")";
  if (check->drifted) return note + ": **drift flagged**";
  return note + (std::isfinite(check->host_ratio) ? ": host within " + percent(kDriftThreshold) : "");
}

void DriftText::write_section() {
  if (!has_calibration(configs_)) {
    doc_.paragraph("No run in these inputs carries the host-drift calibration (studies measured before ddpscale "
                   "recorded it), so whether each speedup's 1-rank and N-rank halves ran on a host of the same "
                   "speed cannot be checked here; the run order (Methodology) is the only guard for them.");
    return;
  }
  doc_.paragraph("Before every run each rank times a fixed piece of work that never changes: a host-only integer "
                 "loop (host) and, on GPUs, a sequence of tiny kernels launched one by one and waited for (device "
                 "launch). Its time is the host's speed at that moment, whatever the model does. A run's value is "
                 "rank 0's (rank 0 is in both halves of every comparison); a configuration's, the median over its "
                 "kept runs. A comparison is flagged when its halves' host medians lie more than " +
                 percent(kDriftThreshold) +
                 " apart: its speedup then mixes the model's scaling with the host's change. The device-launch "
                 "reading is shown beside it, not judged: it is noisier than 10% on its own "
                 "(docs/methodology.md, \"Host drift\").");
  const std::vector<CalibrationPoint> points = calibration_timeline(configs_);
  std::vector<double> host;
  for (const CalibrationPoint& p : points)
    if (std::isfinite(p.host_us)) host.push_back(p.host_us);
  if (!host.empty()) {
    const Summary s = summarize(host);
    doc_.paragraph("Host calibration over the study's " + std::to_string(host.size()) + " runs: median " +
                   us_text(s.median) + " us, from " + us_text(s.min) + " to " + us_text(s.max) +
                   " us (slowest / fastest " + format_number(s.max / s.min, 3) + "x).");
  }
  timeline_plot(points);
  halves_table();
}

void DriftText::timeline_plot(const std::vector<CalibrationPoint>& points) {
  for (const bool device : {false, true}) {
    std::map<int, PlotSeries> by_world;
    for (const CalibrationPoint& p : points) {
      const double y = device ? p.device_us : p.host_us;
      if (!std::isfinite(y)) continue;
      PlotSeries& s = by_world[p.world_size];
      s.label = std::to_string(p.world_size) + (p.world_size == 1 ? " rank" : " ranks");
      s.x.push_back(p.minutes);
      s.y.push_back(y);
    }
    if (by_world.empty()) continue;
    LinePlot plot;
    plot.name = device ? "calibration_device" : "calibration_host";
    plot.title = device ? "Device-launch calibration over the study" : "Host calibration over the study";
    plot.x_label = "minutes since the study's first run";
    plot.y_label = "us (rank 0)";
    for (auto& [world, s] : by_world) plot.series.push_back(s);
    add_figure_(plot, std::string(device ? "Device-launch" : "Host") +
                          " calibration before every run against time, by the run's rank count: a steady host "
                          "draws flat lines, drift shows as a step or a slope");
  }
}

void DriftText::halves_table() {
  if (checks_.empty()) return;
  ReportTable t;
  t.header = {"model", "batch/rank", "ranks", "settings", "host 1 → N (us)", "host apart", "device 1 → N (us)",
              "device apart", "efficiency [95% CI]", "flag"};
  t.right_aligned = {false, true, true, false, true, true, true, true, true, false};
  std::vector<std::string> flagged_names;
  for (const DriftCheck& check : checks_) {
    const Comparison& c = a_.comparisons[check.comparison];
    const ConfigParams& p = a_.configs[c.n_gpu].params;
    const double n = p.world_size;
    const std::string efficiency =
        percent(c.speedup.speedup / n) +
        (c.speedup.speedup_ci.valid()
             ? " [" + percent(c.speedup.speedup_ci.low / n) + ", " + percent(c.speedup.speedup_ci.high / n) + "]"
             : "");
    t.rows.push_back({p.model, std::to_string(p.batch_per_rank), std::to_string(p.world_size), variant_of(p),
                      halves_text(check.one_host_us, check.n_host_us), apart_text(check.host_ratio),
                      halves_text(check.one_device_us, check.n_device_us), apart_text(check.device_ratio), efficiency,
                      check.drifted ? "drift" : ""});
    if (check.drifted) flagged_names.push_back(p.model + " batch " + std::to_string(p.batch_per_rank));
  }
  std::string verdict = std::to_string(checks_.size() - flagged_names.size()) + " of " +
                        std::to_string(checks_.size()) + " comparisons ran their halves at host calibration speeds within " +
                        percent(kDriftThreshold) + " of each other";
  if (flagged_names.empty()) {
    verdict += ".";
  } else {
    verdict += "; flagged (treat their speedups as measured on two different hosts): ";
    for (size_t i = 0; i < flagged_names.size(); ++i) verdict += (i ? ", " : "") + flagged_names[i];
    verdict += ".";
  }
  doc_.paragraph(verdict);
  doc_.table(t);
}

}  // namespace ddpscale
