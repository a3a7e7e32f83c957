#include "results/store/run_store.hpp"

#include "results/store/config_fields.hpp"
#include "results/store/h5_io.hpp"
#include "results/store/run_group_io.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <sstream>
#include <type_traits>
#include <variant>

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

// ---------------------------------------------------------------------------------------
// Files: written under <name>.tmp, marked complete last, synced, renamed into place.

constexpr const char* kConfigurationKind = "configuration";
constexpr const char* kStudyKind = "study";

// Opens a store file for reading and checks, in this order, that it exists, is HDF5, is one
// of ours, of our version, of the expected kind, and was finished by its writer.
H5File open_store_file(const std::string& path, const char* expected_kind) {
  silence_hdf5_errors();
  const H5Io io(path);
  std::error_code ec;
  if (!fs::exists(path, ec)) throw io.error("no such file");
  if (!fs::is_regular_file(path, ec)) throw io.error("not a regular file");
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 < 0) throw io.error("cannot read the file: " + hdf5_error_message());
  if (is_hdf5 == 0) throw io.error("not an HDF5 file (or truncated)");
  H5File file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file.valid()) throw io.error("cannot open as HDF5 (truncated or damaged?): " + hdf5_error_message());
  if (!io.has_attribute(file.get(), "schema") || io.get_string(file.get(), "schema") != kStoreSchema)
    throw io.error("not a ddpscale run store file (no root attribute schema = '" + std::string(kStoreSchema) + "')");
  const int64_t version = io.get_int(file.get(), "schema_version");
  if (version != kStoreSchemaVersion)
    throw io.error("schema version " + std::to_string(version) + ", this ddpscale reads version " +
                   std::to_string(kStoreSchemaVersion));
  const std::string kind = io.get_string(file.get(), "kind");
  if (kind != expected_kind) throw io.error("a " + kind + " file, not a " + expected_kind + " file");
  if (!io.has_attribute(file.get(), "complete") || io.get_int(file.get(), "complete") != 1)
    throw io.error("incomplete file (its writer stopped before finishing it)");
  return file;
}

// Written under <name>.tmp (h5_io.hpp): the identifying attributes first, the body, then
// complete = 1 as the last attribute, so a reader can tell a finished file.
void write_store_file(const std::string& final_path, const char* kind,
                      const std::function<void(const H5Io& io, hid_t file)>& write_body) {
  write_file_atomically(final_path, [&](const H5Io& io, hid_t file) {
    io.put_string(file, "schema", kStoreSchema);
    io.put_int(file, "schema_version", kStoreSchemaVersion);
    io.put_string(file, "kind", kind);
    write_body(io, file);
    io.put_int(file, "complete", 1);
  });
}

// ---------------------------------------------------------------------------------------
// Configuration parameters: attributes of group /params, one per row of kConfigFields in
// its order (config_fields.hpp).

// Optional rows may be absent from older files (config_fields.hpp); metadata rows never.
bool may_be_absent(const ConfigField& field) { return field.stored == Stored::optional; }
bool may_be_absent(const MetadataField&) { return false; }

// Each row's member of `record` as an attribute of a new group, in the table's order.
template <typename Record, typename Field, size_t N>
void write_fields(const H5Io& io, hid_t parent, const char* group, const Record& record, const Field (&fields)[N]) {
  H5Group g = io.create_group(parent, group);
  for (const Field& field : fields)
    std::visit([&](auto member) { io.put_value(g.get(), field.attribute, record.*member); }, field.member);
}

// The members of a default Record, each read from its row's attribute where stored.
template <typename Record, typename Field, size_t N>
Record read_fields(const H5Io& io, hid_t parent, const char* group, const Field (&fields)[N]) {
  H5Group g = io.open_group(parent, group);
  Record record;
  for (const Field& field : fields) {
    if (may_be_absent(field) && !io.has_attribute(g.get(), field.attribute)) continue;
    std::visit([&](auto member) { io.get_value(g.get(), field.attribute, record.*member); }, field.member);
  }
  return record;
}

void write_params(const H5Io& io, hid_t file, const ConfigParams& p) {
  write_fields(io, file, "params", p, kConfigFields);
}

ConfigParams read_params(const H5Io& io, hid_t file) {
  return read_fields<ConfigParams>(io, file, "params", kConfigFields);
}

