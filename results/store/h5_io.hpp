// Typed HDF5 reads and writes over one file, and the atomic write that publishes a file
// only once it is whole. Apart from the run store's layout (run_store.cpp), which says
// what goes where; this says how a value travels. Every call is checked and every error
// names the file.
#pragma once
#include "results/store/hdf5_handles.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ddpscale {

// Attributes and datasets of one file; `path` makes every error name it. File types are
// fixed little-endian IEEE/two's complement so that a file written on one machine reads the
// same everywhere; memory types are native.
class H5Io {
 public:
  explicit H5Io(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

  StoreError error(const std::string& what) const { return StoreError(path_ + ": " + what); }

  // --- groups -----------------------------------------------------------------------------
  H5Group create_group(hid_t parent, const std::string& name) const;
  bool has_link(hid_t parent, const std::string& name) const;
  H5Group open_group(hid_t parent, const std::string& name) const;
  std::vector<std::string> member_names(hid_t group) const;

  // --- attributes -------------------------------------------------------------------------
  // Strings are fixed-length, null-terminated, UTF-8: h5py, h5dump and pandas read them
  // without needing variable-length support.
  void put_string(hid_t loc, const std::string& name, const std::string& value) const;
  void put_int(hid_t loc, const std::string& name, int64_t value) const;
  void put_uint(hid_t loc, const std::string& name, uint64_t value) const;
  void put_double(hid_t loc, const std::string& name, double value) const;
  // A 1-D array of strings, padded to the longest.
  void put_string_list(hid_t loc, const std::string& name, const std::vector<std::string>& values) const;
  // A string map as a group whose attributes are the entries.
  void put_map(hid_t parent, const std::string& name, const std::map<std::string, std::string>& values) const;

  bool has_attribute(hid_t loc, const std::string& name) const;
  // Reads a string attribute (scalar or 1-D) of any fixed-length string type, ASCII or UTF-8.
  std::vector<std::string> get_string_list(hid_t loc, const std::string& name) const;
  std::string get_string(hid_t loc, const std::string& name) const;
  int64_t get_int(hid_t loc, const std::string& name) const;
  uint64_t get_uint(hid_t loc, const std::string& name) const;
  double get_double(hid_t loc, const std::string& name) const;
  std::map<std::string, std::string> get_map(hid_t parent, const std::string& name) const;

  // --- one record field, stored as its C++ type says (the tables of config_fields.hpp):
  // bool as int64 0/1, int as int64 ---------------------------------------------------------
  void put_value(hid_t loc, const std::string& name, const std::string& value) const { put_string(loc, name, value); }
  void put_value(hid_t loc, const std::string& name, int64_t value) const { put_int(loc, name, value); }
  void put_value(hid_t loc, const std::string& name, int value) const { put_int(loc, name, value); }
  void put_value(hid_t loc, const std::string& name, bool value) const { put_int(loc, name, value ? 1 : 0); }
  void put_value(hid_t loc, const std::string& name, uint64_t value) const { put_uint(loc, name, value); }
  void put_value(hid_t loc, const std::string& name, double value) const { put_double(loc, name, value); }
  void put_value(hid_t loc, const std::string& name, const std::vector<std::string>& value) const {
    put_string_list(loc, name, value);
  }
  void put_value(hid_t loc, const std::string& name, const std::map<std::string, std::string>& value) const {
    put_map(loc, name, value);
  }
  void get_value(hid_t loc, const std::string& name, std::string& out) const { out = get_string(loc, name); }
  void get_value(hid_t loc, const std::string& name, int64_t& out) const { out = get_int(loc, name); }
  void get_value(hid_t loc, const std::string& name, int& out) const { out = static_cast<int>(get_int(loc, name)); }
  void get_value(hid_t loc, const std::string& name, bool& out) const { out = get_int(loc, name) != 0; }
  void get_value(hid_t loc, const std::string& name, uint64_t& out) const { out = get_uint(loc, name); }
  void get_value(hid_t loc, const std::string& name, double& out) const { out = get_double(loc, name); }
  void get_value(hid_t loc, const std::string& name, std::vector<std::string>& out) const {
    out = get_string_list(loc, name);
  }
  void get_value(hid_t loc, const std::string& name, std::map<std::string, std::string>& out) const {
    out = get_map(loc, name);
  }

  // --- datasets ---------------------------------------------------------------------------
  H5Dataset put_floats(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                       const std::vector<float>& values) const;
  void put_doubles(hid_t loc, const std::string& name, const std::vector<double>& values) const;
  void put_ints(hid_t loc, const std::string& name, const std::vector<int64_t>& values) const;

  H5Dataset open_dataset(hid_t loc, const std::string& name) const;
  // A whole float dataset; dims receives its shape.
  std::vector<float> get_float_table(hid_t loc, const std::string& name, std::vector<hsize_t>& dims) const;
  // 1-D datasets whose length the caller knows, or -1 for any.
  std::vector<float> get_floats(hid_t loc, const std::string& name, long expected_length = -1) const;
  std::vector<double> get_doubles(hid_t loc, const std::string& name, long expected_length = -1) const;
  std::vector<int64_t> get_ints(hid_t loc, const std::string& name, long expected_length = -1) const;

 private:
  H5Datatype string_type(size_t length) const;
  void put_attribute(hid_t loc, const std::string& name, hid_t file_type, hid_t memory_type, hid_t space,
                     const void* data) const;
  void put_scalar(hid_t loc, const std::string& name, hid_t file_type, hid_t memory_type, const void* data) const;
  H5Attribute open_attribute(hid_t loc, const std::string& name) const;
  template <typename T>
  T get_number(hid_t loc, const std::string& name, hid_t memory_type) const;
  H5Dataset put_dataset(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, hid_t file_type,
                        hid_t memory_type, const void* data) const;
  template <typename T>
  std::vector<T> get_dataset(hid_t loc, const std::string& name, hid_t memory_type, std::vector<hsize_t>& dims) const;
  template <typename T>
  std::vector<T> get_vector(hid_t loc, const std::string& name, hid_t memory_type, long expected_length) const;

  std::string path_;
};

// A file being written carries this suffix until it is complete.
constexpr const char* kUnfinishedSuffix = ".tmp";

// Writes final_path under final_path + kUnfinishedSuffix, flushes and syncs it, renames it
// into place and syncs the directory: after a power cut the final name points at a whole
// file or at nothing. The temporary is removed when write_body (or anything after it)
// throws.
void write_file_atomically(const std::string& final_path,
                           const std::function<void(const H5Io& io, hid_t file)>& write_body);

}  // namespace ddpscale
