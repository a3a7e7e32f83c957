// Our DistributedDataParallel: LibTorch's C++ API has none. Built the way PyTorch's
// c10d Reducer works: gradients live in a few contiguous buckets (each parameter's .grad
// is a view into one, at the latest once its bucket is complete), autograd post-hooks on
// the gradient accumulators mark parameters ready, and a full bucket's allreduce starts at
// once on the communicator's own stream while backward continues. The step then waits for
// every bucket before the optimizer.
#pragma once
#include "comm/communicator.hpp"
#include "prediction/gradient_buckets.hpp"
#include "trainer/engine/gradient_ready_hooks.hpp"

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ddpscale {

class StepClock;

struct ReducerOptions {
  double bucket_mb = kDefaultBucketMb;             // cap of every bucket but the first
  double first_bucket_mb = kDefaultFirstBucketMb;  // results/store/run_record.hpp says why
  bool overlap = true;            // false: every allreduce runs after backward (sequential baseline)
  bool bfloat16_allreduce = false;  // buckets travel as bf16 copies (half the bytes), cast back after
  // true: every .grad is a view into its bucket for the reducer's whole life, zeroed before
  // each backward, so autograd accumulates into it (an add per parameter).
  // false: .grad is reset before each backward, autograd hands over its own gradient tensor
  // (no add), and a complete bucket gathers them in one copy; .grad then views the bucket.
  // One kernel per bucket instead of an add per parameter and a zero per bucket. The
  // training session uses false in eager and graph mode (inside a capture the handed-over
  // tensors come from the graph's pool, at the same addresses in every replay); true is kept
  // as the reference the tests compare the gathered gradients with.
  bool gradients_stay_in_buckets = true;
};

struct BucketLayout {
  std::vector<std::vector<size_t>> buckets;  // parameter indices per bucket, in launch order
};

// Assigns parameters (given their sizes in bytes, in registration order) to buckets in
// reverse registration order, since backward produces the last layers' gradients first.
// A parameter larger than a bucket gets a bucket of its own. prediction/gradient_buckets.hpp
// does the cutting, so the predictor places buckets exactly as this reducer does.
BucketLayout plan_buckets(const std::vector<size_t>& parameter_bytes, const ReducerOptions& options);

// The communicator's element type for a tensor's dtype; throws for one it cannot carry.
DType comm_dtype(const torch::Tensor& t);

class GradientReducer {
 public:
  // Names are for errors ("parameter 'fc3.bias' got no gradient"). The communicator and
  // clock must outlive the reducer; clock may be null (no phase timing).
  GradientReducer(std::vector<torch::Tensor> parameters, std::vector<std::string> names, Communicator& comm,
                  const ReducerOptions& options, StepClock* clock);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Makes every rank start from rank 0's parameters.
  void broadcast_parameters();
  // Before backward: zeroes the bucket buffers (and so every .grad), or resets every .grad
  // (gradients_stay_in_buckets false), and re-arms the hooks.
  void prepare_for_backward();
  // After backward: launches what overlap did not, waits for all buckets. Throws
  // std::runtime_error naming any parameter that got no gradient.
  void finish_backward();

  // Also tells `observer` each parameter as it becomes ready (the first time in a backward
  // pass, before its bucket may launch), from the reducer's own ready hooks: how the gradient
  // timer (engine/gradient_timer.hpp) listens. Empty: nobody.
  void set_ready_observer(std::function<void(size_t)> observer) { ready_observer_ = std::move(observer); }

  const BucketLayout& layout() const { return layout_; }
  size_t bucket_count() const { return buckets_.size(); }

 private:
  struct Bucket;
  void on_gradient_ready(size_t parameter);
  void launch_ready_buckets_in_order();
  void launch(size_t bucket);
  void gather_into_bucket(Bucket& bucket);
  // Makes every rank hold rank 0's values of these tensors (contiguous; float or integer).
  void broadcast(std::vector<torch::Tensor>& tensors);

  std::vector<torch::Tensor> parameters_;
  std::vector<std::string> names_;
  Communicator& comm_;
  ReducerOptions options_;
  StepClock* clock_;
  BucketLayout layout_;
  std::vector<std::unique_ptr<Bucket>> buckets_;
  std::vector<size_t> bucket_of_parameter_;
  std::vector<bool> ready_;
  std::function<void(size_t)> ready_observer_;
  std::unique_ptr<GradientReadyHooks> ready_hooks_;  // last: hooks fire only into a whole reducer
  size_t next_to_launch_ = 0;
  size_t launched_ = 0;
};

}  // namespace ddpscale
