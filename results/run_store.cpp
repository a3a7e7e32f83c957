#include "run_store.hpp"

#include "hdf5_handles.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>

namespace fs = std::filesystem;

namespace ddpscale {

// ---------------------------------------------------------------------------------------
// Errors

static herr_t keep_innermost(unsigned n, const H5E_error2_t* error, void* data) {
  auto* message = static_cast<std::string*>(data);
  if (n == 0 && error && error->desc) *message = error->desc;
  return 0;
}

std::string hdf5_error_message() {
  std::string message = "unknown HDF5 error";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &message);
  return message;
}

void silence_hdf5_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

namespace {

// ---------------------------------------------------------------------------------------
// Small typed helpers over one open file; `path` makes every error name the file.

class H5Io {
 public:
  explicit H5Io(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

  H5Handle create_group(hid_t parent, const std::string& name) const {
    return {DDPSCALE_H5_CHECK(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path_), H5Gclose};
  }
  H5Handle open_group(hid_t parent, const std::string& name) const {
    if (H5Lexists(parent, name.c_str(), H5P_DEFAULT) <= 0) throw StoreError(path_ + ": group '" + name + "' is missing");
    return {DDPSCALE_H5_CHECK(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), path_), H5Gclose};
  }

  // Fixed-length, null-terminated strings: h5py, h5dump and pandas read them without fuss.
  static H5Handle string_type(size_t length) {
    H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type.get(), std::max<size_t>(1, length + 1));
    H5Tset_strpad(type.get(), H5T_STR_NULLTERM);
    H5Tset_cset(type.get(), H5T_CSET_UTF8);
    return type;
  }

  void put_string(hid_t loc, const std::string& name, const std::string& value) const {
    H5Handle type = string_type(value.size());
    H5Handle space(DDPSCALE_H5_CHECK(H5Screate(H5S_SCALAR), path_), H5Sclose);
    H5Handle attr(DDPSCALE_H5_CHECK(H5Acreate2(loc, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), path_),
                  H5Aclose);
    DDPSCALE_H5_CHECK(H5Awrite(attr.get(), type.get(), value.c_str()), path_);
  }
  template <typename T>
  void put_number(hid_t loc, const std::string& name, T value, hid_t type) const {
    H5Handle space(DDPSCALE_H5_CHECK(H5Screate(H5S_SCALAR), path_), H5Sclose);
    H5Handle attr(DDPSCALE_H5_CHECK(H5Acreate2(loc, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT), path_),
                  H5Aclose);
    DDPSCALE_H5_CHECK(H5Awrite(attr.get(), type, &value), path_);
  }
  void put_int(hid_t loc, const std::string& name, int64_t value) const { put_number(loc, name, value, H5T_NATIVE_INT64); }
  void put_double(hid_t loc, const std::string& name, double value) const { put_number(loc, name, value, H5T_NATIVE_DOUBLE); }

