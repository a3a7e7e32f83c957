#include "run_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>

#include "hdf5_handles.hpp"

namespace fs = std::filesystem;

namespace ddpscale {

// ---------------------------------------------------------------------------------------
// Errors

namespace {

struct ErrorStackText {
  std::string outermost, innermost;
};

// HDF5 walks downward from the API call to the function that detected the problem.
herr_t remember_ends(unsigned n, const H5E_error2_t* error, void* data) {
  auto* text = static_cast<ErrorStackText*>(data);
  if (!error || !error->desc) return 0;
  if (n == 0) text->outermost = error->desc;
  text->innermost = error->desc;
  return 0;
}

}  // namespace

std::string hdf5_error_message() {
  ErrorStackText text;
  if (H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, remember_ends, &text) < 0 || text.outermost.empty())
    return "unknown HDF5 error";
  if (text.innermost.empty() || text.innermost == text.outermost) return text.outermost;
  return text.outermost + " (" + text.innermost + ")";
}

void silence_hdf5_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

namespace {

// ---------------------------------------------------------------------------------------
// Typed attribute and dataset helpers over one file; `path` makes every error name it.
// File types are fixed little-endian IEEE/two's complement so that a file written on one
// machine reads the same everywhere; memory types are native.

class H5Io {
 public:
  explicit H5Io(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

  StoreError error(const std::string& what) const { return StoreError(path_ + ": " + what); }

  // --- groups -----------------------------------------------------------------------------
  H5Group create_group(hid_t parent, const std::string& name) const {
    return H5Group(DDPSCALE_H5_CHECK(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path_));
  }
  bool has_link(hid_t parent, const std::string& name) const {
    return DDPSCALE_H5_CHECK(H5Lexists(parent, name.c_str(), H5P_DEFAULT), path_) > 0;
  }
  H5Group open_group(hid_t parent, const std::string& name) const {
    if (!has_link(parent, name)) throw error("group '" + name + "' is missing");
    return H5Group(DDPSCALE_H5_CHECK(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), path_));
  }
  std::vector<std::string> member_names(hid_t group) const {
    std::vector<std::string> names;
    DDPSCALE_H5_CHECK(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_link_name, &names), path_);
    return names;
  }

