// Why more ranks did not pay off in one comparison, in one clause the executive summary
// puts beside the model: the allreduce left exposed, or the compute phases of the N-rank step
// that grew beyond what ideal data parallelism would give where together they cost more, read
// from the same phase times as "Where the time goes". On CPU, compute that grew is named as
// core sharing unless the ranks had cores of their own.
#pragma once
#include "results/analysis/study_analysis.hpp"

#include <string>

namespace ddpscale {

// "the allreduce left exposed after backward took 30.1 of the 113.0 ms per step on 2 ranks",
// "forward, backward and optimizer took 54.5, 95.8 and 47.1 ms per step on 2 ranks against
// 24.4, 46.3 and 26.9 ms on 1 ... ; core sharing: ...", or, where the speedup is above 1 but its interval is not, that the interval reaches below
// 1. Empty where the phases were not split (a CUDA graph step) or not measured.
std::string why_not_clause(const ConfigSummary& one_rank, const ConfigSummary& n_ranks, const ConfigSpeedup& speedup);

// "The 2 ranks ran 2 threads on CPU masks sharing 2 cores." where the ranks' masks and
// threads were recorded; empty otherwise and for one rank.
std::string core_sharing_sentence(const CoreSharing& cores);

}  // namespace ddpscale