  H5Handle open_attribute(hid_t loc, const std::string& name) const {
    if (H5Aexists(loc, name.c_str()) <= 0) throw StoreError(path_ + ": attribute '" + name + "' is missing");
    return {DDPSCALE_H5_CHECK(H5Aopen(loc, name.c_str(), H5P_DEFAULT), path_), H5Aclose};
  }
  std::string get_string(hid_t loc, const std::string& name) const {
    H5Handle attr = open_attribute(loc, name);
    H5Handle stored(DDPSCALE_H5_CHECK(H5Aget_type(attr.get()), path_), H5Tclose);
    if (H5Tget_class(stored.get()) != H5T_STRING) throw StoreError(path_ + ": attribute '" + name + "' is not a string");
    const size_t size = H5Tget_size(stored.get());
    H5Handle type = string_type(size);
    std::string value(size + 1, '\0');
    DDPSCALE_H5_CHECK(H5Aread(attr.get(), type.get(), value.data()), path_);
    value.resize(std::strlen(value.c_str()));
    return value;
  }
  int64_t get_int(hid_t loc, const std::string& name) const {
    int64_t value = 0;
    H5Handle attr = open_attribute(loc, name);
    DDPSCALE_H5_CHECK(H5Aread(attr.get(), H5T_NATIVE_INT64, &value), path_);
    return value;
  }
  double get_double(hid_t loc, const std::string& name) const {
    double value = 0;
    H5Handle attr = open_attribute(loc, name);
    DDPSCALE_H5_CHECK(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value), path_);
    return value;
  }

  template <typename T>
  void put_array(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, const T* data, hid_t type) const {
    H5Handle space(DDPSCALE_H5_CHECK(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), path_), H5Sclose);
    H5Handle set(DDPSCALE_H5_CHECK(H5Dcreate2(loc, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path_),
                 H5Dclose);
    hsize_t count = 1;
    for (hsize_t d : dims) count *= d;
    if (count > 0) DDPSCALE_H5_CHECK(H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), path_);
  }
  void put_strings(hid_t loc, const std::string& name, const std::vector<std::string>& values) const {
    size_t longest = 0;
    for (const auto& v : values) longest = std::max(longest, v.size());
    H5Handle type = string_type(longest);
    const size_t stride = longest + 1;
    std::vector<char> packed(std::max<size_t>(1, values.size() * stride), '\0');
    for (size_t i = 0; i < values.size(); ++i) values[i].copy(packed.data() + i * stride, values[i].size());
    const std::vector<hsize_t> dims = {values.size()};
    put_array(loc, name, dims, packed.data(), type.get());
  }

  // Reads a whole dataset; dims receives its shape.
  template <typename T>
  std::vector<T> get_array(hid_t loc, const std::string& name, hid_t type, std::vector<hsize_t>& dims) const {
    if (H5Lexists(loc, name.c_str(), H5P_DEFAULT) <= 0) throw StoreError(path_ + ": dataset '" + name + "' is missing");
    H5Handle set(DDPSCALE_H5_CHECK(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), path_), H5Dclose);
    H5Handle space(DDPSCALE_H5_CHECK(H5Dget_space(set.get()), path_), H5Sclose);
    const int rank = DDPSCALE_H5_CHECK(H5Sget_simple_extent_ndims(space.get()), path_);
    dims.assign(static_cast<size_t>(rank), 0);
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    hsize_t count = 1;
    for (hsize_t d : dims) count *= d;
    std::vector<T> values(count);
    if (count > 0) DDPSCALE_H5_CHECK(H5Dread(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), path_);
    return values;
  }
  std::vector<std::string> get_strings(hid_t loc, const std::string& name) const {
    if (H5Lexists(loc, name.c_str(), H5P_DEFAULT) <= 0) throw StoreError(path_ + ": dataset '" + name + "' is missing");
    H5Handle set(DDPSCALE_H5_CHECK(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), path_), H5Dclose);
    H5Handle stored(DDPSCALE_H5_CHECK(H5Dget_type(set.get()), path_), H5Tclose);
    const size_t stride = H5Tget_size(stored.get());
    H5Handle space(DDPSCALE_H5_CHECK(H5Dget_space(set.get()), path_), H5Sclose);
    hsize_t count = 0;
    H5Sget_simple_extent_dims(space.get(), &count, nullptr);
    std::vector<char> packed(std::max<size_t>(1, count * stride), '\0');
    H5Handle type = string_type(stride - 1);
    if (count > 0) DDPSCALE_H5_CHECK(H5Dread(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, packed.data()), path_);
    std::vector<std::string> values;
    for (hsize_t i = 0; i < count; ++i) values.emplace_back(packed.data() + i * stride);
    return values;
  }

  void put_map(hid_t parent, const std::string& name, const std::map<std::string, std::string>& values) const {
    H5Handle group = create_group(parent, name);
    for (const auto& [key, value] : values) put_string(group.get(), key, value);
  }
  std::map<std::string, std::string> get_map(hid_t parent, const std::string& name) const {
    H5Handle group = open_group(parent, name);
    std::map<std::string, std::string> values;
    H5O_info_t info;
#if H5_VERSION_GE(1, 12, 0)
    DDPSCALE_H5_CHECK(H5Oget_info3(group.get(), &info, H5O_INFO_NUM_ATTRS), path_);
#else
    DDPSCALE_H5_CHECK(H5Oget_info2(group.get(), &info, H5O_INFO_NUM_ATTRS), path_);
#endif
    for (hsize_t i = 0; i < info.num_attrs; ++i) {
      char key[256] = {0};
      H5Aget_name_by_idx(group.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, key, sizeof(key), H5P_DEFAULT);
      values[key] = get_string(group.get(), key);
    }
    return values;
  }

 private:
  std::string path_;
};

