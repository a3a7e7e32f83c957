#include "results/report/report_answer.hpp"

#include "results/analysis/thresholds.hpp"
#include "results/report/report_format.hpp"
#include "results/report/report_thresholds.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace ddpscale {
namespace {

struct ModelOutcome {
  std::string model;
  int64_t parameters = 0;
  bool paid_somewhere = false;  // paid off at one batch at least
};

std::string ranks_phrase(const std::set<int>& worlds, const std::string& unit) {
  std::string text;
  for (int w : worlds) text += (text.empty() ? "" : " or ") + std::to_string(w);
  return text + " " + unit + "s";
}

std::string size_phrase(const std::vector<ModelOutcome>& models) {
  std::vector<const ModelOutcome*> paid, unpaid;
  for (const ModelOutcome& m : models) (m.paid_somewhere ? paid : unpaid).push_back(&m);
  const double smallest = static_cast<double>(models.front().parameters);
  const double largest = static_cast<double>(models.back().parameters);
  const std::string range = parameters_text(smallest) + (smallest == largest ? "" : " to " + parameters_text(largest)) +
                            " parameters";
  if (unpaid.empty()) return "for every model measured (" + range + ")";
  if (paid.empty()) return "for none of the models measured (" + range + ")";
  // models are sorted by size: does it pay off exactly from some size up?
  const int64_t smallest_paid = paid.front()->parameters;
  const bool from_size_up = std::all_of(unpaid.begin(), unpaid.end(),
                                        [&](const ModelOutcome* m) { return m->parameters < smallest_paid; });
  if (from_size_up)
    return "from " + paid.front()->model + " (" + parameters_text(static_cast<double>(smallest_paid)) +
           " parameters) up, and for no smaller model measured";
  return "for " + std::to_string(paid.size()) + " of " + std::to_string(models.size()) +
         " models measured, not by size alone: the smallest that paid off is " + paid.front()->model + " (" +
         parameters_text(static_cast<double>(smallest_paid)) + "), the largest that did not " +
         unpaid.back()->model + " (" + parameters_text(static_cast<double>(unpaid.back()->parameters)) + ")";
}

}  // namespace

std::string scaling_answer(const StudyAnalysis& analysis, const std::string& scaling) {
  std::map<std::string, ModelOutcome> by_model;
  std::set<int> worlds;
  size_t paid = 0, undecided = 0, total = 0;
  std::string unit = "rank";
  for (const Comparison& c : analysis.comparisons) {
    const ConfigParams& p = analysis.configs[c.n_gpu].params;
    if (p.scaling != scaling || p.engine != kEngineDdpscale) continue;  // PyTorch DDP's: its own section
    if (p.device == "cuda") unit = "GPU";
    ModelOutcome& m = by_model[p.model];
    m.model = p.model;
    m.parameters = p.parameters;
    m.paid_somewhere |= c.paid_off();
    worlds.insert(p.world_size);
    paid += c.paid_off();
    undecided += c.payoff == Payoff::undecided;
    ++total;
  }
  if (total == 0) return "";
  std::vector<ModelOutcome> models;
  for (const auto& [name, m] : by_model) models.push_back(m);
  std::sort(models.begin(), models.end(),
            [](const ModelOutcome& a, const ModelOutcome& b) { return a.parameters < b.parameters; });
  const std::string how = scaling == "weak" ? "Under weak scaling (the batch per " + unit + " fixed)"
                                            : "Under strong scaling (one global batch split over the " + unit + "s)";
  std::string text = how + ", " + ranks_phrase(worlds, unit) + " paid off (" + kPaidOffRule + ") in " +
                     std::to_string(paid) + " of " + std::to_string(total) + " comparisons";
  // Not paying off is a verdict only where the interval says so; where it holds 1, more
  // launches could still decide either way.
  if (undecided > 0)
    text += " (" + std::to_string(undecided) + " undecided: the speedup's interval holds 1)";
  if (paid == 0) return text + ", for none of the models measured.";
  text += paid == total ? ", at every batch size measured, " : ", ";
  return text + size_phrase(models) + ".";
}

void AnswerText::write() {
  std::string answer;
  for (const char* scaling : {"weak", "strong"}) {
    const std::string sentence = scaling_answer(a_, scaling);
    if (!sentence.empty()) answer += (answer.empty() ? "" : " ") + sentence;
  }
  if (answer.empty()) return;
  doc_.paragraph("**The answer.** " + answer);
  speedup_chart();
}

// One point per model and series: the comparison at the model's largest batch in it (per
// rank under weak scaling, global under strong), where the GPUs have the most work to share.
void AnswerText::speedup_chart() {
  std::set<std::string> scalings;
  for (const Comparison& c : a_.comparisons) scalings.insert(a_.configs[c.n_gpu].params.scaling);
  const auto batch_of = [&](const Comparison& k) {
    const ConfigParams& q = a_.configs[k.n_gpu].params;
    return q.scaling == "weak" ? q.batch_per_rank : q.global_batch;
  };
  std::map<std::string, std::map<std::string, const Comparison*>> chosen;  // series -> model -> comparison
  for (const Comparison& c : a_.comparisons) {
    const ConfigParams& p = a_.configs[c.n_gpu].params;
    if (!std::isfinite(c.speedup.speedup)) continue;
    std::string series = model_family(p.model) + ", " + std::to_string(p.world_size) + " ranks" +
                         exec_dtype_text(p.exec, p.dtype) + engine_text(p.engine) + (scalings.size() > 1 ? ", " + p.scaling : "");
    const Comparison*& slot = chosen[series][p.model];
    if (!slot || batch_of(c) > batch_of(*slot)) slot = &c;
  }
  if (chosen.empty()) return;
  LinePlot plot;
  plot.name = "answer_speedup";
  plot.title = "Speedup against model size (95% CI), largest batch per model";
  plot.x_label = "parameters";
  plot.y_label = "speedup over 1 rank";
  plot.log_x = true;
  plot.draw_reference_line = true;
  plot.reference_y = 1.0;
  for (const auto& [label, models] : chosen) {
    PlotSeries s;
    s.label = label;
    for (const auto& [model, c] : models)
      add_speedup_point(s, static_cast<double>(a_.configs[c->n_gpu].params.parameters), c->speedup);
    sort_by_x(s);
    plot.series.push_back(s);
  }
  add_figure_(plot, "Speedup of N ranks over 1 against the model's parameter count, one line per model family, at "
                    "each model's largest batch measured (per rank under weak scaling, global under strong); "
                    "a point whose whole 95% interval lies above the dashed line at 1 paid off");
}

}  // namespace ddpscale
