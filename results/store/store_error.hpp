// The one error type of the run store: its message names the file and what is wrong.
#pragma once
#include <stdexcept>

namespace ddpscale {

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ddpscale
