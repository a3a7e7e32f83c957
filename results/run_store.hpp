// The HDF5 run store: one file per configuration (<dir>/<config-id>.h5) and one per study
// (<dir>/study.h5). Layout and attribute names: docs/hdf5-schema.md. Files are written
// under a temporary name and renamed into place only when complete, so an interrupted
// study never leaves a half-written file that looks complete.
#pragma once
#include <string>
#include <vector>

#include "run_record.hpp"
#include "store_error.hpp"

namespace ddpscale {

constexpr const char* kStoreSchema = "ddpscale-run-store";
constexpr int kStoreSchemaVersion = 1;

// An allreduce bandwidth sweep stored with a study (results/ does not depend on comm/).
struct CommBenchTable {
  std::vector<double> bytes, time_us, algbw_gbs, busbw_gbs;
};

void write_study(const std::string& dir, const StudyMetadata& metadata, const CommBenchTable& commbench);
StudyMetadata read_study(const std::string& dir, CommBenchTable* commbench = nullptr);

// Writes <dir>/<record.id>.h5 (replacing an older one).
void write_config(const std::string& dir, const ConfigRecord& record);
// Throws StoreError naming the file for a missing, truncated, foreign or other-version file.
ConfigRecord read_config(const std::string& path);
// Complete configuration files in dir, sorted; not study.h5, not temporary files.
std::vector<std::string> list_config_files(const std::string& dir);
// For --resume: the file is readable and its stored parameters equal `params`.
bool config_file_matches(const std::string& path, const ConfigParams& params);
bool same_params(const ConfigParams& a, const ConfigParams& b);

}  // namespace ddpscale