// ---------------------------------------------------------------------------------------
// Files: written under <name>.tmp, marked complete last, renamed into place.

H5Handle create_file(const std::string& path) {
  silence_hdf5_errors();
  return {DDPSCALE_H5_CHECK(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), path), H5Fclose};
}

void stamp_schema(const H5Io& io, hid_t file) {
  io.put_string(file, "schema", kStoreSchema);
  io.put_int(file, "schema_version", kStoreSchemaVersion);
}

// Opens a store file for reading and checks that it is one of ours, of our version, complete.
H5Handle open_store_file(const std::string& path) {
  silence_hdf5_errors();
  if (!fs::exists(path)) throw StoreError(path + ": no such file");
  if (H5Fis_hdf5(path.c_str()) <= 0) throw StoreError(path + ": not an HDF5 file (or truncated)");
  H5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file.get() < 0) throw StoreError(path + ": cannot open as HDF5 (truncated or damaged?): " + hdf5_error_message());
  H5Io io(path);
  if (H5Aexists(file.get(), "schema") <= 0 || io.get_string(file.get(), "schema") != kStoreSchema)
    throw StoreError(path + ": not a ddpscale run store file (no schema '" + std::string(kStoreSchema) + "')");
  const int64_t version = io.get_int(file.get(), "schema_version");
  if (version != kStoreSchemaVersion)
    throw StoreError(path + ": schema version " + std::to_string(version) + ", this ddpscale reads version " +
                     std::to_string(kStoreSchemaVersion));
  if (H5Aexists(file.get(), "complete") <= 0 || io.get_int(file.get(), "complete") != 1)
    throw StoreError(path + ": incomplete file (the writer stopped before finishing it)");
  return file;
}

template <typename WriteBody>
void write_atomically(const std::string& final_path, WriteBody body) {
  const std::string tmp = final_path + ".tmp";
  try {
    {
      H5Handle file = create_file(tmp);
      H5Io io(final_path);
      stamp_schema(io, file.get());
      body(io, file.get());
      io.put_int(file.get(), "complete", 1);
      DDPSCALE_H5_CHECK(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), final_path);
      file.reset();
    }
    std::error_code ec;
    fs::rename(tmp, final_path, ec);
    if (ec) throw StoreError(final_path + ": cannot move the finished file into place: " + ec.message());
  } catch (...) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw;
  }
}

