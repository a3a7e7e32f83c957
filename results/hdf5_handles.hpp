// RAII for HDF5 ids and one check macro. Errors become StoreError with the failing call,
// the file and HDF5's own message (its automatic stderr printing is switched off).
#pragma once
#include <hdf5.h>

#include <string>

#include "store_error.hpp"

namespace ddpscale {

// The innermost message of the HDF5 error stack (e.g. "unable to open file").
std::string hdf5_error_message();
// Switches off HDF5's printing of error stacks to stderr, once per process.
void silence_hdf5_errors();

// Owns one HDF5 id; the closer matches its kind (H5Fclose, H5Gclose, ...).
class H5Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  H5Handle() = default;
  H5Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~H5Handle() { reset(); }
  H5Handle(H5Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = H5I_INVALID_HID; }
  H5Handle& operator=(H5Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.id_;
      closer_ = other.closer_;
      other.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  hid_t get() const { return id_; }
  void reset() {
    if (id_ >= 0 && closer_) closer_(id_);
    id_ = H5I_INVALID_HID;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

}  // namespace ddpscale

// For calls returning an id (< 0 on failure) or a status (< 0 on failure).
#define DDPSCALE_H5_CHECK(call, path)                                                                  \
  [&]() {                                                                                              \
    auto ddpscale_h5_result_ = (call);                                                                 \
    if (ddpscale_h5_result_ < 0)                                                                       \
      throw ::ddpscale::StoreError(std::string(path) + ": " + #call + " failed: " + ::ddpscale::hdf5_error_message()); \
    return ddpscale_h5_result_;                                                                        \
  }()
