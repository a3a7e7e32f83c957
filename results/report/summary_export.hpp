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

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(const std::string& text);
// And back: the records of RFC 4180 text, fields unquoted (quoted fields may hold commas,
// doubled quotes and line breaks). Throws std::runtime_error for text that ends inside a
// quoted field. What `ddpscale predict` reads summary.csv and commbench.csv with.
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

}  // namespace ddpscale
