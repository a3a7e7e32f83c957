// What `ddpscale train` prints on rank 0: one line per run, then medians over the runs.
#pragma once
#include "results/store/run_record.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace ddpscale {

void print_run_line(std::FILE* out, const RunRecord& run);
// placement_shifts_mib: --placement-shifts (run k held shifts[k % n] MiB first); with two or
// more, a line gives the median throughput per placement and the spread between them.
void print_config_summary(std::FILE* out, const ConfigRecord& record,
                          const std::vector<int>& placement_shifts_mib = {});
// "1234.5 samples/s, step 1.234 ms, 5/5 ok": the one line a sweep prints per configuration.
std::string config_summary_line(const ConfigRecord& record);

}  // namespace ddpscale