// ---------------------------------------------------------------------------------------
// Gradient timing: group /gradient_timing, one entry per trainable parameter in
// registration order (docs/hdf5-schema.md). Optional: absent where not recorded.

constexpr const char* kGradientTimingGroup = "gradient_timing";

void write_gradient_timing(const H5Io& io, hid_t file, const GradientTiming& timing) {
  std::vector<std::string> names;
  std::vector<int64_t> elements, element_bytes;
  std::vector<double> ready_us;
  for (const ParameterGradient& p : timing.parameters) {
    names.push_back(p.name);
    elements.push_back(p.elements);
    element_bytes.push_back(p.element_bytes);
    ready_us.push_back(p.ready_us);
  }
  H5Group g = io.create_group(file, kGradientTimingGroup);
  io.put_string(g.get(), "clock", timing.clock);
  io.put_string(g.get(), "step", timing.step);
  io.put_int(g.get(), "run", timing.run);
  io.put_double(g.get(), "backward_us", timing.backward_us);
  io.put_string_list(g.get(), "names", names);
  io.put_ints(g.get(), "elements", elements);
  io.put_ints(g.get(), "element_bytes", element_bytes);
  io.put_doubles(g.get(), "ready_us", ready_us);
}

// Empty (not recorded) for files written before gradient timing existed; schema version 1.
GradientTiming read_gradient_timing(const H5Io& io, hid_t file) {
  GradientTiming timing;
  if (!io.has_link(file, kGradientTimingGroup)) return timing;
  H5Group g = io.open_group(file, kGradientTimingGroup);
  timing.clock = io.get_string(g.get(), "clock");
  timing.step = io.get_string(g.get(), "step");
  timing.run = static_cast<int>(io.get_int(g.get(), "run"));
  timing.backward_us = io.get_double(g.get(), "backward_us");
  const std::vector<std::string> names = io.get_string_list(g.get(), "names");
  const long count = static_cast<long>(names.size());
  const auto elements = io.get_ints(g.get(), "elements", count);
  const auto element_bytes = io.get_ints(g.get(), "element_bytes", count);
  const auto ready_us = io.get_doubles(g.get(), "ready_us", count);
  for (size_t i = 0; i < names.size(); ++i) {
    if (elements[i] < 0 || element_bytes[i] <= 0)
      throw io.error("gradient_timing: parameter '" + names[i] + "' has " + std::to_string(elements[i]) +
                     " elements of " + std::to_string(element_bytes[i]) + " bytes");
    timing.parameters.push_back({names[i], elements[i], element_bytes[i], ready_us[i]});
  }
  return timing;
}

// ---------------------------------------------------------------------------------------
// The paired design: group /paired, one launch's blocks (docs/hdf5-schema.md). Optional:
// absent where the configuration was measured with runs alone.

constexpr const char* kPairedGroup = "paired";

void write_paired(const H5Io& io, hid_t file, const PairedLaunch& paired) {
  std::vector<int64_t> kinds, a_first, one_rank;
  std::vector<double> a_us, b_us, start_s;
  for (const BlockPair& pair : paired.pairs) {
    kinds.push_back(static_cast<int64_t>(pair.kind));
    a_first.push_back(pair.a_first ? 1 : 0);
    one_rank.push_back(pair.one_rank);
    a_us.push_back(pair.a_us);
    b_us.push_back(pair.b_us);
    start_s.push_back(pair.start_s);
  }
  H5Group g = io.create_group(file, kPairedGroup);
  io.put_int(g.get(), "launch", paired.launch);
  io.put_int(g.get(), "block_steps", paired.block_steps);
  io.put_double(g.get(), "pilot_step_us", paired.pilot_step_us);
  io.put_int(g.get(), "window_speedups", paired.window_speedups);
  io.put_doubles(g.get(), "autocorrelation", paired.autocorrelation);
  io.put_ints(g.get(), "kind", kinds);
  io.put_ints(g.get(), "a_first", a_first);
  io.put_ints(g.get(), "one_rank", one_rank);
  io.put_doubles(g.get(), "a_us", a_us);
  io.put_doubles(g.get(), "b_us", b_us);
  io.put_doubles(g.get(), "start_s", start_s);
}