  // --- strings: fixed-length, null-terminated, UTF-8 (h5py, h5dump and pandas read them
  // without needing variable-length support) -----------------------------------------------
  H5Datatype string_type(size_t length) const {
    H5Datatype type(DDPSCALE_H5_CHECK(H5Tcopy(H5T_C_S1), path_));
    DDPSCALE_H5_CHECK(H5Tset_size(type.get(), std::max<size_t>(1, length + 1)), path_);
    DDPSCALE_H5_CHECK(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), path_);
    DDPSCALE_H5_CHECK(H5Tset_cset(type.get(), H5T_CSET_UTF8), path_);
    return type;
  }

  // --- attributes -------------------------------------------------------------------------
  void put_attribute(hid_t loc, const std::string& name, hid_t file_type, hid_t memory_type, hid_t space,
                     const void* data) const {
    H5Attribute attr(
        DDPSCALE_H5_CHECK(H5Acreate2(loc, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT), path_));
    DDPSCALE_H5_CHECK(H5Awrite(attr.get(), memory_type, data), path_);
  }
  void put_scalar(hid_t loc, const std::string& name, hid_t file_type, hid_t memory_type, const void* data) const {
    H5Dataspace scalar(DDPSCALE_H5_CHECK(H5Screate(H5S_SCALAR), path_));
    put_attribute(loc, name, file_type, memory_type, scalar.get(), data);
  }
  void put_string(hid_t loc, const std::string& name, const std::string& value) const {
    H5Datatype type = string_type(value.size());
    put_scalar(loc, name, type.get(), type.get(), value.c_str());
  }
  void put_int(hid_t loc, const std::string& name, int64_t value) const {
    put_scalar(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
  }
  void put_uint(hid_t loc, const std::string& name, uint64_t value) const {
    put_scalar(loc, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &value);
  }
  void put_double(hid_t loc, const std::string& name, double value) const {
    put_scalar(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
  }
  // A 1-D array of strings, padded to the longest.
  void put_string_list(hid_t loc, const std::string& name, const std::vector<std::string>& values) const {
    size_t longest = 0;
    for (const auto& v : values) longest = std::max(longest, v.size());
    H5Datatype type = string_type(longest);
    const size_t stride = longest + 1;
    std::vector<char> packed(std::max<size_t>(1, values.size() * stride), '\0');
    for (size_t i = 0; i < values.size(); ++i) values[i].copy(packed.data() + i * stride, values[i].size());
    const hsize_t count = values.size();
    H5Dataspace space(DDPSCALE_H5_CHECK(H5Screate_simple(1, &count, nullptr), path_));
    put_attribute(loc, name, type.get(), type.get(), space.get(), packed.data());
  }

  H5Attribute open_attribute(hid_t loc, const std::string& name) const {
    if (DDPSCALE_H5_CHECK(H5Aexists(loc, name.c_str()), path_) <= 0) throw error("attribute '" + name + "' is missing");
    return H5Attribute(DDPSCALE_H5_CHECK(H5Aopen(loc, name.c_str(), H5P_DEFAULT), path_));
  }
  bool has_attribute(hid_t loc, const std::string& name) const {
    return DDPSCALE_H5_CHECK(H5Aexists(loc, name.c_str()), path_) > 0;
  }
  // Reads a string attribute (scalar or 1-D) of any fixed-length string type, ASCII or UTF-8.
  std::vector<std::string> get_string_list(hid_t loc, const std::string& name) const {
    H5Attribute attr = open_attribute(loc, name);
    H5Datatype stored(DDPSCALE_H5_CHECK(H5Aget_type(attr.get()), path_));
    if (DDPSCALE_H5_CHECK(H5Tget_class(stored.get()), path_) != H5T_STRING)
      throw error("attribute '" + name + "' is not a string");
    if (DDPSCALE_H5_CHECK(H5Tis_variable_str(stored.get()), path_) > 0)
      throw error("attribute '" + name + "' is a variable-length string; this schema stores fixed-length ones");
    const size_t size = H5Tget_size(stored.get());
    if (size == 0) throw error("attribute '" + name + "': cannot read its string size");
    H5Dataspace space(DDPSCALE_H5_CHECK(H5Aget_space(attr.get()), path_));
    const auto count = static_cast<hsize_t>(DDPSCALE_H5_CHECK(H5Sget_simple_extent_npoints(space.get()), path_));
    // The stored type one byte longer and null-terminated: HDF5 converts between string
    // types only within one character set, and every value read must end.
    H5Datatype type(DDPSCALE_H5_CHECK(H5Tcopy(stored.get()), path_));
    const size_t stride = size + 1;
    DDPSCALE_H5_CHECK(H5Tset_size(type.get(), stride), path_);
    DDPSCALE_H5_CHECK(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), path_);
    std::vector<char> packed(std::max<size_t>(1, count * stride), '\0');
    if (count > 0) DDPSCALE_H5_CHECK(H5Aread(attr.get(), type.get(), packed.data()), path_);
    std::vector<std::string> values;
    for (hsize_t i = 0; i < count; ++i) values.emplace_back(packed.data() + i * stride);
    return values;
  }
  std::string get_string(hid_t loc, const std::string& name) const {
    const auto values = get_string_list(loc, name);
    if (values.size() != 1) throw error("attribute '" + name + "' holds " + std::to_string(values.size()) + " strings, not one");
    return values.front();
  }
  template <typename T>
  T get_number(hid_t loc, const std::string& name, hid_t memory_type) const {
    H5Attribute attr = open_attribute(loc, name);
    H5Dataspace space(DDPSCALE_H5_CHECK(H5Aget_space(attr.get()), path_));
    if (DDPSCALE_H5_CHECK(H5Sget_simple_extent_npoints(space.get()), path_) != 1)
      throw error("attribute '" + name + "' is not a single number");
    T value{};
    DDPSCALE_H5_CHECK(H5Aread(attr.get(), memory_type, &value), path_);
    return value;
  }
  int64_t get_int(hid_t loc, const std::string& name) const { return get_number<int64_t>(loc, name, H5T_NATIVE_INT64); }
  uint64_t get_uint(hid_t loc, const std::string& name) const {
    return get_number<uint64_t>(loc, name, H5T_NATIVE_UINT64);
  }
  double get_double(hid_t loc, const std::string& name) const {
    return get_number<double>(loc, name, H5T_NATIVE_DOUBLE);
  }

  // A string map as a group whose attributes are the entries.
  void put_map(hid_t parent, const std::string& name, const std::map<std::string, std::string>& values) const {
    H5Group group = create_group(parent, name);
    for (const auto& [key, value] : values) put_string(group.get(), key, value);
  }
  std::map<std::string, std::string> get_map(hid_t parent, const std::string& name) const {
    H5Group group = open_group(parent, name);
    std::vector<std::string> keys;
    hsize_t position = 0;
    DDPSCALE_H5_CHECK(H5Aiterate2(group.get(), H5_INDEX_NAME, H5_ITER_INC, &position, collect_attribute_name, &keys),
                      path_);
    std::map<std::string, std::string> values;
    for (const auto& key : keys) values[key] = get_string(group.get(), key);
    return values;
  }

  // --- datasets ---------------------------------------------------------------------------
  H5Dataset put_dataset(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, hid_t file_type,
                        hid_t memory_type, const void* data) const {
    H5Dataspace space(
        DDPSCALE_H5_CHECK(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), path_));
    H5Dataset set(DDPSCALE_H5_CHECK(
        H5Dcreate2(loc, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path_));
    if (element_count(dims) > 0)
      DDPSCALE_H5_CHECK(H5Dwrite(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), path_);
    return set;
  }
  H5Dataset put_floats(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                       const std::vector<float>& values) const {
    return put_dataset(loc, name, dims, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, values.data());
  }
  void put_doubles(hid_t loc, const std::string& name, const std::vector<double>& values) const {
    put_dataset(loc, name, {values.size()}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data());
  }
  void put_ints(hid_t loc, const std::string& name, const std::vector<int64_t>& values) const {
    put_dataset(loc, name, {values.size()}, H5T_STD_I64LE, H5T_NATIVE_INT64, values.data());
  }

  H5Dataset open_dataset(hid_t loc, const std::string& name) const {
    if (!has_link(loc, name)) throw error("dataset '" + name + "' is missing");
    return H5Dataset(DDPSCALE_H5_CHECK(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), path_));
  }
  // A whole dataset, converted to memory_type; dims receives its shape.
  template <typename T>
  std::vector<T> get_dataset(hid_t loc, const std::string& name, hid_t memory_type, std::vector<hsize_t>& dims) const {
    H5Dataset set = open_dataset(loc, name);
    H5Dataspace space(DDPSCALE_H5_CHECK(H5Dget_space(set.get()), path_));
    const int rank = DDPSCALE_H5_CHECK(H5Sget_simple_extent_ndims(space.get()), path_);
    dims.assign(static_cast<size_t>(rank), 0);
    DDPSCALE_H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), path_);
    std::vector<T> values(element_count(dims));
    if (!values.empty())
      DDPSCALE_H5_CHECK(H5Dread(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), path_);
    return values;
  }
  // A 1-D dataset whose length the caller knows, or -1 for any.
  template <typename T>
  std::vector<T> get_vector(hid_t loc, const std::string& name, hid_t memory_type, long expected_length = -1) const {
    std::vector<hsize_t> dims;
    auto values = get_dataset<T>(loc, name, memory_type, dims);
    if (dims.size() != 1) throw error("dataset '" + name + "' is not one-dimensional");
    if (expected_length >= 0 && values.size() != static_cast<size_t>(expected_length))
      throw error("dataset '" + name + "' has " + std::to_string(values.size()) + " entries, expected " +
                  std::to_string(expected_length));
    return values;
  }
  std::vector<float> get_floats(hid_t loc, const std::string& name, long expected_length = -1) const {
    return get_vector<float>(loc, name, H5T_NATIVE_FLOAT, expected_length);
  }
  std::vector<double> get_doubles(hid_t loc, const std::string& name, long expected_length = -1) const {
    return get_vector<double>(loc, name, H5T_NATIVE_DOUBLE, expected_length);
  }
  std::vector<int64_t> get_ints(hid_t loc, const std::string& name, long expected_length = -1) const {
    return get_vector<int64_t>(loc, name, H5T_NATIVE_INT64, expected_length);
  }

  static size_t element_count(const std::vector<hsize_t>& dims) {
    size_t count = 1;
    for (hsize_t d : dims) count *= static_cast<size_t>(d);
    return count;
  }

 private:
  static herr_t collect_link_name(hid_t, const char* name, const H5L_info_t*, void* names) {
    static_cast<std::vector<std::string>*>(names)->emplace_back(name);
    return 0;
  }
  static herr_t collect_attribute_name(hid_t, const char* name, const H5A_info_t*, void* names) {
    static_cast<std::vector<std::string>*>(names)->emplace_back(name);
    return 0;
  }

  std::string path_;
};