void write_params(const H5Io& io, hid_t file, const ConfigParams& p) {
  H5Handle g = io.create_group(file, "params");
  io.put_string(g.get(), "model", p.model);
  io.put_int(g.get(), "parameters", p.parameters);
  io.put_int(g.get(), "batch_per_rank", p.batch_per_rank);
  io.put_int(g.get(), "global_batch", p.global_batch);
  io.put_int(g.get(), "world_size", p.world_size);
  io.put_string(g.get(), "scaling", p.scaling);
  io.put_string(g.get(), "optimizer", p.optimizer);
  io.put_double(g.get(), "learning_rate", p.learning_rate);
  io.put_string(g.get(), "dtype", p.dtype);
  io.put_double(g.get(), "bucket_mb", p.bucket_mb);
  io.put_int(g.get(), "overlap", p.overlap ? 1 : 0);
  io.put_string(g.get(), "exec", p.exec);
  io.put_string(g.get(), "nccl_profile", p.nccl_profile);
  io.put_int(g.get(), "warmup_steps", p.warmup_steps);
  io.put_int(g.get(), "measured_steps", p.measured_steps);
  io.put_int(g.get(), "runs", p.runs);
  io.put_int(g.get(), "seed", static_cast<int64_t>(p.seed));
  io.put_string(g.get(), "device", p.device);
  io.put_string(g.get(), "backend", p.backend);
  io.put_map(g.get(), "nccl_variables", p.nccl_variables);
}

ConfigParams read_params(const H5Io& io, hid_t file) {
  H5Handle g = io.open_group(file, "params");
  ConfigParams p;
  p.model = io.get_string(g.get(), "model");
  p.parameters = io.get_int(g.get(), "parameters");
  p.batch_per_rank = io.get_int(g.get(), "batch_per_rank");
  p.global_batch = io.get_int(g.get(), "global_batch");
  p.world_size = static_cast<int>(io.get_int(g.get(), "world_size"));
  p.scaling = io.get_string(g.get(), "scaling");
  p.optimizer = io.get_string(g.get(), "optimizer");
  p.learning_rate = io.get_double(g.get(), "learning_rate");
  p.dtype = io.get_string(g.get(), "dtype");
  p.bucket_mb = io.get_double(g.get(), "bucket_mb");
  p.overlap = io.get_int(g.get(), "overlap") != 0;
  p.exec = io.get_string(g.get(), "exec");
  p.nccl_profile = io.get_string(g.get(), "nccl_profile");
  p.warmup_steps = static_cast<int>(io.get_int(g.get(), "warmup_steps"));
  p.measured_steps = static_cast<int>(io.get_int(g.get(), "measured_steps"));
  p.runs = static_cast<int>(io.get_int(g.get(), "runs"));
  p.seed = static_cast<uint64_t>(io.get_int(g.get(), "seed"));
  p.device = io.get_string(g.get(), "device");
  p.backend = io.get_string(g.get(), "backend");
  p.nccl_variables = io.get_map(g.get(), "nccl_variables");
  return p;
}

std::string run_group_name(int index) {
  char name[32];
  std::snprintf(name, sizeof(name), "run_%04d", index);
  return name;
}

std::string phase_names_text() {
  std::string text;
  for (int p = 0; p < kPhaseCount; ++p) text += (p ? "," : "") + std::string(phase_name(static_cast<Phase>(p)));
  return text;
}

// Per-rank series of different lengths become [ranks][longest] padded with NaN, plus a
// count per rank.
void put_ragged(const H5Io& io, hid_t g, const std::string& name, const std::vector<RankTimings>& ranks,
                std::vector<float> RankTimings::*series) {
  size_t longest = 0;
  for (const auto& r : ranks) longest = std::max(longest, (r.*series).size());
  std::vector<float> padded(ranks.size() * longest, std::numeric_limits<float>::quiet_NaN());
  std::vector<int64_t> counts;
  for (size_t i = 0; i < ranks.size(); ++i) {
    std::copy((ranks[i].*series).begin(), (ranks[i].*series).end(), padded.begin() + static_cast<long>(i * longest));
    counts.push_back(static_cast<int64_t>((ranks[i].*series).size()));
  }
  io.put_array(g, name, {ranks.size(), longest}, padded.data(), H5T_NATIVE_FLOAT);
  io.put_array(g, name + "_count", {ranks.size()}, counts.data(), H5T_NATIVE_INT64);
}

