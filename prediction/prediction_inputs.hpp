// Where `ddpscale predict` gets its measurements: a study folder (the HDF5 runs, reduced as
// the report reduces them), or a report folder (summary.csv, and commbench.csv with the
// allreduce curve) for studies whose runs are not at hand.
#pragma once
#include "prediction/scaling_prediction.hpp"
#include "results/analysis/study_analysis.hpp"

#include <string>
#include <vector>

namespace ddpscale {

// A study folder (study.h5 + configuration files) or a report folder (summary.csv +
// commbench.csv, as results/report/summary_export.hpp writes them). Throws std::runtime_error saying which files were looked for.
StudyDigest load_study_digest(const std::string& folder);

StudyDigest digest_from_study(const std::string& study_dir);
// The same from studies already loaded (as `ddpscale report` loads its inputs), and with
// their analysis where it is at hand (its comparisons give the paired speedups).
StudyDigest digest_from_loaded(const LoadedStudy& study);
StudyDigest digest_from_loaded(const LoadedStudy& study, const StudyAnalysis& analysis);
StudyDigest digest_from_report(const std::string& report_dir);

// A commbench.csv as results/report/summary_export.hpp's commbench_csv writes it: message sizes,
// times and the ranks it was measured on. Throws std::runtime_error naming the file.
struct CommbenchCurve {
  std::vector<double> bytes, time_us;
  int ranks = 0;
};
CommbenchCurve read_commbench_csv(const std::string& path);

}  // namespace ddpscale
