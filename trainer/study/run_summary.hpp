// What `ddpscale train` prints on rank 0: one line per run, then medians over the runs.
#pragma once
#include <cstdio>
#include <string>

#include "run_record.hpp"

namespace ddpscale {

void print_run_line(std::FILE* out, const RunRecord& run);
void print_config_summary(std::FILE* out, const ConfigRecord& record);
// "1234.5 samples/s, step 1.234 ms, 5/5 ok": the one line a sweep prints per configuration.
std::string config_summary_line(const ConfigRecord& record);

}  // namespace ddpscale