// ---------------------------------------------------------------------------------------
// Files: written under <name>.tmp, marked complete last, synced, renamed into place.

constexpr const char* kConfigurationKind = "configuration";
constexpr const char* kStudyKind = "study";

// The 1.8 file format: it keeps attributes over 64 KiB (a long spec_text) in dense storage,
// and a file written by a newer library on the GPU machine stays readable by HDF5 1.8/1.10.
H5PropertyList portable_file_access(const std::string& label) {
  H5PropertyList access(DDPSCALE_H5_CHECK(H5Pcreate(H5P_FILE_ACCESS), label));
#if H5_VERSION_GE(1, 10, 2)
  DDPSCALE_H5_CHECK(H5Pset_libver_bounds(access.get(), H5F_LIBVER_V18, H5F_LIBVER_V18), label);
#else
  DDPSCALE_H5_CHECK(H5Pset_libver_bounds(access.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), label);
#endif
  return access;
}

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

// Makes the bytes durable before the rename publishes them: after a power cut the final
// name must point at a whole file or at nothing.
void sync_to_disk(const std::string& path, const std::string& label, bool is_directory) {
  const int fd = ::open(path.c_str(), is_directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) throw StoreError(label + ": cannot open " + path + " to sync it: " + std::strerror(errno));
  const int status = ::fsync(fd);
  const int saved_errno = errno;
  ::close(fd);
  if (status != 0) throw StoreError(label + ": cannot sync " + path + " to disk: " + std::strerror(saved_errno));
}

