#include "results/store/hdf5_handles.hpp"

#include <mutex>

namespace ddpscale {
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

}  // namespace ddpscale