void get_ragged(const H5Io& io, hid_t g, const std::string& name, std::vector<RankTimings>& ranks,
                std::vector<float> RankTimings::*series) {
  std::vector<hsize_t> dims;
  const auto padded = io.get_array<float>(g, name, H5T_NATIVE_FLOAT, dims);
  const auto counts = io.get_array<int64_t>(g, name + "_count", H5T_NATIVE_INT64, dims);
  const size_t longest = counts.empty() ? 0 : padded.size() / counts.size();
  for (size_t i = 0; i < ranks.size() && i < counts.size(); ++i) {
    const auto begin = padded.begin() + static_cast<long>(i * longest);
    (ranks[i].*series).assign(begin, begin + counts[i]);
  }
}

void write_run(const H5Io& io, hid_t runs, const RunRecord& run) {
  H5Handle g = io.create_group(runs, run_group_name(run.index));
  io.put_int(g.get(), "index", run.index);
  io.put_int(g.get(), "seed", static_cast<int64_t>(run.seed));
  io.put_string(g.get(), "status", run.status == RunStatus::ok ? "ok" : "failed");
  io.put_string(g.get(), "failure", run.failure);
  io.put_double(g.get(), "samples_per_second", run.samples_per_second);
  io.put_array(g.get(), "loss", {run.loss.size()}, run.loss.data(), H5T_NATIVE_FLOAT);

  const size_t ranks = run.ranks.size();
  size_t steps = 0;
  for (const auto& r : run.ranks) steps = std::max(steps, r.phase_us[0].size());
  std::vector<float> phases(ranks * kPhaseCount * steps, 0.0f);
  std::vector<double> wall;
  std::vector<int64_t> peak;
  for (size_t r = 0; r < ranks; ++r) {
    for (size_t p = 0; p < static_cast<size_t>(kPhaseCount); ++p) {
      const auto& series = run.ranks[r].phase_us[p];
      std::copy(series.begin(), series.end(), phases.begin() + static_cast<long>((r * kPhaseCount + p) * steps));
    }
    wall.push_back(run.ranks[r].wall_seconds);
    peak.push_back(run.ranks[r].peak_memory_bytes);
  }
  io.put_array(g.get(), "phase_us", {ranks, static_cast<hsize_t>(kPhaseCount), steps}, phases.data(), H5T_NATIVE_FLOAT);
  H5Handle set(H5Dopen2(g.get(), "phase_us", H5P_DEFAULT), H5Dclose);
  io.put_string(set.get(), "phases", phase_names_text());
  io.put_string(set.get(), "units", "microseconds");
  io.put_array(g.get(), "wall_seconds", {ranks}, wall.data(), H5T_NATIVE_DOUBLE);
  io.put_array(g.get(), "peak_memory_bytes", {ranks}, peak.data(), H5T_NATIVE_INT64);
  put_ragged(io, g.get(), "gpu_utilization_pct", run.ranks, &RankTimings::gpu_utilization_pct);
  put_ragged(io, g.get(), "gpu_memory_used_mib", run.ranks, &RankTimings::gpu_memory_used_mib);
  put_ragged(io, g.get(), "gpu_power_w", run.ranks, &RankTimings::gpu_power_w);
}

