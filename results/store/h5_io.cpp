#include "results/store/h5_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

herr_t collect_link_name(hid_t, const char* name, const H5L_info_t*, void* names) {
  static_cast<std::vector<std::string>*>(names)->emplace_back(name);
  return 0;
}

herr_t collect_attribute_name(hid_t, const char* name, const H5A_info_t*, void* names) {
  static_cast<std::vector<std::string>*>(names)->emplace_back(name);
  return 0;
}

size_t element_count(const std::vector<hsize_t>& dims) {
  size_t count = 1;
  for (hsize_t d : dims) count *= static_cast<size_t>(d);
  return count;
}

}  // namespace

// ---- groups ---------------------------------------------------------------------------

H5Group H5Io::create_group(hid_t parent, const std::string& name) const {
  return H5Group(DDPSCALE_H5_CHECK(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path_));
}

bool H5Io::has_link(hid_t parent, const std::string& name) const {
  return DDPSCALE_H5_CHECK(H5Lexists(parent, name.c_str(), H5P_DEFAULT), path_) > 0;
}

H5Group H5Io::open_group(hid_t parent, const std::string& name) const {
  if (!has_link(parent, name)) throw error("group '" + name + "' is missing");
  return H5Group(DDPSCALE_H5_CHECK(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), path_));
}

std::vector<std::string> H5Io::member_names(hid_t group) const {
  std::vector<std::string> names;
  DDPSCALE_H5_CHECK(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_link_name, &names), path_);
  return names;
}

// ---- attributes: writing ----------------------------------------------------------------

H5Datatype H5Io::string_type(size_t length) const {
  H5Datatype type(DDPSCALE_H5_CHECK(H5Tcopy(H5T_C_S1), path_));
  DDPSCALE_H5_CHECK(H5Tset_size(type.get(), std::max<size_t>(1, length + 1)), path_);
  DDPSCALE_H5_CHECK(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), path_);
  DDPSCALE_H5_CHECK(H5Tset_cset(type.get(), H5T_CSET_UTF8), path_);
  return type;
}

void H5Io::put_attribute(hid_t loc, const std::string& name, hid_t file_type, hid_t memory_type, hid_t space,
                         const void* data) const {
  H5Attribute attr(DDPSCALE_H5_CHECK(H5Acreate2(loc, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT), path_));
  DDPSCALE_H5_CHECK(H5Awrite(attr.get(), memory_type, data), path_);
}

void H5Io::put_scalar(hid_t loc, const std::string& name, hid_t file_type, hid_t memory_type, const void* data) const {
  H5Dataspace scalar(DDPSCALE_H5_CHECK(H5Screate(H5S_SCALAR), path_));
  put_attribute(loc, name, file_type, memory_type, scalar.get(), data);
}

void H5Io::put_string(hid_t loc, const std::string& name, const std::string& value) const {
  H5Datatype type = string_type(value.size());
  put_scalar(loc, name, type.get(), type.get(), value.c_str());
}

