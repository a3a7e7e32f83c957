// The gradient buckets' allreduces against the backward pass: what overlap hides and what
// is left after backward. The engine's reducer (trainer/engine/gradient_reducer.hpp) fills
// buckets in reverse registration order, a small first bucket then full ones, launches each
// as soon as it is complete, and runs them one after another on one communication stream.
#pragma once
#include <vector>

namespace ddpscale {

// Bucket sizes in the order they become ready, from the gradients' total size and the caps.
// Without the model's layer sizes (the study does not store them) the gradients are taken
// as one even stream: the first bucket holds first_cap bytes, every later one cap bytes, the
// last what is left.
std::vector<double> bucket_sizes(double gradient_bytes, double first_cap_bytes, double cap_bytes);

struct OverlapTimeline {
  double allreduce_total_us = 0;    // sum of the buckets' allreduce times
  double allreduce_exposed_us = 0;  // after backward ended, until the last allreduce ended
};

// backward_us: the backward pass; gradients are produced at an even rate over it, so a
// bucket is ready when backward has produced its last byte. With overlap off every
// allreduce starts after backward. allreduce_us[i]: bucket i's allreduce time.
OverlapTimeline simulate_overlap(const std::vector<double>& buckets, const std::vector<double>& allreduce_us,
                                 double backward_us, bool overlap);

}  // namespace ddpscale
