#include "results/report/report_paired.hpp"

#include "results/report/report_format.hpp"
#include "results/report/report_launches.hpp"
#include "results/statistics/paired_design.hpp"

#include <algorithm>
#include <cmath>

namespace ddpscale {
namespace {

std::string ratio_text(const PairedEstimate& e, const char* unit = "") {
  if (!std::isfinite(e.ratio)) return "n/a";
  std::string text = format_number(e.ratio, 4) + unit;
  if (e.ci.valid()) text += " [" + format_number(e.ci.low, 4) + ", " + format_number(e.ci.high, 4) + "]";
  return text;
}

std::string range_text(std::vector<double> values, int significant) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }), values.end());
  if (values.empty()) return "n/a";
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  if (format_number(*low, significant) == format_number(*high, significant)) return format_number(*low, significant);
  return format_number(*low, significant) + " to " + format_number(*high, significant);
}

}  // namespace

std::string aa_verdict(const PairedEstimate& e) {
  if (!e.ci.valid()) return "n/a";
  return ratio_text(e) + (e.ci.contains(1.0) ? ", holds 1" : ", **excludes 1**");
}

std::string solo_verdict(const PairedEstimate& e) {
  if (!e.ci.valid()) return std::isfinite(e.ratio) ? ratio_text(e) + " (no interval)" : "n/a";
  if (e.ci.contains(1.0)) return ratio_text(e) + ", level";
  const std::string size = percent(std::fabs(e.ratio - 1));
  return ratio_text(e) + ", paired " + (e.ratio < 1 ? "slower" : "faster") + " by " + size;
}

bool PairedText::applies() const {
  return std::any_of(a_.comparisons.begin(), a_.comparisons.end(), [](const Comparison& c) { return c.paired.measured; });
}

void PairedText::write_section() {
  doc_.paragraph(
      "Each speedup here comes from one live job per launch: an N-rank session on the first N ranks and a 1-rank "
      "session on each of them, all warmed up, take turns in blocks of steps a few milliseconds long, in an order "
      "drawn at random within each pair, so the two blocks of a pair meet the host in the same state; the 1-rank "
      "blocks go to the N ranks in turn, so both sides sample every rank's GPU, cores and process. Each pair "
      "gives one ratio; the 95% interval is over batches of consecutive pairs, lengthened until neighbouring "
      "batches no longer correlate, and over launches where their means differ more than the batches say "
      "(column \"set by\"; \"launches, study\": that excess moderated by the one the study's comparisons "
      "share, as the next paragraph says). Two checks run the same way: A/A pairs (1 rank against 1 rank, N against N), whose "
      "intervals must hold 1, and the solo checks, each side's paired throughput over that of the same "
      "configuration's own runs (continuous runs; the 1-rank runs on rank 0 with the other ranks asleep, against "
      "rank 0's 1-rank blocks), which say whether "
      "taking turns slowed a side. A speedup whose two sides fail their solo checks by different amounts is "
      "biased by the pairing itself.");
  timescale_paragraph();
  launch_spread_paragraph();
  checks_table();
}

void PairedText::launch_spread_paragraph() {
  std::string text;
  for (const auto& [world_size, priors] : a_.paired_priors) {
    const LaunchSpreadPrior& p = priors.speedup;
    if (!text.empty()) text += "; ";
    text += "at " + std::to_string(world_size) + " GPUs, ";
    if (!p.valid()) {
      text += std::to_string(p.comparisons) + " comparisons with two launches or more, fewer than the " +
              std::to_string(kMinComparisonsForPrior) + " a shared spread needs, so each comparison's launches " +
              "stand alone";
      continue;
    }
    text += "the launch means spread " + format_number(p.ratio, 3) + " times as much as their batches say, " +
            "known to " + format_number(p.df, 3) + " degrees of freedom from " + std::to_string(p.comparisons) +
            " comparisons";
  }
  if (text.empty()) return;
  doc_.paragraph("The launches' share of the spread, estimated once for the study (empirical Bayes, Smyth 2004): " +
                 text + ". Each comparison's own launch spread (L - 1 degrees of freedom) is averaged with the "
                 "study's, weighted by their degrees of freedom, so a few launches do not cost a t of L - 1 "
                 "degrees of freedom (4.30 at 3); a comparison whose launches disagree more than the study's keeps "
                 "much of its own spread.");
}

