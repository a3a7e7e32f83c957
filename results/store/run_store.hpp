// The HDF5 run store: one file per configuration (<dir>/<config-id>.h5) and one per study
// (<dir>/study.h5). Layout and attribute names: docs/hdf5-schema.md. Files are written
// under a temporary name and renamed into place only when complete, so an interrupted
// study never leaves a half-written file that looks complete.
#pragma once
#include "results/store/run_record.hpp"
#include "results/store/store_error.hpp"

#include <string>
#include <vector>

namespace ddpscale {

constexpr const char* kStoreSchema = "ddpscale-run-store";
constexpr int kStoreSchemaVersion = 1;
constexpr const char* kStudyFileName = "study.h5";

// An allreduce bandwidth sweep stored with a study (results/ does not depend on comm/).
// Parallel columns: row i is one message size.
struct CommBenchTable {
  std::vector<double> bytes, time_us, algbw_gbs, busbw_gbs;
};

// Writes <dir>/study.h5 (replacing an older one); an empty table stores no commbench group.
void write_study(const std::string& dir, const StudyMetadata& metadata, const CommBenchTable& commbench = {});
// The metadata and, if asked for, the commbench table; *commbench is left empty when the
// study has none (world size 1, --no-commbench).
StudyMetadata read_study(const std::string& dir, CommBenchTable* commbench = nullptr);

// A stable, file-name-safe id, the stem of the configuration's file:
// "mlp-medium_b32_w2_weak_adam_float32_bk25_ov_eager_default", with suffixes only for what
// differs from the defaults (a bfloat16 allreduce, own buffers, the pytorch-ddp engine).
std::string config_id(const ConfigParams& params);

// The file of one configuration's runs of one launch (0-based of `launches`): <id>.h5 in a
// study of one launch, <id>.launch-<k>-of-<n>.h5 (k counted from 1) otherwise.
std::string config_file_name(const std::string& id, int launch, int launches);
// Records of the same configuration (equal id) from the launches of one study folder, as one
// record whose runs carry their launch, sorted by run index; records of a one-launch study
// pass unchanged, in order.
std::vector<ConfigRecord> merge_launches(std::vector<ConfigRecord> records);

// Writes <dir>/<config_file_name(...)> (replacing an older one). The directory must exist.
void write_config(const std::string& dir, const ConfigRecord& record);
// Throws StoreError naming the file for a missing, truncated, foreign, incomplete or
// other-version file.
ConfigRecord read_config(const std::string& path);
// Complete configuration files of this schema in dir, sorted; never study.h5 or *.tmp.
// Files passed over (damaged, foreign, other version) are described in *skipped, if given.
std::vector<std::string> list_config_files(const std::string& dir, std::vector<std::string>* skipped = nullptr);
// Whether dir holds a study: its study.h5 or a configuration file (*.h5, unread).
bool holds_study(const std::string& dir);
// Where the study of `path` is: `ddpscale study --out DIR` writes the study into DIR/study
// (beside spec.yaml and report/), so for such a DIR, which holds no study itself, DIR/study;
// any other path as it is. Every command that reads a study takes DIR this way.
std::string study_folder_in(const std::string& path);
// Removes <dir>/*.h5.tmp: what a writer killed outright (SIGKILL, power cut) left behind.
// Such a file was never renamed into place, so it never counted as a result. Throws
// StoreError naming a file it cannot remove.
void remove_unfinished_writes(const std::string& dir);
// For --resume: the file is a readable configuration file and same_params holds. When it
// does not, `difference` (if given) says why: the fields that differ, or why it is unreadable.
bool config_file_matches(const std::string& path, const ConfigParams& params, std::string* difference = nullptr);
// Every ConfigParams field that config_fields.hpp marks Resume::must_match is equal: all but
// nccl_variables, which record the environment the trainer found, not a setting.
bool same_params(const ConfigParams& a, const ConfigParams& b);
// The must_match fields that differ, each as "runs 3 stored, 5 asked for"; empty when same_params.
std::vector<std::string> params_differences(const ConfigParams& stored, const ConfigParams& asked);

}  // namespace ddpscale
