// The message a call throws, for tests that assert on it.
#pragma once
#include <exception>
#include <functional>
#include <string>

namespace ddpscale::testing_errors {

// What `call` threw (std::exception::what), or "no error" where it returned.
inline std::string message_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace ddpscale::testing_errors