namespace {

// Whether the speedups' rounds took turns in windows (trainer/study/paired_blocks.hpp), and how many.
std::string window_sentence(const std::vector<double>& window) {
  if (window.empty()) return "";
  if (*std::max_element(window.begin(), window.end()) <= 1)
    return "Each speedup's blocks ran alone, within a few seconds of its launch.";
  return "The rounds of " + range_text(window, 3) + " speedups took turns in each launch's windows (paired_window), "
         "so each speedup's pairs spread over the window's seconds.";
}

}  // namespace

void PairedText::timescale_paragraph() {
  std::vector<double> steps, lag1, window;
  for (const Comparison& c : a_.comparisons) {
    for (int b : c.paired.block_steps) steps.push_back(b);
    for (double r : c.paired.autocorrelation_lag1) lag1.push_back(r);
    for (int w : c.paired.window_speedups) window.push_back(w);
  }
  doc_.paragraph("The host's timescale, from each launch's pilot (1-rank steps timed one by one): the lag-1 "
                 "autocorrelation of their log step times was " + range_text(lag1, 2) +
                 ", and the block length, the longest lag at which it stayed at least " +
                 format_number(kHoldingCorrelation, 2) + " (at least " + std::to_string(kMinBlockSteps) + " steps and " +
                 format_number(kMinBlockUs / 1000, 2) + " ms of work, at most " + std::to_string(kMaxBlockSteps) +
                 " steps), was " + range_text(steps, 3) + " steps. " + window_sentence(window));
}

void PairedText::checks_table() {
  ReportTable table;
  table.header = {"configuration", "pairs (launches)", "block steps", "speedup [95% CI]", "half-width", "set by",
                  "A/A 1 rank", "A/A N ranks", "solo check, 1 rank: paired / runs", "solo check, N ranks: paired / runs"};
  table.right_aligned = {false, true, true, true, true, false, false, false, false, false};
  for (const Comparison& c : a_.comparisons) {
    if (!c.paired.measured) continue;
    const PairedChecks& p = c.paired;
    std::vector<double> steps(p.block_steps.begin(), p.block_steps.end());
    table.rows.push_back({config_label(a_.configs[c.n_gpu].params),
                          std::to_string(p.speedup.pairs) + " (" + std::to_string(p.speedup.launches) + ")",
                          range_text(steps, 3), ratio_text(p.speedup, "x"),
                          std::isfinite(p.speedup.relative_half_width()) ? "±" + percent(p.speedup.relative_half_width())
                                                                          : "n/a",
                          p.speedup.level.empty() ? "n/a" : p.speedup.level, aa_verdict(p.same_one_rank),
                          aa_verdict(p.same_n_ranks), solo_verdict(p.solo), solo_verdict(p.solo_n_ranks)});
  }
  doc_.table(table);
}

std::string PairedText::summary_note(const std::string& section_ref) const {
  size_t measured = 0, aa_held = 0, aa_checked = 0, solo_level = 0, solo_checked = 0;
  std::vector<double> half_widths;
  for (const Comparison& c : a_.comparisons) {
    if (!c.paired.measured) continue;
    ++measured;
    if (std::isfinite(c.paired.speedup.relative_half_width())) half_widths.push_back(c.paired.speedup.relative_half_width());
    for (const PairedEstimate* aa : {&c.paired.same_one_rank, &c.paired.same_n_ranks})
      if (aa->ci.valid()) {
        ++aa_checked;
        aa_held += aa->ci.contains(1.0) ? 1 : 0;
      }
    for (const PairedEstimate* solo : {&c.paired.solo, &c.paired.solo_n_ranks})
      if (solo->ci.valid()) {
        ++solo_checked;
        solo_level += solo->ci.contains(1.0) ? 1 : 0;
      }
  }
  if (measured == 0) return "";
  std::string text = "The paired design measured " + std::to_string(measured) + " of " +
                     std::to_string(a_.comparisons.size()) + " speedups (" + section_ref + ")" +
                     (measured < a_.comparisons.size() ? "; the others come from whole runs over launches" : "");
  if (!half_widths.empty())
    text += ": median 95% half-width ±" + percent(median(half_widths)) + ", widest ±" +
            percent(*std::max_element(half_widths.begin(), half_widths.end()));
  text += ". A/A intervals held 1 in " + std::to_string(aa_held) + " of " + std::to_string(aa_checked) +
          (aa_held < aa_checked ? " (a pairing that fails it is listed there: its speedups are suspect)" : "") +
          "; the paired steps ran level with the same side's runs in " + std::to_string(solo_level) + " of " +
          std::to_string(solo_checked) + " solo checks" + (solo_level < solo_checked ? ", and the others' differences are listed there" : "") +
          ".";
  return text;
}

}  // namespace ddpscale
