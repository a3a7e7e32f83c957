// RAII for HDF5 ids and one check macro. Errors become StoreError with the failing call,
// the file and HDF5's own message: its automatic printing to stderr is switched off so
// that a refused file gives one clear line instead of a page of error stack.
#pragma once
#include "results/store/store_error.hpp"

#include <hdf5.h>

#include <string>

namespace ddpscale {

// HDF5's error stack in one line: the API-level description, and the innermost one where
// it differs (that is where the reason lives: "truncated file", "errno = 20 ... Not a directory").
std::string hdf5_error_message();
// Switches off HDF5's printing of error stacks to stderr, once per process.
void silence_hdf5_errors();

// Owns one HDF5 id; Close is the closer of its kind. The kinds are distinct types so that a
// dataset can never be handed to H5Gclose.
template <herr_t (*Close)(hid_t)>
class H5Id {
 public:
  H5Id() = default;
  explicit H5Id(hid_t id) : id_(id) {}
  // A failed close while unwinding cannot be reported; close() is the checked path.
  ~H5Id() {
    if (valid()) Close(id_);
  }
  H5Id(H5Id&& other) noexcept : id_(other.release()) {}
  H5Id& operator=(H5Id&& other) noexcept {
    if (this != &other) {
      if (valid()) Close(id_);
      id_ = other.release();
    }
    return *this;
  }
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and returns HDF5's status: closing a file writes its metadata, and a write
  // that fails there must not pass unnoticed.
  herr_t close() {
    const herr_t status = valid() ? Close(id_) : 0;
    id_ = H5I_INVALID_HID;
    return status;
  }

 private:
  hid_t release() {
    const hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }
  hid_t id_ = H5I_INVALID_HID;
};

using H5File = H5Id<H5Fclose>;
using H5Group = H5Id<H5Gclose>;
using H5Dataset = H5Id<H5Dclose>;
using H5Dataspace = H5Id<H5Sclose>;
using H5Datatype = H5Id<H5Tclose>;
using H5Attribute = H5Id<H5Aclose>;
using H5PropertyList = H5Id<H5Pclose>;

// The body of DDPSCALE_H5_CHECK: HDF5 reports failure as a negative id or status.
template <typename Result>
Result h5_checked(Result result, const char* call, const std::string& path) {
  if (result < 0) {
    // Read the error stack before anything else can touch it.
    const std::string reason = hdf5_error_message();
    throw StoreError((path.empty() ? std::string() : path + ": ") + call + " failed: " + reason);
  }
  return result;
}

}  // namespace ddpscale

// Checks an HDF5 call returning an id or a status; throws StoreError naming the call and
// `path` (the file concerned, or "" where none is known).
#define DDPSCALE_H5_CHECK(call, path) ::ddpscale::h5_checked((call), #call, (path))