RunRecord read_run(const H5Io& io, hid_t runs, const std::string& name) {
  H5Handle g = io.open_group(runs, name);
  RunRecord run;
  run.index = static_cast<int>(io.get_int(g.get(), "index"));
  run.seed = static_cast<uint64_t>(io.get_int(g.get(), "seed"));
  run.status = io.get_string(g.get(), "status") == "ok" ? RunStatus::ok : RunStatus::failed;
  run.failure = io.get_string(g.get(), "failure");
  run.samples_per_second = io.get_double(g.get(), "samples_per_second");
  std::vector<hsize_t> dims;
  run.loss = io.get_array<float>(g.get(), "loss", H5T_NATIVE_FLOAT, dims);
  std::vector<hsize_t> phase_dims;
  const auto phases = io.get_array<float>(g.get(), "phase_us", H5T_NATIVE_FLOAT, phase_dims);
  if (phase_dims.size() != 3 || phase_dims[1] != static_cast<hsize_t>(kPhaseCount))
    throw StoreError(io.path() + ": " + name + "/phase_us has the wrong shape");
  const auto wall = io.get_array<double>(g.get(), "wall_seconds", H5T_NATIVE_DOUBLE, dims);
  const auto peak = io.get_array<int64_t>(g.get(), "peak_memory_bytes", H5T_NATIVE_INT64, dims);
  const size_t ranks = phase_dims[0], steps = phase_dims[2];
  run.ranks.resize(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    run.ranks[r].rank = static_cast<int>(r);
    run.ranks[r].wall_seconds = r < wall.size() ? wall[r] : 0;
    run.ranks[r].peak_memory_bytes = r < peak.size() ? peak[r] : 0;
    for (size_t p = 0; p < static_cast<size_t>(kPhaseCount); ++p) {
      const auto begin = phases.begin() + static_cast<long>((r * kPhaseCount + p) * steps);
      run.ranks[r].phase_us[p].assign(begin, begin + static_cast<long>(steps));
    }
  }
  get_ragged(io, g.get(), "gpu_utilization_pct", run.ranks, &RankTimings::gpu_utilization_pct);
  get_ragged(io, g.get(), "gpu_memory_used_mib", run.ranks, &RankTimings::gpu_memory_used_mib);
  get_ragged(io, g.get(), "gpu_power_w", run.ranks, &RankTimings::gpu_power_w);
  return run;
}

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

}  // namespace

void write_config(const std::string& dir, const ConfigRecord& record) {
  const std::string path = (fs::path(dir) / (record.id + ".h5")).string();
  write_atomically(path, [&](const H5Io& io, hid_t file) {
    io.put_string(file, "kind", "configuration");
    io.put_string(file, "config_id", record.id);
    write_params(io, file, record.params);
    H5Handle runs = io.create_group(file, "runs");
    for (const auto& run : record.runs) write_run(io, runs.get(), run);
  });
}

ConfigRecord read_config(const std::string& path) {
  H5Handle file = open_store_file(path);
  H5Io io(path);
  if (io.get_string(file.get(), "kind") != "configuration") throw StoreError(path + ": not a configuration file");
  ConfigRecord record;
  record.id = io.get_string(file.get(), "config_id");
  record.params = read_params(io, file.get());
  H5Handle runs = io.open_group(file.get(), "runs");
  std::vector<std::string> names;
  DDPSCALE_H5_CHECK(H5Literate(runs.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &names), path);
  for (const auto& name : names) record.runs.push_back(read_run(io, runs.get(), name));
  return record;
}