std::vector<PairedLaunch> read_paired(const H5Io& io, hid_t file) {
  if (!io.has_link(file, kPairedGroup)) return {};
  H5Group g = io.open_group(file, kPairedGroup);
  PairedLaunch paired;
  paired.launch = static_cast<int>(io.get_int(g.get(), "launch"));
  paired.block_steps = static_cast<int>(io.get_int(g.get(), "block_steps"));
  paired.pilot_step_us = io.get_double(g.get(), "pilot_step_us");
  // Optional: a file without it measured its speedup's blocks alone.
  paired.window_speedups =
      io.has_attribute(g.get(), "window_speedups") ? static_cast<int>(io.get_int(g.get(), "window_speedups")) : 1;
  paired.autocorrelation = io.get_doubles(g.get(), "autocorrelation");
  const auto kinds = io.get_ints(g.get(), "kind");
  const long count = static_cast<long>(kinds.size());
  const auto a_first = io.get_ints(g.get(), "a_first", count);
  const auto a_us = io.get_doubles(g.get(), "a_us", count);
  const auto b_us = io.get_doubles(g.get(), "b_us", count);
  const auto start_s = io.get_doubles(g.get(), "start_s", count);
  // Optional: a file without it ran every 1-rank block on rank 0.
  const auto one_rank = io.has_link(g.get(), "one_rank") ? io.get_ints(g.get(), "one_rank", count)
                                                         : std::vector<int64_t>(kinds.size(), 0);
  if (paired.block_steps < 1) throw io.error("paired: block_steps " + std::to_string(paired.block_steps) + " < 1");
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] < 0 || kinds[i] > static_cast<int64_t>(PairKind::same_n_ranks))
      throw io.error("paired: pair " + std::to_string(i) + " has unknown kind " + std::to_string(kinds[i]));
    if (one_rank[i] < 0) throw io.error("paired: pair " + std::to_string(i) + " has 1-rank blocks on rank " +
                                        std::to_string(one_rank[i]));
    paired.pairs.push_back({static_cast<PairKind>(kinds[i]), a_first[i] != 0, a_us[i], b_us[i], start_s[i],
                            static_cast<int>(one_rank[i])});
  }
  return {paired};
}

// ---------------------------------------------------------------------------------------
// Study metadata: attributes of group /metadata, one per row of kMetadataFields; commbench:
// parallel datasets in /commbench.

void write_metadata(const H5Io& io, hid_t file, const StudyMetadata& m) {
  write_fields(io, file, "metadata", m, kMetadataFields);
}

StudyMetadata read_metadata(const H5Io& io, hid_t file) {
  return read_fields<StudyMetadata>(io, file, "metadata", kMetadataFields);
}

bool is_empty(const CommBenchTable& t) {
  return t.bytes.empty() && t.time_us.empty() && t.algbw_gbs.empty() && t.busbw_gbs.empty();
}

void check_columns_agree(const std::string& path, const CommBenchTable& t) {
  const size_t rows = t.bytes.size();
  if (t.time_us.size() != rows || t.algbw_gbs.size() != rows || t.busbw_gbs.size() != rows)
    throw StoreError(path + ": commbench columns differ in length (bytes " + std::to_string(rows) + ", time_us " +
                     std::to_string(t.time_us.size()) + ", algbw_gbs " + std::to_string(t.algbw_gbs.size()) +
                     ", busbw_gbs " + std::to_string(t.busbw_gbs.size()) + ")");
}

void write_commbench_group(const H5Io& io, hid_t file, const CommBenchTable& t) {
  H5Group g = io.create_group(file, "commbench");
  io.put_doubles(g.get(), "bytes", t.bytes);
  io.put_doubles(g.get(), "time_us", t.time_us);
  io.put_doubles(g.get(), "algbw_gbs", t.algbw_gbs);
  io.put_doubles(g.get(), "busbw_gbs", t.busbw_gbs);
}

// Empty when the study has none.
CommBenchTable read_commbench_group(const H5Io& io, hid_t file) {
  if (!io.has_link(file, "commbench")) return {};
  H5Group g = io.open_group(file, "commbench");
  CommBenchTable t;
  t.bytes = io.get_doubles(g.get(), "bytes");
  const long rows = static_cast<long>(t.bytes.size());
  t.time_us = io.get_doubles(g.get(), "time_us", rows);
  t.algbw_gbs = io.get_doubles(g.get(), "algbw_gbs", rows);
  t.busbw_gbs = io.get_doubles(g.get(), "busbw_gbs", rows);
  return t;
}

std::string study_path(const std::string& dir) { return (fs::path(dir) / kStudyFileName).string(); }

}  // namespace

