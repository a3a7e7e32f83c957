// The fields of a configuration (ConfigParams) and of a study's metadata (StudyMetadata),
// each as one table. From them the run store writes and reads /params and /metadata
// (docs/hdf5-schema.md), --resume decides whether a stored file is the same experiment
// (same_params), and summary.csv/summary.json take their configuration columns. Adding a
// field = one row here (and, for a setting, its option in trainer/); a member without a row
// fails tests/test_config_fields.cpp.
#pragma once
#include "results/store/run_record.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace ddpscale {

using StringMap = std::map<std::string, std::string>;

// A pointer to one member of Record, of any type a table row can have. The type decides how
// the value is stored (h5_io.hpp: bool and int as int64) and written in the summary.
template <typename Record>
using FieldMember = std::variant<std::string Record::*, int64_t Record::*, int Record::*, uint64_t Record::*,
                                 double Record::*, bool Record::*, std::vector<std::string> Record::*,
                                 StringMap Record::*>;

// Whether --resume reuses a stored file only when it holds the same value.
enum class Resume { must_match, ignored };
// Whether a sweep spec lists values of it (expand_sweep in trainer/ walks the spec).
enum class Sweep { dimension, fixed };
// Whether every file holds it, or files written before it existed lack it (schema version
// unchanged) and it reads as ConfigParams' default, which is what those runs used.
enum class Stored { always, optional };

// A column of summary.csv/summary.json: its name and position among the configuration's
// columns (they follow "id"); name null: not a column.
struct SummaryColumn {
  const char* name = nullptr;
  int position = -1;
};
constexpr SummaryColumn kNoColumn{};

struct ConfigField {
  const char* attribute;  // the member's name, and its attribute in /params
  FieldMember<ConfigParams> member;
  SummaryColumn column;
  Resume resume;
  Sweep sweep;
  Stored stored;
};

// In the order the attributes are written (kept, so a file written again comes out byte for byte the same).
// nccl_variables is not matched on resume: it records the environment the trainer found at
// write time, not a setting of the experiment (nccl_profile is the setting).
// clang-format off
inline constexpr ConfigField kConfigFields[] = {
  // attribute        member                           summary column          --resume            sweep              stored
  {"model",           &ConfigParams::model,           {"model", 0},           Resume::must_match, Sweep::dimension, Stored::always},
  {"parameters",      &ConfigParams::parameters,      {"parameters", 1},      Resume::must_match, Sweep::fixed,     Stored::always},
  {"batch_per_rank",  &ConfigParams::batch_per_rank,  {"batch_per_rank", 3},  Resume::must_match, Sweep::dimension, Stored::always},
  {"global_batch",    &ConfigParams::global_batch,    {"global_batch", 4},    Resume::must_match, Sweep::fixed,     Stored::always},
  {"world_size",      &ConfigParams::world_size,      {"world_size", 5},      Resume::must_match, Sweep::dimension, Stored::always},
  {"scaling",         &ConfigParams::scaling,         {"scaling", 2},         Resume::must_match, Sweep::dimension, Stored::always},
  {"optimizer",       &ConfigParams::optimizer,       {"optimizer", 6},       Resume::must_match, Sweep::fixed,     Stored::always},
  {"learning_rate",   &ConfigParams::learning_rate,   {"learning_rate", 7},   Resume::must_match, Sweep::fixed,     Stored::always},
  {"dtype",           &ConfigParams::dtype,           {"dtype", 8},           Resume::must_match, Sweep::dimension, Stored::always},
  {"bucket_mb",       &ConfigParams::bucket_mb,       {"bucket_mb", 11},      Resume::must_match, Sweep::dimension, Stored::always},
  {"overlap",         &ConfigParams::overlap,         {"overlap", 12},        Resume::must_match, Sweep::dimension, Stored::always},
  {"exec",            &ConfigParams::exec,            {"exec", 9},            Resume::must_match, Sweep::dimension, Stored::always},
  {"allreduce_dtype", &ConfigParams::allreduce_dtype, {"allreduce_dtype", 10}, Resume::must_match, Sweep::dimension, Stored::optional},
  {"nccl_profile",    &ConfigParams::nccl_profile,    {"nccl_profile", 13},   Resume::must_match, Sweep::dimension, Stored::always},
  {"warmup_steps",    &ConfigParams::warmup_steps,    {"warmup_steps", 16},   Resume::must_match, Sweep::fixed,     Stored::always},
  {"measured_steps",  &ConfigParams::measured_steps,  {"measured_steps", 17}, Resume::must_match, Sweep::fixed,     Stored::always},
  {"runs",            &ConfigParams::runs,            kNoColumn,              Resume::must_match, Sweep::fixed,     Stored::always},
  {"seed",            &ConfigParams::seed,            kNoColumn,              Resume::must_match, Sweep::fixed,     Stored::always},
  {"device",          &ConfigParams::device,          {"device", 14},         Resume::must_match, Sweep::fixed,     Stored::always},
  {"backend",         &ConfigParams::backend,         {"backend", 15},        Resume::must_match, Sweep::fixed,     Stored::always},
  {"nccl_variables",  &ConfigParams::nccl_variables,  kNoColumn,              Resume::ignored,    Sweep::fixed,     Stored::always},
  {"model_sha256",    &ConfigParams::model_sha256,    kNoColumn,              Resume::must_match, Sweep::fixed,     Stored::optional},
  {"model_input",     &ConfigParams::model_input,     kNoColumn,              Resume::must_match, Sweep::fixed,     Stored::optional},
  {"broadcast_buffers", &ConfigParams::broadcast_buffers, kNoColumn,          Resume::must_match, Sweep::fixed,     Stored::optional},
  {"engine",          &ConfigParams::engine,          {"engine", 18},         Resume::must_match, Sweep::fixed,     Stored::optional},
};
// clang-format on

