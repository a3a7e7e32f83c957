// The report's engines section, where a study holds runs of both engines (ddpscale's own and
// PyTorch DDP's, imported by `ddpscale import-pytorch`): per configuration, each engine's
// throughput on 1 and N ranks, its speedup with its interval and verdict, and ddpscale's
// throughput over PyTorch's on each side, so a reader sees what an efficient engine gets and
// what a PyTorch DDP job gets. Apart from report_writer.cpp, which orders sections.
#pragma once
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_document.hpp"

#include <string>
#include <vector>

namespace ddpscale {

// One configuration measured by both engines: the two comparisons (N ranks over 1), and
// ddpscale's mean throughput over PyTorch DDP's on 1 and on N ranks with intervals (launches
// paired where both sides have several: launch k of one against launch k of the other).
struct EnginePair {
  const Comparison* ddpscale = nullptr;
  const Comparison* pytorch = nullptr;
  SpeedupEstimate ratio_one;  // ddpscale / PyTorch on 1 rank (world_size field 1)
  SpeedupEstimate ratio_n;    // on N ranks
};
// Every ddpscale comparison with a PyTorch DDP twin (same model, scaling, batch, world size,
// dtype, execution mode and device), in the analysis's order.
std::vector<EnginePair> engine_pairs(const StudyAnalysis& analysis, const BootstrapOptions& bootstrap = {});

// A configuration measured by both engines that no comparison holds (a study of one world
// size, such as a 1-GPU user's): no speedup, but still ddpscale's step beside PyTorch DDP's.
struct EngineTwin {
  size_t ddpscale = 0;  // indices into StudyAnalysis::configs
  size_t pytorch = 0;
  SpeedupEstimate ratio;  // ddpscale / PyTorch, launch-paired as in EnginePair
};
// Every such ddpscale configuration with a PyTorch DDP twin, in the analysis's order.
std::vector<EngineTwin> engine_twins_without_comparison(const StudyAnalysis& analysis,
                                                        const BootstrapOptions& bootstrap = {});

// "slower" (the ratio's whole interval below 1), "faster" (above), "level" (it holds 1) or
// "n/a": how ddpscale's step compares with PyTorch DDP's on one side.
std::string engine_ratio_verdict(const SpeedupEstimate& ratio);

class EngineText {
 public:
  EngineText(const StudyAnalysis& analysis, ReportDocument& doc);
  bool applies() const { return !pairs_.empty() || !twins_.empty(); }
  void write_section();
  // For the executive summary: "Beside PyTorch DDP (section N): the verdicts agree on 4 of 5
  // ...", "" where the study has no PyTorch DDP runs.
  std::string summary_note(const std::string& section_ref) const;

 private:
  const StudyAnalysis& a_;
  ReportDocument& doc_;
  std::vector<EnginePair> pairs_;
  std::vector<EngineTwin> twins_;

  void write_comparisons_table();
  void write_twins_table();
};

}  // namespace ddpscale