std::vector<std::string> list_config_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto& p = entry.path();
    if (p.extension() == ".h5" && p.filename() != "study.h5") files.push_back(p.string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool same_params(const ConfigParams& a, const ConfigParams& b) {
  return a.model == b.model && a.parameters == b.parameters && a.batch_per_rank == b.batch_per_rank &&
         a.global_batch == b.global_batch && a.world_size == b.world_size && a.scaling == b.scaling &&
         a.optimizer == b.optimizer && a.learning_rate == b.learning_rate && a.dtype == b.dtype &&
         a.bucket_mb == b.bucket_mb && a.overlap == b.overlap && a.exec == b.exec && a.nccl_profile == b.nccl_profile &&
         a.warmup_steps == b.warmup_steps && a.measured_steps == b.measured_steps && a.runs == b.runs &&
         a.seed == b.seed && a.device == b.device && a.backend == b.backend;
}

bool config_file_matches(const std::string& path, const ConfigParams& params) {
  try {
    H5Handle file = open_store_file(path);
    return same_params(read_params(H5Io(path), file.get()), params);
  } catch (const StoreError&) {
    return false;
  }
}

void write_study(const std::string& dir, const StudyMetadata& m, const CommBenchTable& bench) {
  const std::string path = (fs::path(dir) / "study.h5").string();
  write_atomically(path, [&](const H5Io& io, hid_t file) {
    io.put_string(file, "kind", "study");
    H5Handle g = io.create_group(file, "metadata");
    io.put_string(g.get(), "tool_version", m.tool_version);
    io.put_string(g.get(), "git_commit", m.git_commit);
    io.put_string(g.get(), "command_line", m.command_line);
    io.put_string(g.get(), "spec_text", m.spec_text);
    io.put_string(g.get(), "created_utc", m.created_utc);
    io.put_string(g.get(), "gpu_driver", m.gpu_driver);
    io.put_string(g.get(), "cuda_version", m.cuda_version);
    io.put_string(g.get(), "nccl_version", m.nccl_version);
    io.put_string(g.get(), "mpi_version", m.mpi_version);
    io.put_string(g.get(), "torch_version", m.torch_version);
    io.put_string(g.get(), "hdf5_version", m.hdf5_version);
    io.put_string(g.get(), "link_topology", m.link_topology);
    io.put_strings(g.get(), "hostnames", m.hostnames);
    io.put_strings(g.get(), "gpu_names", m.gpu_names);
    io.put_map(g.get(), "nccl_variables", m.nccl_variables);
    H5Handle c = io.create_group(file, "commbench");
    io.put_array(c.get(), "bytes", {bench.bytes.size()}, bench.bytes.data(), H5T_NATIVE_DOUBLE);
    io.put_array(c.get(), "time_us", {bench.time_us.size()}, bench.time_us.data(), H5T_NATIVE_DOUBLE);
    io.put_array(c.get(), "algbw_gbs", {bench.algbw_gbs.size()}, bench.algbw_gbs.data(), H5T_NATIVE_DOUBLE);
    io.put_array(c.get(), "busbw_gbs", {bench.busbw_gbs.size()}, bench.busbw_gbs.data(), H5T_NATIVE_DOUBLE);
  });
}

StudyMetadata read_study(const std::string& dir, CommBenchTable* bench) {
  const std::string path = (fs::path(dir) / "study.h5").string();
  H5Handle file = open_store_file(path);
  H5Io io(path);
  H5Handle g = io.open_group(file.get(), "metadata");
  StudyMetadata m;
  m.tool_version = io.get_string(g.get(), "tool_version");
  m.git_commit = io.get_string(g.get(), "git_commit");
  m.command_line = io.get_string(g.get(), "command_line");
  m.spec_text = io.get_string(g.get(), "spec_text");
  m.created_utc = io.get_string(g.get(), "created_utc");
  m.gpu_driver = io.get_string(g.get(), "gpu_driver");
  m.cuda_version = io.get_string(g.get(), "cuda_version");
  m.nccl_version = io.get_string(g.get(), "nccl_version");
  m.mpi_version = io.get_string(g.get(), "mpi_version");
  m.torch_version = io.get_string(g.get(), "torch_version");
  m.hdf5_version = io.get_string(g.get(), "hdf5_version");
  m.link_topology = io.get_string(g.get(), "link_topology");
  m.hostnames = io.get_strings(g.get(), "hostnames");
  m.gpu_names = io.get_strings(g.get(), "gpu_names");
  m.nccl_variables = io.get_map(g.get(), "nccl_variables");
  if (bench) {
    H5Handle c = io.open_group(file.get(), "commbench");
    std::vector<hsize_t> dims;
    bench->bytes = io.get_array<double>(c.get(), "bytes", H5T_NATIVE_DOUBLE, dims);
    bench->time_us = io.get_array<double>(c.get(), "time_us", H5T_NATIVE_DOUBLE, dims);
    bench->algbw_gbs = io.get_array<double>(c.get(), "algbw_gbs", H5T_NATIVE_DOUBLE, dims);
    bench->busbw_gbs = io.get_array<double>(c.get(), "busbw_gbs", H5T_NATIVE_DOUBLE, dims);
  }
  return m;
}

}  // namespace ddpscale