// A file being written carries this suffix until it is complete.
constexpr const char* kUnfinishedSuffix = ".tmp";

template <typename WriteBody>
void write_atomically(const std::string& final_path, const char* kind, WriteBody write_body) {
  silence_hdf5_errors();
  const std::string tmp = final_path + kUnfinishedSuffix;
  const H5Io io(final_path);
  try {
    H5PropertyList access = portable_file_access(final_path);
    H5File file(DDPSCALE_H5_CHECK(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()), final_path));
    io.put_string(file.get(), "schema", kStoreSchema);
    io.put_int(file.get(), "schema_version", kStoreSchemaVersion);
    io.put_string(file.get(), "kind", kind);
    write_body(io, file.get());
    io.put_int(file.get(), "complete", 1);
    DDPSCALE_H5_CHECK(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), final_path);
    DDPSCALE_H5_CHECK(file.close(), final_path);
    sync_to_disk(tmp, final_path, false);
    std::error_code ec;
    fs::rename(tmp, final_path, ec);
    if (ec) throw io.error("cannot move the finished file into place: " + ec.message());
  } catch (...) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw;
  }
  const fs::path parent = fs::path(final_path).parent_path();
  sync_to_disk(parent.empty() ? "." : parent.string(), final_path, true);
}

// ---------------------------------------------------------------------------------------
// Configuration parameters: attributes of group /params.

void write_params(const H5Io& io, hid_t file, const ConfigParams& p) {
  H5Group g = io.create_group(file, "params");
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
  io.put_string(g.get(), "allreduce_dtype", p.allreduce_dtype);
  io.put_string(g.get(), "nccl_profile", p.nccl_profile);
  io.put_int(g.get(), "warmup_steps", p.warmup_steps);
  io.put_int(g.get(), "measured_steps", p.measured_steps);
  io.put_int(g.get(), "runs", p.runs);
  io.put_uint(g.get(), "seed", p.seed);
  io.put_string(g.get(), "device", p.device);
  io.put_string(g.get(), "backend", p.backend);
  io.put_map(g.get(), "nccl_variables", p.nccl_variables);
}

