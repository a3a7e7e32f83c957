// The gradient buckets' allreduces against the backward pass: what overlap hides and what
// is left after backward. The engine's reducer (trainer/engine/gradient_reducer.hpp) fills
// buckets in reverse registration order, a small first bucket then full ones, launches each
// once its last gradient is ready and every bucket before it has gone out, and runs them one
// after another on one communication stream.
#pragma once
#include "prediction/gradient_buckets.hpp"
#include "results/store/run_record.hpp"

#include <cstddef>
#include <vector>

namespace ddpscale {

// One bucket as the simulation sees it.
struct SimulatedBucket {
  double bytes = 0;  // what its allreduce sends
  // When the reducer may launch it, as a fraction of the backward pass (1: when backward ends).
  double ready_fraction = 1;
  // Placed from recorded gradient timing: its parameters' registration indices, in the order
  // the reducer adds them. Empty for the even stream, which knows no parameters.
  std::vector<size_t> parameters;
};

// Bucket sizes in launch order, from the gradients' total size and the caps, for a study
// without the model's layer sizes: the first bucket holds first_cap bytes, every later one
// cap bytes, the last what is left.
std::vector<double> bucket_sizes(double gradient_bytes, double first_cap_bytes, double cap_bytes);

// Those buckets filled by one even stream of gradients produced at a constant rate over
// backward: a bucket is ready when backward has produced its last byte, the last one exactly
// when backward ends.
std::vector<SimulatedBucket> even_stream(const std::vector<double>& sizes);

// The buckets of a model whose gradient timing was recorded, placed exactly as the reducer
// places them (assign_buckets on each parameter's bytes). Each sends its parameters'
// elements x wire_element_bytes (2 for a bfloat16 allreduce; 0: each parameter's own
// element size). Each is ready when the last of its gradients was, or when the bucket before
// it was, if that is later (buckets go out in index order); a gradient that never arrived
// counts as ready when backward ends. Fractions are of the recorded backward pass.
std::vector<SimulatedBucket> recorded_buckets(const GradientTiming& timing, const BucketCaps& caps,
                                              double wire_element_bytes);

struct OverlapTimeline {
  double allreduce_total_us = 0;    // sum of the buckets' allreduce times
  double allreduce_exposed_us = 0;  // after backward ended, until the last allreduce ended
};

// backward_us: the backward pass; bucket i may start at its ready fraction of it and once
// bucket i-1 has ended (one stream), and takes allreduce_us[i]. With overlap off every
// allreduce starts after backward.
OverlapTimeline simulate_overlap(const std::vector<SimulatedBucket>& buckets, const std::vector<double>& allreduce_us,
                                 double backward_us, bool overlap);

}  // namespace ddpscale