// ---------------------------------------------------------------------------------------
// Public API

std::string config_file_name(const std::string& id, int launch, int launches) {
  if (launches <= 1) return id + ".h5";
  return id + ".launch-" + std::to_string(launch + 1) + "-of-" + std::to_string(launches) + ".h5";
}

std::vector<ConfigRecord> merge_launches(std::vector<ConfigRecord> records) {
  std::vector<ConfigRecord> merged;
  std::map<std::string, size_t> position;  // id -> index in merged
  for (ConfigRecord& record : records) {
    if (record.launches <= 1) {
      merged.push_back(std::move(record));
      continue;
    }
    for (RunRecord& run : record.runs) run.launch = record.launch;
    const auto [it, fresh] = position.emplace(record.id, merged.size());
    if (fresh) {
      merged.push_back(std::move(record));
      continue;
    }
    ConfigRecord& into = merged[it->second];
    for (RunRecord& run : record.runs) into.runs.push_back(std::move(run));
    // Each launch records its own; the first one recorded stands for the configuration.
    if (!into.gradient_timing.recorded()) into.gradient_timing = std::move(record.gradient_timing);
    for (PairedLaunch& paired : record.paired) into.paired.push_back(std::move(paired));
    into.launches = std::max(into.launches, record.launches);
    // The newest launch names the build and the time the configuration was complete.
    if (record.finished_utc > into.finished_utc) {
      into.finished_utc = record.finished_utc;
      into.git_commit = record.git_commit;
    }
  }
  for (ConfigRecord& record : merged)
    std::stable_sort(record.runs.begin(), record.runs.end(),
                     [](const RunRecord& a, const RunRecord& b) { return a.index < b.index; });
  return merged;
}

void write_config(const std::string& dir, const ConfigRecord& record) {
  const std::string path = (fs::path(dir) / config_file_name(record.id, record.launch, record.launches)).string();
  if (record.id.empty() || record.id.find('/') != std::string::npos)
    throw StoreError(path + ": configuration id '" + record.id + "' cannot be a file name");
  write_store_file(path, kConfigurationKind, [&](const H5Io& io, hid_t file) {
    io.put_string(file, "config_id", record.id);
    if (!record.git_commit.empty()) io.put_string(file, "git_commit", record.git_commit);
    if (!record.finished_utc.empty()) io.put_string(file, "finished_utc", record.finished_utc);
    io.put_int(file, "launch", record.launch);
    io.put_int(file, "launches", record.launches);
    write_params(io, file, record.params);
    if (record.gradient_timing.recorded()) write_gradient_timing(io, file, record.gradient_timing);
    // A file holds one launch's blocks: the launch that wrote it.
    if (!record.paired.empty()) write_paired(io, file, record.paired.back());
    H5Group runs = io.create_group(file, "runs");
    for (const auto& run : record.runs) write_run(io, runs.get(), run);
  });
}

ConfigRecord read_config(const std::string& path) {
  H5File file = open_store_file(path, kConfigurationKind);
  const H5Io io(path);
  ConfigRecord record;
  record.id = io.get_string(file.get(), "config_id");
  // Optional: files written before they existed lack them (schema version unchanged).
  if (io.has_attribute(file.get(), "git_commit")) record.git_commit = io.get_string(file.get(), "git_commit");
  if (io.has_attribute(file.get(), "finished_utc")) record.finished_utc = io.get_string(file.get(), "finished_utc");
  if (io.has_attribute(file.get(), "launches")) {
    record.launches = static_cast<int>(io.get_int(file.get(), "launches"));
    record.launch = static_cast<int>(io.get_int(file.get(), "launch"));
    if (record.launches < 1 || record.launch < 0 || record.launch >= record.launches)
      throw io.error("launch " + std::to_string(record.launch) + " of " + std::to_string(record.launches) +
                     " is out of range");
  }
  record.params = read_params(io, file.get());
  record.gradient_timing = read_gradient_timing(io, file.get());
  record.paired = read_paired(io, file.get());
  H5Group runs = io.open_group(file.get(), "runs");
  for (const auto& name : io.member_names(runs.get())) record.runs.push_back(read_run(io, runs.get(), name));
  // Group names sort as text; run_10000 would land between run_1000 and run_1001.
  std::stable_sort(record.runs.begin(), record.runs.end(),
                   [](const RunRecord& a, const RunRecord& b) { return a.index < b.index; });
  return record;
}

