// The facts `ddpscale info` prints and every study records: host, ranks, library
// versions, GPUs and how they are linked.
#pragma once
#include "results/store/run_record.hpp"

#include <string>

namespace ddpscale {

class MpiContext;

std::string torch_version();
std::string cuda_version();  // "13.0", or "none" for a CPU build
std::string nccl_version();  // "2.28.9 (/path/libnccl.so.2)", or "none" for a CPU build
std::string build_version();     // "0.1.0": the project version this binary was built as
std::string build_git_commit();  // the commit this binary was built from ("unknown" outside git)
std::string utc_now_iso8601();

// Collective over the world (gathers what every rank sees); the JSON is complete on rank 0.
std::string system_report_json(const MpiContext& mpi);

// The study-level metadata of the StudyMetadata record; collective like the above.
StudyMetadata collect_study_metadata(const MpiContext& mpi, const std::string& command_line);

}  // namespace ddpscale
