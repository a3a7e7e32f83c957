#include "prediction/overlap_simulation.hpp"

#include <algorithm>
#include <cmath>

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

std::vector<SimulatedBucket> even_stream(const std::vector<double>& sizes) {
  double total = 0;
  for (double size : sizes) total += size;
  std::vector<SimulatedBucket> buckets;
  double produced = 0;
  for (double size : sizes) {
    produced += size;
    buckets.push_back({size, total > 0 ? produced / total : 1.0, {}});
  }
  return buckets;
}

namespace {

// The clock that ready times are fractions of: the recorded backward pass, or where it was
// not measured, the last gradient's arrival.
double recorded_backward_us(const GradientTiming& timing) {
  if (std::isfinite(timing.backward_us) && timing.backward_us > 0) return timing.backward_us;
  double last = 0;
  for (const ParameterGradient& p : timing.parameters)
    if (std::isfinite(p.ready_us)) last = std::max(last, p.ready_us);
  return last;
}

double ready_fraction(double ready_us, double backward_us) {
  if (!std::isfinite(ready_us) || !(backward_us > 0)) return 1.0;
  return std::clamp(ready_us / backward_us, 0.0, 1.0);
}

}  // namespace

std::vector<SimulatedBucket> recorded_buckets(const GradientTiming& timing, const BucketCaps& caps,
                                              double wire_element_bytes) {
  std::vector<size_t> parameter_bytes;
  for (const ParameterGradient& p : timing.parameters)
    parameter_bytes.push_back(static_cast<size_t>(p.elements * p.element_bytes));
  const double backward_us = recorded_backward_us(timing);
  std::vector<SimulatedBucket> buckets;
  double previous_ready = 0;
  for (const std::vector<size_t>& members : assign_buckets(parameter_bytes, caps)) {
    SimulatedBucket bucket;
    bucket.parameters = members;
    bucket.ready_fraction = previous_ready;  // not before the bucket ahead of it has launched
    for (size_t i : members) {
      const ParameterGradient& p = timing.parameters[i];
      const double element_bytes = wire_element_bytes > 0 ? wire_element_bytes : static_cast<double>(p.element_bytes);
      bucket.bytes += static_cast<double>(p.elements) * element_bytes;
      bucket.ready_fraction = std::max(bucket.ready_fraction, ready_fraction(p.ready_us, backward_us));
    }
    previous_ready = bucket.ready_fraction;
    buckets.push_back(std::move(bucket));
  }
  return buckets;
}

OverlapTimeline simulate_overlap(const std::vector<SimulatedBucket>& buckets, const std::vector<double>& allreduce_us,
                                 double backward_us, bool overlap) {
  OverlapTimeline timeline;
  double stream_free_at = 0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    const double ready = overlap ? backward_us * buckets[i].ready_fraction : backward_us;
    const double duration = allreduce_us[i];
    stream_free_at = std::max(stream_free_at, ready) + duration;  // one stream: in order
    timeline.allreduce_total_us += duration;
  }
  timeline.allreduce_exposed_us = buckets.empty() ? 0.0 : std::max(0.0, stream_free_at - backward_us);
  return timeline;
}

}  // namespace ddpscale
