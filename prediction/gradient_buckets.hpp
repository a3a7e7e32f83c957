// How gradients are cut into allreduce buckets, shared by the engine's reducer
// (trainer/engine/gradient_reducer.hpp) and the predictor (prediction/overlap_simulation.hpp),
// so a prediction places a model's buckets exactly where training puts them.
#pragma once
#include <cstddef>
#include <vector>

#include "results/store/run_record.hpp"  // kDefaultFirstBucketMb, kDefaultBucketMb

namespace ddpscale {

struct BucketCaps {
  double first_bucket_mb = kDefaultFirstBucketMb;
  double bucket_mb = kDefaultBucketMb;  // cap of every bucket but the first
};

// Parameter indices per bucket, in launch order. Parameters are given by their sizes in
// bytes, in registration order, and assigned in reverse registration order, since backward
// produces the last layers' gradients first. A bucket is closed when the next parameter
// would take it past its cap; a parameter larger than a bucket gets a bucket of its own.
std::vector<std::vector<size_t>> assign_buckets(const std::vector<size_t>& parameter_bytes, const BucketCaps& caps);

}  // namespace ddpscale
