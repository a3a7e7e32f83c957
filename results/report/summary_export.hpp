// summary.csv and summary.json: one row per configuration with every statistic the report
// uses, for spreadsheets and scripts. Times in microseconds, throughput in samples/s.
#pragma once
#include "results/analysis/study_analysis.hpp"

#include <string>
#include <vector>

namespace ddpscale {

std::string summary_csv(const StudyAnalysis& analysis);
std::string summary_json(const StudyAnalysis& analysis);

// commbench.csv: the study's allreduce curve (bytes,time_us,algbw_gbs,busbw_gbs,ranks), what
// `ddpscale predict` needs beside summary.csv when the study's runs are not at hand. ranks:
// how many ranks measured it.
std::string commbench_csv(const CommBenchTable& table, int ranks);

}  // namespace ddpscale