ConfigParams read_params(const H5Io& io, hid_t file) {
  H5Group g = io.open_group(file, "params");
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
  // Optional in schema version 1: files from before --allreduce-dtype reduced in float32.
  p.allreduce_dtype = io.has_attribute(g.get(), "allreduce_dtype") ? io.get_string(g.get(), "allreduce_dtype") : "float32";
  p.nccl_profile = io.get_string(g.get(), "nccl_profile");
  p.warmup_steps = static_cast<int>(io.get_int(g.get(), "warmup_steps"));
  p.measured_steps = static_cast<int>(io.get_int(g.get(), "measured_steps"));
  p.runs = static_cast<int>(io.get_int(g.get(), "runs"));
  p.seed = io.get_uint(g.get(), "seed");
  p.device = io.get_string(g.get(), "device");
  p.backend = io.get_string(g.get(), "backend");
  p.nccl_variables = io.get_map(g.get(), "nccl_variables");
  return p;
}

// ---------------------------------------------------------------------------------------
// Runs: group /runs/run_NNNN each.

std::string run_group_name(int index) {
  char name[32];
  std::snprintf(name, sizeof(name), "run_%04d", index);
  return name;
}

std::vector<std::string> phase_names() {
  std::vector<std::string> names;
  for (int p = 0; p < kPhaseCount; ++p) names.emplace_back(phase_name(static_cast<Phase>(p)));
  return names;
}

constexpr float kMissing = std::numeric_limits<float>::quiet_NaN();

// A rank's measured step count; its phases must agree, a mismatch is a trainer bug that
// padding would hide.
size_t steps_of(const H5Io& io, const RunRecord& run, size_t rank) {
  const auto& phases = run.ranks[rank].phase_us;
  if (phases.size() != static_cast<size_t>(kPhaseCount))
    throw io.error("run " + std::to_string(run.index) + " rank " + std::to_string(rank) + " has " +
                   std::to_string(phases.size()) + " phases, expected " + std::to_string(kPhaseCount));
  for (const auto& series : phases)
    if (series.size() != phases[0].size())
      throw io.error("run " + std::to_string(run.index) + " rank " + std::to_string(rank) +
                     ": phases have different step counts");
  return phases[0].size();
}

// phase_us[rank][phase][step], padded with NaN where a rank of a failed run measured fewer
// steps; phase_steps[rank] says how many are real.
void write_phase_times(const H5Io& io, hid_t g, const RunRecord& run) {
  const size_t ranks = run.ranks.size();
  std::vector<int64_t> steps(ranks);
  for (size_t r = 0; r < ranks; ++r) steps[r] = static_cast<int64_t>(steps_of(io, run, r));
  const size_t longest = ranks ? static_cast<size_t>(*std::max_element(steps.begin(), steps.end())) : 0;
  std::vector<float> table(ranks * kPhaseCount * longest, kMissing);
  for (size_t r = 0; r < ranks; ++r)
    for (size_t p = 0; p < static_cast<size_t>(kPhaseCount); ++p) {
      const auto& series = run.ranks[r].phase_us[p];
      std::copy(series.begin(), series.end(), table.begin() + static_cast<long>((r * kPhaseCount + p) * longest));
    }
  H5Dataset set = io.put_floats(g, "phase_us", {ranks, static_cast<hsize_t>(kPhaseCount), longest}, table);
  io.put_string_list(set.get(), "phases", phase_names());
  io.put_string(set.get(), "units", "microseconds");
  io.put_ints(g, "phase_steps", steps);
}

