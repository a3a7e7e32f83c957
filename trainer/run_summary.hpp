// What `ddpscale train` prints on rank 0: one line per run, then medians over the runs.
#pragma once
#include <cstdio>

#include "run_record.hpp"

namespace ddpscale {

void print_run_line(std::FILE* out, const RunRecord& run);
void print_config_summary(std::FILE* out, const ConfigRecord& record);

}  // namespace ddpscale