void H5Io::put_int(hid_t loc, const std::string& name, int64_t value) const {
  put_scalar(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

void H5Io::put_uint(hid_t loc, const std::string& name, uint64_t value) const {
  put_scalar(loc, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &value);
}

void H5Io::put_double(hid_t loc, const std::string& name, double value) const {
  put_scalar(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

void H5Io::put_string_list(hid_t loc, const std::string& name, const std::vector<std::string>& values) const {
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

void H5Io::put_map(hid_t parent, const std::string& name, const std::map<std::string, std::string>& values) const {
  H5Group group = create_group(parent, name);
  for (const auto& [key, value] : values) put_string(group.get(), key, value);
}

// ---- attributes: reading ----------------------------------------------------------------

H5Attribute H5Io::open_attribute(hid_t loc, const std::string& name) const {
  if (DDPSCALE_H5_CHECK(H5Aexists(loc, name.c_str()), path_) <= 0) throw error("attribute '" + name + "' is missing");
  return H5Attribute(DDPSCALE_H5_CHECK(H5Aopen(loc, name.c_str(), H5P_DEFAULT), path_));
}

bool H5Io::has_attribute(hid_t loc, const std::string& name) const {
  return DDPSCALE_H5_CHECK(H5Aexists(loc, name.c_str()), path_) > 0;
}

std::vector<std::string> H5Io::get_string_list(hid_t loc, const std::string& name) const {
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

std::string H5Io::get_string(hid_t loc, const std::string& name) const {
  const auto values = get_string_list(loc, name);
  if (values.size() != 1) throw error("attribute '" + name + "' holds " + std::to_string(values.size()) + " strings, not one");
  return values.front();
}

template <typename T>
T H5Io::get_number(hid_t loc, const std::string& name, hid_t memory_type) const {
  H5Attribute attr = open_attribute(loc, name);
  H5Dataspace space(DDPSCALE_H5_CHECK(H5Aget_space(attr.get()), path_));
  if (DDPSCALE_H5_CHECK(H5Sget_simple_extent_npoints(space.get()), path_) != 1)
    throw error("attribute '" + name + "' is not a single number");
  T value{};
  DDPSCALE_H5_CHECK(H5Aread(attr.get(), memory_type, &value), path_);
  return value;
}

int64_t H5Io::get_int(hid_t loc, const std::string& name) const { return get_number<int64_t>(loc, name, H5T_NATIVE_INT64); }

uint64_t H5Io::get_uint(hid_t loc, const std::string& name) const {
  return get_number<uint64_t>(loc, name, H5T_NATIVE_UINT64);
}

double H5Io::get_double(hid_t loc, const std::string& name) const {
  return get_number<double>(loc, name, H5T_NATIVE_DOUBLE);
}

std::map<std::string, std::string> H5Io::get_map(hid_t parent, const std::string& name) const {
  H5Group group = open_group(parent, name);
  std::vector<std::string> keys;
  hsize_t position = 0;
  DDPSCALE_H5_CHECK(H5Aiterate2(group.get(), H5_INDEX_NAME, H5_ITER_INC, &position, collect_attribute_name, &keys),
                    path_);
  std::map<std::string, std::string> values;
  for (const auto& key : keys) values[key] = get_string(group.get(), key);
  return values;
}

// ---- datasets -----------------------------------------------------------------------------

H5Dataset H5Io::put_dataset(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, hid_t file_type,
                            hid_t memory_type, const void* data) const {
  H5Dataspace space(DDPSCALE_H5_CHECK(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), path_));
  H5Dataset set(DDPSCALE_H5_CHECK(
      H5Dcreate2(loc, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path_));
  if (element_count(dims) > 0)
    DDPSCALE_H5_CHECK(H5Dwrite(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), path_);
  return set;
}

H5Dataset H5Io::put_floats(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                           const std::vector<float>& values) const {
  return put_dataset(loc, name, dims, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, values.data());
}

void H5Io::put_doubles(hid_t loc, const std::string& name, const std::vector<double>& values) const {
  put_dataset(loc, name, {values.size()}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data());
}

void H5Io::put_ints(hid_t loc, const std::string& name, const std::vector<int64_t>& values) const {
  put_dataset(loc, name, {values.size()}, H5T_STD_I64LE, H5T_NATIVE_INT64, values.data());
}

H5Dataset H5Io::open_dataset(hid_t loc, const std::string& name) const {
  if (!has_link(loc, name)) throw error("dataset '" + name + "' is missing");
  return H5Dataset(DDPSCALE_H5_CHECK(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), path_));
}

// A whole dataset, converted to memory_type; dims receives its shape.
template <typename T>
std::vector<T> H5Io::get_dataset(hid_t loc, const std::string& name, hid_t memory_type,
                                 std::vector<hsize_t>& dims) const {
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

template <typename T>
std::vector<T> H5Io::get_vector(hid_t loc, const std::string& name, hid_t memory_type, long expected_length) const {
  std::vector<hsize_t> dims;
  auto values = get_dataset<T>(loc, name, memory_type, dims);
  if (dims.size() != 1) throw error("dataset '" + name + "' is not one-dimensional");
  if (expected_length >= 0 && values.size() != static_cast<size_t>(expected_length))
    throw error("dataset '" + name + "' has " + std::to_string(values.size()) + " entries, expected " +
                std::to_string(expected_length));
  return values;
}

std::vector<float> H5Io::get_float_table(hid_t loc, const std::string& name, std::vector<hsize_t>& dims) const {
  return get_dataset<float>(loc, name, H5T_NATIVE_FLOAT, dims);
}

std::vector<float> H5Io::get_floats(hid_t loc, const std::string& name, long expected_length) const {
  return get_vector<float>(loc, name, H5T_NATIVE_FLOAT, expected_length);
}

std::vector<double> H5Io::get_doubles(hid_t loc, const std::string& name, long expected_length) const {
  return get_vector<double>(loc, name, H5T_NATIVE_DOUBLE, expected_length);
}

std::vector<int64_t> H5Io::get_ints(hid_t loc, const std::string& name, long expected_length) const {
  return get_vector<int64_t>(loc, name, H5T_NATIVE_INT64, expected_length);
}

// ---- writing a whole file -------------------------------------------------------------------

namespace {

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

}  // namespace

void write_file_atomically(const std::string& final_path,
                           const std::function<void(const H5Io& io, hid_t file)>& write_body) {
  silence_hdf5_errors();
  const std::string tmp = final_path + kUnfinishedSuffix;
  const H5Io io(final_path);
  try {
    H5PropertyList access = portable_file_access(final_path);
    H5File file(DDPSCALE_H5_CHECK(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()), final_path));
    write_body(io, file.get());
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

}  // namespace ddpscale