void read_phase_times(const H5Io& io, hid_t g, const std::string& run_name, RunRecord& run) {
  std::vector<hsize_t> dims;
  const auto table = io.get_dataset<float>(g, "phase_us", H5T_NATIVE_FLOAT, dims);
  if (dims.size() != 3 || dims[1] != static_cast<hsize_t>(kPhaseCount))
    throw io.error(run_name + "/phase_us has shape other than [ranks][" + std::to_string(kPhaseCount) + "][steps]");
  {
    H5Dataset set = io.open_dataset(g, "phase_us");
    if (io.get_string_list(set.get(), "phases") != phase_names())
      throw io.error(run_name + "/phase_us names other phases than this ddpscale measures");
  }
  const size_t ranks = dims[0], longest = dims[2];
  const auto steps = io.get_ints(g, "phase_steps", static_cast<long>(ranks));
  run.ranks.resize(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    if (steps[r] < 0 || static_cast<size_t>(steps[r]) > longest)
      throw io.error(run_name + "/phase_steps[" + std::to_string(r) + "] is out of range");
    run.ranks[r].rank = static_cast<int>(r);
    for (size_t p = 0; p < static_cast<size_t>(kPhaseCount); ++p) {
      const auto begin = table.begin() + static_cast<long>((r * kPhaseCount + p) * longest);
      run.ranks[r].phase_us[p].assign(begin, begin + steps[r]);
    }
  }
}

// NVML series differ in length between ranks: [ranks][longest] padded with NaN, plus
// <name>_count[rank].
void write_rank_series(const H5Io& io, hid_t g, const std::string& name, const std::vector<RankTimings>& ranks,
                       std::vector<float> RankTimings::*series) {
  size_t longest = 0;
  for (const auto& r : ranks) longest = std::max(longest, (r.*series).size());
  std::vector<float> padded(ranks.size() * longest, kMissing);
  std::vector<int64_t> counts;
  for (size_t i = 0; i < ranks.size(); ++i) {
    std::copy((ranks[i].*series).begin(), (ranks[i].*series).end(), padded.begin() + static_cast<long>(i * longest));
    counts.push_back(static_cast<int64_t>((ranks[i].*series).size()));
  }
  io.put_floats(g, name, {ranks.size(), longest}, padded);
  io.put_ints(g, name + "_count", counts);
}

void read_rank_series(const H5Io& io, hid_t g, const std::string& name, std::vector<RankTimings>& ranks,
                      std::vector<float> RankTimings::*series) {
  std::vector<hsize_t> dims;
  const auto padded = io.get_dataset<float>(g, name, H5T_NATIVE_FLOAT, dims);
  if (dims.size() != 2 || dims[0] != ranks.size()) throw io.error("dataset '" + name + "' is not [ranks][samples]");
  const auto counts = io.get_ints(g, name + "_count", static_cast<long>(ranks.size()));
  const size_t longest = dims[1];
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (counts[i] < 0 || static_cast<size_t>(counts[i]) > longest)
      throw io.error("dataset '" + name + "_count' is out of range at rank " + std::to_string(i));
    const auto begin = padded.begin() + static_cast<long>(i * longest);
    (ranks[i].*series).assign(begin, begin + counts[i]);
  }
}

const char* status_text(RunStatus status) { return status == RunStatus::ok ? "ok" : "failed"; }

void write_run(const H5Io& io, hid_t runs, const RunRecord& run) {
  H5Group g = io.create_group(runs, run_group_name(run.index));
  io.put_int(g.get(), "index", run.index);
  io.put_uint(g.get(), "seed", run.seed);
  if (run.start_unix_ms > 0) io.put_int(g.get(), "start_unix_ms", run.start_unix_ms);
  io.put_string(g.get(), "status", status_text(run.status));
  io.put_string(g.get(), "failure", run.failure);
  io.put_double(g.get(), "samples_per_second", run.samples_per_second);
  io.put_floats(g.get(), "loss", {run.loss.size()}, run.loss);
  write_phase_times(io, g.get(), run);
  std::vector<double> wall;
  std::vector<int64_t> peak;
  for (const auto& rank : run.ranks) {
    wall.push_back(rank.wall_seconds);
    peak.push_back(rank.peak_memory_bytes);
  }
  io.put_doubles(g.get(), "wall_seconds", wall);
  io.put_ints(g.get(), "peak_memory_bytes", peak);
  write_rank_series(io, g.get(), "gpu_utilization_pct", run.ranks, &RankTimings::gpu_utilization_pct);
  write_rank_series(io, g.get(), "gpu_memory_used_mib", run.ranks, &RankTimings::gpu_memory_used_mib);
  write_rank_series(io, g.get(), "gpu_power_w", run.ranks, &RankTimings::gpu_power_w);
  write_rank_series(io, g.get(), "gpu_busy_us", run.ranks, &RankTimings::gpu_busy_us);
}