struct MetadataField {
  const char* attribute;  // the member's name, and its attribute in /metadata
  FieldMember<StudyMetadata> member;
};

// Every attribute required: study.h5 has held all of them since schema version 1.
inline constexpr MetadataField kMetadataFields[] = {
    {"tool_version", &StudyMetadata::tool_version},   {"git_commit", &StudyMetadata::git_commit},
    {"command_line", &StudyMetadata::command_line},   {"spec_text", &StudyMetadata::spec_text},
    {"created_utc", &StudyMetadata::created_utc},     {"hostnames", &StudyMetadata::hostnames},
    {"gpu_names", &StudyMetadata::gpu_names},         {"gpu_driver", &StudyMetadata::gpu_driver},
    {"cuda_version", &StudyMetadata::cuda_version},   {"nccl_version", &StudyMetadata::nccl_version},
    {"mpi_version", &StudyMetadata::mpi_version},     {"torch_version", &StudyMetadata::torch_version},
    {"hdf5_version", &StudyMetadata::hdf5_version},   {"link_topology", &StudyMetadata::link_topology},
    {"nccl_variables", &StudyMetadata::nccl_variables},
};

// ---- checks on the tables, at compile time --------------------------------------------

namespace config_fields_detail {

template <typename Field, size_t N>
constexpr bool attributes_unique(const Field (&fields)[N]) {
  for (size_t i = 0; i < N; ++i)
    for (size_t j = i + 1; j < N; ++j) {
      const char *a = fields[i].attribute, *b = fields[j].attribute;
      while (*a && *a == *b) ++a, ++b;
      if (*a == *b) return false;
    }
  return true;
}

// Columns take the positions 0..count-1, each once, and hold a single value (no list or map).
constexpr bool summary_columns_well_formed() {
  int count = 0;
  for (const ConfigField& f : kConfigFields) count += f.column.name != nullptr;
  for (int position = 0; position < count; ++position) {
    int holders = 0;
    for (const ConfigField& f : kConfigFields) holders += f.column.name != nullptr && f.column.position == position;
    if (holders != 1) return false;
  }
  for (const ConfigField& f : kConfigFields)
    if (f.column.name && (std::holds_alternative<StringMap ConfigParams::*>(f.member) ||
                          std::holds_alternative<std::vector<std::string> ConfigParams::*>(f.member)))
      return false;
  return true;
}

static_assert(attributes_unique(kConfigFields), "two rows of kConfigFields share an attribute name");
static_assert(attributes_unique(kMetadataFields), "two rows of kMetadataFields share an attribute name");
static_assert(summary_columns_well_formed(),
              "summary columns of kConfigFields: positions must be 0..n-1, each once, and hold single values");

}  // namespace config_fields_detail

}  // namespace ddpscale
