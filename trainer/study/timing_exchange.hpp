// Rank 0 writes the results; the other ranks of a configuration send it their timings.
#pragma once
#include "results/store/run_record.hpp"

#include <string>
#include <vector>

namespace ddpscale {

class MpiGroup;

// Collective over the group. Returns every rank's timings on rank 0 (index = rank), an
// empty vector elsewhere.
std::vector<RankTimings> gather_rank_timings(const MpiGroup& group, const RankTimings& mine);

// Collective: true on every rank when any rank reports a failure; `message` becomes the
// lowest failing rank's message, prefixed with its rank.
bool any_rank_failed(const MpiGroup& group, bool failed, std::string& message);

// Collective: the largest value over the group, on every rank.
double max_over_group(const MpiGroup& group, double value);
// Collective: the smallest value over the group, on every rank; `what` names the wait in a
// time-out's message. The ranks sleep while they wait (nothing is being timed).
double min_over_group(const MpiGroup& group, double value, const std::string& what);

}  // namespace ddpscale
