#include "results/report/report_thresholds.hpp"

#include "results/report/report_format.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace ddpscale {

int64_t parameters_of(const StudyAnalysis& analysis, const std::string& model) {
  for (const ConfigSummary& c : analysis.configs)
    if (c.params.model == model) return c.params.parameters;
  return 0;
}

std::string ThresholdsText::break_even_sentence(const ThresholdGroup& group, const BreakEven& be) const {
  return "Break-even model size for " + group.label() + " (speedup 1.0 on a least-squares line of speedup "
         "against log10 parameters, " + std::to_string(be.configs) + " configurations): " +
         break_even_verdict(group, be, "");
}

// The pooled fit, then one per model family where the group compared several: families
// whose speedups grow differently with size can put the pooled crossing where neither is.
void ThresholdsText::break_even_paragraphs(const ThresholdGroup& group) {
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
std::string ThresholdsText::break_even_verdict(const ThresholdGroup& group, const BreakEven& be,
                                               const std::string& family) const {
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
std::string ThresholdsText::range_verdict(const ThresholdGroup& group, const std::string& family) const {
  int compared = 0, paid = 0;
  double smallest = kNaN, largest = kNaN;
  for (const Comparison& c : a_.comparisons) {
    const ConfigParams& p = cfg(c.n_gpu).params;
    if (!group.contains(p) || (!family.empty() && model_family(p.model) != family)) continue;
    ++compared;
    paid += c.paid_off();
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

void ThresholdsText::write_section() {
  if (a_.thresholds.empty()) {
    doc_.paragraph("No N-rank configuration was compared with 1 rank: no threshold can be derived.");
    return;
  }
  doc_.paragraph("Each row counts the compared configurations whose model lies in the parameter range and how "
                 "many of them paid off (as the executive summary defines it); the share's interval is Wilson's "
                 "95% score interval. Ranges without a measurement say so.");
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

void ThresholdsText::pays_off_matrix(const ThresholdGroup& group) {
  std::set<int64_t> batches;
  std::map<std::string, std::map<int64_t, std::string>> cells;
  bool any_undecided = false;
  for (const Comparison& c : a_.comparisons) {
    const ConfigParams& p = cfg(c.n_gpu).params;
    if (!group.contains(p)) continue;
    batches.insert(p.batch_per_rank);
    std::string& cell = cells[p.model][p.batch_per_rank];
    const char* word = c.payoff == Payoff::paid_off ? "**yes** " : c.payoff == Payoff::undecided ? "undecided " : "no ";
    any_undecided = any_undecided || c.payoff == Payoff::undecided;
    cell += (cell.empty() ? "" : "; ") + std::string(word) +
            (std::isfinite(c.speedup.speedup) ? format_number(c.speedup.speedup, 3) + "x" : "n/a");
  }
  ReportTable t;
  t.header = {"model", "parameters"};
  for (int64_t b : batches) t.header.push_back("batch " + std::to_string(b));
  t.right_aligned.assign(t.header.size(), true);
  t.right_aligned[0] = false;
  for (const std::string& model : a_.models) {
    if (!cells.count(model)) continue;
    std::vector<std::string> row = {model, group_thousands(parameters_of(a_, model))};
    for (int64_t b : batches) row.push_back(cells[model].count(b) ? cells[model][b] : "not measured");
    t.rows.push_back(row);
  }
  doc_.paragraph(std::string("Did it pay off, model by batch size (yes = paid off") +
                 (any_undecided ? "; undecided = the speedup's interval holds 1" : "") + "):");
  doc_.table(t);
}

// The section's measured thresholds in one sentence: per family, the batch sizes that share
// an outcome together, those where it paid off first ("mlp pays off from mlp@30M at batch
// 256, but not even at mlp@500M at batch 16 and 64").
void ThresholdsText::measured_threshold_sentence(const ThresholdGroup& group,
                                                 const std::vector<MeasuredThreshold>& rows) {
  struct Outcome {
    std::string text;
    bool paid = true;
    bool undecided = false;
    std::vector<int64_t> batches;
  };
  std::map<std::string, std::vector<Outcome>> by_family;
  bool any_undecided = false;
  for (const MeasuredThreshold& m : rows) {
    // Where the largest size that did not pay off is undecided (its interval holds 1), the
    // family is not shown to pay off there, which is not the same as shown not to.
    const bool undecided = m.pays_from < 0 && m.largest_not_paying_undecided;
    any_undecided = any_undecided || undecided;
    const std::string text = undecided                  ? "undecided at " + m.largest_not_paying_model
                             : m.pays_from < 0          ? "not even at " + m.largest_not_paying_model
                             : m.largest_not_paying < 0 ? "at every size measured (from " + m.pays_from_model + ")"
                                                        : "from " + m.pays_from_model;
    auto& outcomes = by_family[m.family];
    auto same = std::find_if(outcomes.begin(), outcomes.end(), [&](const Outcome& o) { return o.text == text; });
    if (same == outcomes.end()) outcomes.push_back({text, m.pays_from >= 0, undecided, {m.batch}});
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
    bool family_undecided = false;
    for (const Outcome& o : outcomes) {
      family_undecided = family_undecided || o.undecided;
      std::vector<std::string> batches;
      for (int64_t b : o.batches) batches.push_back(std::to_string(b));
      (o.paid ? paid : not_paid).push_back(o.text + " at batch " + listed(batches));
    }
    if (paid.empty())
      families.push_back(family + (family_undecided ? " is not shown to pay off, " : " does not pay off, ") +
                         listed(not_paid));
    else
      families.push_back(family + " pays off " + listed(paid) + (not_paid.empty() ? "" : ", but ") + listed(not_paid));
  }
  std::string text = "Measured thresholds for " + group.label() +
                     ", batch by batch with no fitted line (" + own_section_ + "; batch per rank): ";
  for (size_t i = 0; i < families.size(); ++i) text += (i == 0 ? "" : "; ") + families[i];
  doc_.paragraph(text + "." + (any_undecided ? " Undecided: the speedup's 95% interval holds 1." : ""));
}

// The threshold read off the measurements, batch by batch, beside the fitted line (which
// pools batch sizes and can mislead where the speedup depends on batch more than on size).
void ThresholdsText::measured_threshold_table(const ThresholdGroup& group) {
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
                      m.largest_not_paying < 0 ? "none"
                                               : size_text(m.largest_not_paying_model, m.largest_not_paying) +
                                                     (m.largest_not_paying_undecided ? ", undecided" : "")});
  }
  doc_.paragraph("From which size on did it pay off, measured batch by batch with no fitted line: the smallest "
                 "model from which every larger model of the family paid off; the threshold lies between it and "
                 "the largest size that did not:");
  doc_.table(t);
}

void ThresholdsText::speedup_plot(const ThresholdGroup& group) {
  std::map<int64_t, PlotSeries> by_batch;
  for (const Comparison& c : a_.comparisons) {
    const ConfigParams& p = cfg(c.n_gpu).params;
    if (!group.contains(p) || !std::isfinite(c.speedup.speedup)) continue;
    PlotSeries& s = by_batch[p.batch_per_rank];
    s.label = "batch " + std::to_string(p.batch_per_rank);
    add_speedup_point(s, static_cast<double>(p.parameters), c.speedup);
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
  add_figure_(plot, "Speedup of " + group.label() + " over 1 against parameters (log scale); above "
                   "the dashed line at 1.0 more ranks are faster");
}

void add_speedup_point(PlotSeries& series, double x, const ConfigSpeedup& speedup) {
  const bool interval = speedup.speedup_ci.valid();
  series.x.push_back(x);
  series.y.push_back(speedup.speedup);
  series.y_low.push_back(interval ? speedup.speedup_ci.low : speedup.speedup);
  series.y_high.push_back(interval ? speedup.speedup_ci.high : speedup.speedup);
}

void sort_by_x(PlotSeries& s) {
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

}  // namespace ddpscale