RunStatus parse_status(const H5Io& io, const std::string& run_name, const std::string& text) {
  if (text == "ok") return RunStatus::ok;
  if (text == "failed") return RunStatus::failed;
  throw io.error(run_name + ": status '" + text + "' is neither 'ok' nor 'failed'");
}

RunRecord read_run(const H5Io& io, hid_t runs, const std::string& name) {
  H5Group g = io.open_group(runs, name);
  RunRecord run;
  run.index = static_cast<int>(io.get_int(g.get(), "index"));
  run.seed = io.get_uint(g.get(), "seed");
  // Optional: files written before it existed lack it (schema version unchanged).
  if (io.has_attribute(g.get(), "start_unix_ms")) run.start_unix_ms = io.get_int(g.get(), "start_unix_ms");
  run.status = parse_status(io, name, io.get_string(g.get(), "status"));
  run.failure = io.get_string(g.get(), "failure");
  run.samples_per_second = io.get_double(g.get(), "samples_per_second");
  run.loss = io.get_floats(g.get(), "loss");
  read_phase_times(io, g.get(), name, run);
  const long ranks = static_cast<long>(run.ranks.size());
  const auto wall = io.get_doubles(g.get(), "wall_seconds", ranks);
  const auto peak = io.get_ints(g.get(), "peak_memory_bytes", ranks);
  for (size_t r = 0; r < run.ranks.size(); ++r) {
    run.ranks[r].wall_seconds = wall[r];
    run.ranks[r].peak_memory_bytes = peak[r];
  }
  read_rank_series(io, g.get(), "gpu_utilization_pct", run.ranks, &RankTimings::gpu_utilization_pct);
  read_rank_series(io, g.get(), "gpu_memory_used_mib", run.ranks, &RankTimings::gpu_memory_used_mib);
  read_rank_series(io, g.get(), "gpu_power_w", run.ranks, &RankTimings::gpu_power_w);
  // Optional in schema version 1: files written before --gpu-busy-steps existed lack it.
  if (io.has_link(g.get(), "gpu_busy_us"))
    read_rank_series(io, g.get(), "gpu_busy_us", run.ranks, &RankTimings::gpu_busy_us);
  return run;
}

// ---------------------------------------------------------------------------------------
// Study metadata: attributes of group /metadata; commbench: parallel datasets in /commbench.

void write_metadata(const H5Io& io, hid_t file, const StudyMetadata& m) {
  H5Group g = io.create_group(file, "metadata");
  io.put_string(g.get(), "tool_version", m.tool_version);
  io.put_string(g.get(), "git_commit", m.git_commit);
  io.put_string(g.get(), "command_line", m.command_line);
  io.put_string(g.get(), "spec_text", m.spec_text);
  io.put_string(g.get(), "created_utc", m.created_utc);
  io.put_string_list(g.get(), "hostnames", m.hostnames);
  io.put_string_list(g.get(), "gpu_names", m.gpu_names);
  io.put_string(g.get(), "gpu_driver", m.gpu_driver);
  io.put_string(g.get(), "cuda_version", m.cuda_version);
  io.put_string(g.get(), "nccl_version", m.nccl_version);
  io.put_string(g.get(), "mpi_version", m.mpi_version);
  io.put_string(g.get(), "torch_version", m.torch_version);
  io.put_string(g.get(), "hdf5_version", m.hdf5_version);
  io.put_string(g.get(), "link_topology", m.link_topology);
  io.put_map(g.get(), "nccl_variables", m.nccl_variables);
}

