#include "results/report/report_engines.hpp"

#include "results/analysis/config_summary.hpp"
#include "results/report/report_format.hpp"
#include "results/statistics/launch_statistics.hpp"

#include <map>
#include <set>

namespace ddpscale {
namespace {

// What two engines' configurations share to be the same experiment.
std::string engine_pair_key(const ConfigParams& p) {
  const int64_t batch = p.scaling == "strong" ? p.global_batch : p.batch_per_rank;
  return p.model + "|" + p.model_sha256 + "|" + p.scaling + "|" + std::to_string(batch) + "|" +
         std::to_string(p.world_size) + "|" + p.dtype + "|" + p.exec + "|" + p.device;
}

// ddpscale's mean throughput over PyTorch's, launch-paired where both have several launches.
SpeedupEstimate throughput_ratio(const ConfigSummary& pytorch, const ConfigSummary& ddpscale,
                                 const BootstrapOptions& bootstrap) {
  SpeedupEstimate ratio =
      two_level_bootstrap_speedup(throughputs_by_launch(pytorch), throughputs_by_launch(ddpscale), 1, bootstrap).estimate;
  if (pytorch.throughput.n < 2 || ddpscale.throughput.n < 2) ratio.speedup_ci = {};  // no spread to resample
  return ratio;
}

std::string ratio_text(const SpeedupEstimate& r) {
  if (!std::isfinite(r.speedup)) return "n/a";
  std::string text = format_number(r.speedup, 3);
  if (r.speedup_ci.valid())
    text += " [" + format_number(r.speedup_ci.low, 3) + ", " + format_number(r.speedup_ci.high, 3) + "]";
  return text;
}

std::string paid_word(const Comparison& c) { return payoff_word(c.payoff); }

}  // namespace

std::vector<EnginePair> engine_pairs(const StudyAnalysis& analysis, const BootstrapOptions& bootstrap) {
  std::map<std::string, const Comparison*> pytorch_by_key;
  for (const Comparison& c : analysis.comparisons)
    if (analysis.configs[c.n_gpu].params.engine == kEnginePytorchDdp)
      pytorch_by_key.emplace(engine_pair_key(analysis.configs[c.n_gpu].params), &c);
  std::vector<EnginePair> pairs;
  for (const Comparison& c : analysis.comparisons) {
    if (analysis.configs[c.n_gpu].params.engine != kEngineDdpscale) continue;
    const auto twin = pytorch_by_key.find(engine_pair_key(analysis.configs[c.n_gpu].params));
    if (twin == pytorch_by_key.end()) continue;
    EnginePair pair;
    pair.ddpscale = &c;
    pair.pytorch = twin->second;
    pair.ratio_one = throughput_ratio(analysis.configs[twin->second->one_gpu], analysis.configs[c.one_gpu], bootstrap);
    pair.ratio_n = throughput_ratio(analysis.configs[twin->second->n_gpu], analysis.configs[c.n_gpu], bootstrap);
    pairs.push_back(pair);
  }
  return pairs;
}

std::vector<EngineTwin> engine_twins_without_comparison(const StudyAnalysis& analysis,
                                                        const BootstrapOptions& bootstrap) {
  std::set<size_t> compared;
  for (const Comparison& c : analysis.comparisons) compared.insert({c.one_gpu, c.n_gpu});
  std::map<std::string, size_t> pytorch_by_key;
  for (size_t i = 0; i < analysis.configs.size(); ++i)
    if (!compared.count(i) && analysis.configs[i].params.engine == kEnginePytorchDdp)
      pytorch_by_key.emplace(engine_pair_key(analysis.configs[i].params), i);
  std::vector<EngineTwin> twins;
  for (size_t i = 0; i < analysis.configs.size(); ++i) {
    if (compared.count(i) || analysis.configs[i].params.engine != kEngineDdpscale) continue;
    const auto twin = pytorch_by_key.find(engine_pair_key(analysis.configs[i].params));
    if (twin == pytorch_by_key.end()) continue;
    twins.push_back({i, twin->second, throughput_ratio(analysis.configs[twin->second], analysis.configs[i], bootstrap)});
  }
  return twins;
}

std::string engine_ratio_verdict(const SpeedupEstimate& ratio) {
  if (!ratio.speedup_ci.valid()) return "n/a";
  if (ratio.speedup_ci.high < 1) return "slower";
  if (ratio.speedup_ci.low > 1) return "faster";
  return "level";
}

EngineText::EngineText(const StudyAnalysis& analysis, ReportDocument& doc)
    : a_(analysis), doc_(doc), pairs_(engine_pairs(analysis)), twins_(engine_twins_without_comparison(analysis)) {}

void EngineText::write_section() {
  doc_.paragraph(
      "The same configurations trained by PyTorch's DistributedDataParallel (scripts/gpu/pytorch_ddp_reference.py "
      "on the same model files, batches, optimizer and data, imported with `ddpscale import-pytorch`). ddpscale's "
      "column is what an efficient engine gets on this machine; PyTorch DDP's is what a PyTorch job gets. "
      "\"ddpscale / PyTorch\" is the ratio of mean throughputs with a bootstrap 95% interval (launch k of one "
      "engine paired with launch k of the other where both have several): slower or faster where the whole "
      "interval lies below or above 1, level where it holds 1. PyTorch's step is timed whole, at step "
      "boundaries (CUDA events on its compute stream on a GPU), so its forward, backward, allreduce and optimizer "
      "read n/a in the other sections.");
  if (!pairs_.empty()) write_comparisons_table();
  if (!twins_.empty()) write_twins_table();
}

void EngineText::write_comparisons_table() {
  ReportTable t;
  t.header = {"model", "batch per rank", "ranks", "ddpscale samples/s, 1 / N", "PyTorch samples/s, 1 / N",
              "ddpscale speedup", "PyTorch DDP speedup", "ddpscale / PyTorch, 1 rank", "ddpscale / PyTorch, N ranks",
              "verdicts"};
  t.right_aligned = {false, true, true, true, true, true, true, true, true, false};
  for (const EnginePair& e : pairs_) {
    const ConfigParams& p = a_.configs[e.ddpscale->n_gpu].params;
    const auto samples = [&](const Comparison& c) {
      return format_number(a_.configs[c.one_gpu].throughput.mean, 4) + " / " +
             format_number(a_.configs[c.n_gpu].throughput.mean, 4);
    };
    const std::string verdicts = e.ddpscale->payoff == e.pytorch->payoff
                                     ? "same: both " + paid_word(*e.ddpscale)
                                     : "differ: ddpscale " + paid_word(*e.ddpscale) + ", PyTorch DDP " +
                                           paid_word(*e.pytorch);
    t.rows.push_back({p.model + exec_dtype_text(p.exec, p.dtype), std::to_string(p.batch_per_rank),
                      std::to_string(p.world_size), samples(*e.ddpscale), samples(*e.pytorch),
                      speedup_text(e.ddpscale->speedup), speedup_text(e.pytorch->speedup),
                      ratio_text(e.ratio_one) + " " + engine_ratio_verdict(e.ratio_one),
                      ratio_text(e.ratio_n) + " " + engine_ratio_verdict(e.ratio_n), verdicts});
  }
  doc_.table(t);
  doc_.paragraph(
      "Where the verdicts agree, ddpscale's answer carries over to a PyTorch DDP job. Where they differ, the two "
      "engines spend different time per step (how they differ: docs/methodology.md, \"Where the engine differs "
      "from PyTorch DDP\"; on host-bound steps PyTorch's eager step costs more host time per kernel), and PyTorch "
      "DDP's column is the answer for a PyTorch job. Undecided: the speedup's interval holds 1, so the runs measured "
      "cannot say; section 6 gives how many launches a narrower interval needs.");
}

void EngineText::write_twins_table() {
  doc_.paragraph(
      "Configurations both engines ran that have no counterpart to make a speedup with (a study of one world "
      "size): each engine's throughput and their ratio, as above.");
  ReportTable t;
  t.header = {"model", "batch per rank", "ranks", "ddpscale samples/s", "PyTorch samples/s", "ddpscale / PyTorch"};
  t.right_aligned = {false, true, true, true, true, true};
  for (const EngineTwin& e : twins_) {
    const ConfigParams& p = a_.configs[e.ddpscale].params;
    t.rows.push_back({p.model + exec_dtype_text(p.exec, p.dtype), std::to_string(p.batch_per_rank),
                      std::to_string(p.world_size), format_number(a_.configs[e.ddpscale].throughput.mean, 4),
                      format_number(a_.configs[e.pytorch].throughput.mean, 4),
                      ratio_text(e.ratio) + " " + engine_ratio_verdict(e.ratio)});
  }
  doc_.table(t);
}

std::string EngineText::summary_note(const std::string& section_ref) const {
  if (!applies()) return "";
  std::string note = "Beside PyTorch DDP (" + section_ref + "): ";
  if (!pairs_.empty()) {
    size_t agree = 0, opposite = 0, slower = 0;
    for (const EnginePair& e : pairs_) {
      agree += e.ddpscale->payoff == e.pytorch->payoff;
      opposite += e.ddpscale->payoff != e.pytorch->payoff && e.ddpscale->payoff != Payoff::undecided &&
                  e.pytorch->payoff != Payoff::undecided;
      slower += engine_ratio_verdict(e.ratio_one) == "slower" || engine_ratio_verdict(e.ratio_n) == "slower";
    }
    const size_t differ = pairs_.size() - agree;
    note += "the two engines' verdicts agree on " + std::to_string(agree) + " of " + std::to_string(pairs_.size()) +
            " configurations";
    // Paid off beside undecided is not a contradiction: say which kind of difference it is.
    if (differ > 0)
      note += " (of the " + std::to_string(differ) + " that differ: " + std::to_string(differ - opposite) +
              " undecided under one engine, its speedup's interval holding 1; " + std::to_string(opposite) +
              " opposite, paid off under one and decidedly not under the other)";
    note += "; ddpscale's step is slower than PyTorch DDP's (the throughput ratio's whole interval below 1) on 1 or "
            "N ranks in " + std::to_string(slower) + " of them. ";
  }
  if (!twins_.empty()) {
    size_t slower = 0;
    for (const EngineTwin& e : twins_) slower += engine_ratio_verdict(e.ratio) == "slower";
    note += "ddpscale's step is slower in " + std::to_string(slower) + " of the " + std::to_string(twins_.size()) +
            " configuration" + (twins_.size() == 1 ? "" : "s") + " both engines ran without a speedup to compare. ";
  }
  return note + "The findings above are ddpscale's engine's.";
}

}  // namespace ddpscale
