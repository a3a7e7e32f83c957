// Why more ranks did not pay off in one comparison, in one clause the executive summary
// puts beside the model: the phase of the N-rank step that grew most beyond what ideal data
// parallelism would give, read from the same phase times as "Where the time goes".
#pragma once
#include <string>

#include "study_analysis.hpp"

namespace ddpscale {

// "the allreduce left exposed after backward took 30.1 of the 113.0 ms per step on 2 ranks",
// or, where the speedup is above 1 but its interval is not, that the interval reaches below
// 1. Empty where the phases were not split (a CUDA graph step) or not measured.
std::string why_not_clause(const ConfigSummary& one_rank, const ConfigSummary& n_ranks, const ConfigSpeedup& speedup);

}  // namespace ddpscale