StudyMetadata read_metadata(const H5Io& io, hid_t file) {
  H5Group g = io.open_group(file, "metadata");
  StudyMetadata m;
  m.tool_version = io.get_string(g.get(), "tool_version");
  m.git_commit = io.get_string(g.get(), "git_commit");
  m.command_line = io.get_string(g.get(), "command_line");
  m.spec_text = io.get_string(g.get(), "spec_text");
  m.created_utc = io.get_string(g.get(), "created_utc");
  m.hostnames = io.get_string_list(g.get(), "hostnames");
  m.gpu_names = io.get_string_list(g.get(), "gpu_names");
  m.gpu_driver = io.get_string(g.get(), "gpu_driver");
  m.cuda_version = io.get_string(g.get(), "cuda_version");
  m.nccl_version = io.get_string(g.get(), "nccl_version");
  m.mpi_version = io.get_string(g.get(), "mpi_version");
  m.torch_version = io.get_string(g.get(), "torch_version");
  m.hdf5_version = io.get_string(g.get(), "hdf5_version");
  m.link_topology = io.get_string(g.get(), "link_topology");
  m.nccl_variables = io.get_map(g.get(), "nccl_variables");
  return m;
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

std::optional<CommBenchTable> read_commbench_group(const H5Io& io, hid_t file) {
  if (!io.has_link(file, "commbench")) return std::nullopt;
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

void write_config(const std::string& dir, const ConfigRecord& record) {
  const std::string path = (fs::path(dir) / (record.id + ".h5")).string();
  if (record.id.empty() || record.id.find('/') != std::string::npos)
    throw StoreError(path + ": configuration id '" + record.id + "' cannot be a file name");
  write_atomically(path, kConfigurationKind, [&](const H5Io& io, hid_t file) {
    io.put_string(file, "config_id", record.id);
    if (!record.git_commit.empty()) io.put_string(file, "git_commit", record.git_commit);
    if (!record.finished_utc.empty()) io.put_string(file, "finished_utc", record.finished_utc);
    write_params(io, file, record.params);
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
  record.params = read_params(io, file.get());
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

bool same_params(const ConfigParams& a, const ConfigParams& b) {
  return a.model == b.model && a.parameters == b.parameters && a.batch_per_rank == b.batch_per_rank &&
         a.global_batch == b.global_batch && a.world_size == b.world_size && a.scaling == b.scaling &&
         a.optimizer == b.optimizer && a.learning_rate == b.learning_rate && a.dtype == b.dtype &&
         a.bucket_mb == b.bucket_mb && a.overlap == b.overlap && a.exec == b.exec && a.nccl_profile == b.nccl_profile &&
         a.allreduce_dtype == b.allreduce_dtype &&
         a.warmup_steps == b.warmup_steps && a.measured_steps == b.measured_steps && a.runs == b.runs &&
         a.seed == b.seed && a.device == b.device && a.backend == b.backend;
}

bool config_file_matches(const std::string& path, const ConfigParams& params) {
  try {
    H5File file = open_store_file(path, kConfigurationKind);
    return same_params(read_params(H5Io(path), file.get()), params);
  } catch (const StoreError&) {
    return false;  // unreadable or foreign: not the same experiment, measure it again
  }
}

void write_study(const std::string& dir, const StudyMetadata& metadata, const CommBenchTable& commbench) {
  const std::string path = study_path(dir);
  check_columns_agree(path, commbench);
  write_atomically(path, kStudyKind, [&](const H5Io& io, hid_t file) {
    write_metadata(io, file, metadata);
    if (!is_empty(commbench)) write_commbench_group(io, file, commbench);
  });
}

StudyMetadata read_study_metadata(const std::string& dir) {
  const std::string path = study_path(dir);
  H5File file = open_store_file(path, kStudyKind);
  return read_metadata(H5Io(path), file.get());
}

std::optional<CommBenchTable> read_commbench(const std::string& dir) {
  const std::string path = study_path(dir);
  H5File file = open_store_file(path, kStudyKind);
  return read_commbench_group(H5Io(path), file.get());
}

void write_commbench(const std::string& dir, const CommBenchTable& commbench) {
  // Rewritten whole rather than edited in place, so the file is never half-updated.
  write_study(dir, read_study_metadata(dir), commbench);
}

StudyMetadata read_study(const std::string& dir, CommBenchTable* commbench) {
  const std::string path = study_path(dir);
  H5File file = open_store_file(path, kStudyKind);
  const H5Io io(path);
  StudyMetadata metadata = read_metadata(io, file.get());
  if (commbench) *commbench = read_commbench_group(io, file.get()).value_or(CommBenchTable{});
  return metadata;
}

}  // namespace ddpscale
