// Where `ddpscale predict` gets its measurements: a study folder (the HDF5 runs, reduced as
// the report reduces them), or a report folder (summary.csv, and commbench.csv with the
// allreduce curve) for studies whose runs are no longer at hand.
#pragma once
#include <string>

#include "scaling_prediction.hpp"

namespace ddpscale {

// A study folder (study.h5 + configuration files) or a report folder (summary.csv +
// commbench.csv, as results/summary_export.hpp writes them). Throws std::runtime_error saying which files were looked for.
StudyDigest load_study_digest(const std::string& folder);

StudyDigest digest_from_study(const std::string& study_dir);
StudyDigest digest_from_report(const std::string& report_dir);

}  // namespace ddpscale
