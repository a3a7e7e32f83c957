#include "prediction/gradient_buckets.hpp"

#include <algorithm>

namespace ddpscale {

std::vector<std::vector<size_t>> assign_buckets(const std::vector<size_t>& parameter_bytes, const BucketCaps& caps) {
  std::vector<std::vector<size_t>> buckets;
  const auto cap_bytes = [&](size_t bucket_index) {
    const double mb = bucket_index == 0 ? std::min(caps.first_bucket_mb, caps.bucket_mb) : caps.bucket_mb;
    return static_cast<size_t>(mb * 1024.0 * 1024.0);
  };
  size_t filled = 0;
  for (size_t i = parameter_bytes.size(); i-- > 0;) {
    if (buckets.empty() || (filled > 0 && filled + parameter_bytes[i] > cap_bytes(buckets.size() - 1))) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(i);
    filled += parameter_bytes[i];
  }
  return buckets;
}

}  // namespace ddpscale