std::vector<std::string> list_config_files(const std::string& dir, std::vector<std::string>* skipped) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != ".h5" || p.filename() == kStudyFileName) continue;
    try {
      open_store_file(p.string(), kConfigurationKind);
      files.push_back(p.string());
    } catch (const StoreError& e) {
      if (skipped) skipped->push_back(e.what());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool holds_study(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(fs::path(dir) / kStudyFileName, ec)) return true;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".h5") return true;
  return false;
}

std::string study_folder_in(const std::string& path) {
  std::error_code ec;
  const fs::path inner = fs::path(path) / "study";
  if (fs::is_directory(path, ec) && !holds_study(path) && fs::is_directory(inner, ec) && holds_study(inner.string()))
    return inner.string();
  return path;
}

void remove_unfinished_writes(const std::string& dir) {
  const std::string unfinished = std::string(".h5") + kUnfinishedSuffix;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= unfinished.size() ||
        name.compare(name.size() - unfinished.size(), unfinished.size(), unfinished) != 0)
      continue;
    std::error_code removed;
    if (!fs::remove(it->path(), removed) || removed)
      throw StoreError(it->path().string() + ": cannot remove this leftover of an interrupted write: " +
                       removed.message());
  }
  if (ec) throw StoreError(dir + ": cannot list the directory: " + ec.message());
}

// A stored or asked-for value as the --resume message shows it.
template <typename T>
static std::string value_text(const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    return "'" + value + "'";
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_arithmetic_v<T>) {
    std::ostringstream text;
    text << value;
    return text.str();
  } else {
    return std::to_string(value.size()) + " entries";
  }
}

std::vector<std::string> params_differences(const ConfigParams& stored, const ConfigParams& asked) {
  std::vector<std::string> differences;
  for (const ConfigField& field : kConfigFields) {
    if (field.resume != Resume::must_match) continue;
    std::visit(
        [&](auto member) {
          if (stored.*member == asked.*member) return;
          differences.push_back(std::string(field.attribute) + " " + value_text(stored.*member) + " stored, " +
                                value_text(asked.*member) + " asked for");
        },
        field.member);
  }
  return differences;
}

bool same_params(const ConfigParams& a, const ConfigParams& b) { return params_differences(a, b).empty(); }

bool config_file_matches(const std::string& path, const ConfigParams& params, std::string* difference) {
  try {
    H5File file = open_store_file(path, kConfigurationKind);
    const std::vector<std::string> differences = params_differences(read_params(H5Io(path), file.get()), params);
    if (difference) {
      difference->clear();
      for (const std::string& d : differences) *difference += (difference->empty() ? "" : "; ") + d;
    }
    return differences.empty();
  } catch (const StoreError& e) {
    if (difference) *difference = std::string("unreadable: ") + e.what();
    return false;  // unreadable or foreign: not the same experiment, measure it again
  }
}

void write_study(const std::string& dir, const StudyMetadata& metadata, const CommBenchTable& commbench) {
  const std::string path = study_path(dir);
  check_columns_agree(path, commbench);
  write_store_file(path, kStudyKind, [&](const H5Io& io, hid_t file) {
    write_metadata(io, file, metadata);
    if (!is_empty(commbench)) write_commbench_group(io, file, commbench);
  });
}

StudyMetadata read_study(const std::string& dir, CommBenchTable* commbench) {
  const std::string path = study_path(dir);
  H5File file = open_store_file(path, kStudyKind);
  const H5Io io(path);
  StudyMetadata metadata = read_metadata(io, file.get());
  if (commbench) *commbench = read_commbench_group(io, file.get());
  return metadata;
}

std::string config_id(const ConfigParams& p) {
  std::ostringstream id;
  id << p.model << "_b" << p.batch_per_rank << "_w" << p.world_size << "_" << p.scaling << "_" << p.optimizer << "_"
     << p.dtype << "_bk" << p.bucket_mb << (p.overlap ? "_ov" : "_seq") << "_" << p.exec << "_" << p.nccl_profile;
  if (p.allreduce_dtype != "float32") id << "_ar-" << p.allreduce_dtype;  // ids of float32 studies unchanged
  if (!p.broadcast_buffers) id << "_own-buffers";
  if (p.engine != kEngineDdpscale) id << "_" << p.engine;
  std::string text = id.str();
  for (char& c : text)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '-';
  return text;
}

}  // namespace ddpscale
