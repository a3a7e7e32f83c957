#include "overlap_simulation.hpp"

#include <algorithm>

namespace ddpscale {

std::vector<double> bucket_sizes(double gradient_bytes, double first_cap_bytes, double cap_bytes) {
  std::vector<double> sizes;
  double left = gradient_bytes;
  double cap = first_cap_bytes > 0 ? first_cap_bytes : cap_bytes;
  while (left > 0) {
    const double size = cap > 0 ? std::min(cap, left) : left;  // no cap: one bucket
    sizes.push_back(size);
    left -= size;
    cap = cap_bytes;
  }
  return sizes;
}

OverlapTimeline simulate_overlap(const std::vector<double>& buckets, const std::vector<double>& allreduce_us,
                                 double backward_us, bool overlap) {
  double total_bytes = 0;
  for (double b : buckets) total_bytes += b;
  OverlapTimeline timeline;
  double produced = 0, stream_free_at = 0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    produced += buckets[i];
    const double ready = overlap && total_bytes > 0 ? backward_us * produced / total_bytes : backward_us;
    const double duration = allreduce_us[i];
    stream_free_at = std::max(stream_free_at, ready) + duration;  // one stream: in order
    timeline.allreduce_total_us += duration;
  }
  timeline.allreduce_exposed_us = buckets.empty() ? 0.0 : std::max(0.0, stream_free_at - backward_us);
  return timeline;
}

}  // namespace ddpscale
