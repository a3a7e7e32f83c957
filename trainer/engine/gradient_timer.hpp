// When each parameter's gradient became ready in one backward pass (docs/methodology.md,
// "Gradient timing"): what the predictor places buckets by. On CUDA a device-side timestamp:
// a CUDA event recorded on the current stream in the gradient accumulator's post hook, the
// point c10d's reducer effectively sees, since the accumulation's kernels are queued before
// it; on CPU the host's steady clock, exact there because the work is done when the hook runs.
#pragma once
#include "results/store/run_record.hpp"
#include "trainer/engine/gradient_ready_hooks.hpp"

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ddpscale {

class GradientReducer;

class GradientReadyTimer {
 public:
  virtual ~GradientReadyTimer() = default;
  virtual void backward_started() = 0;
  // The first call per parameter counts, as the reducer counts a parameter ready once.
  virtual void gradient_ready(size_t parameter) = 0;
  virtual void backward_ended() = 0;
  // After backward_ended (waits for the device where needed): microseconds from the start of
  // backward to each parameter's readiness (NaN: never ready), and to the end of backward.
  virtual std::vector<double> ready_us() = 0;
  virtual double backward_us() = 0;
  virtual const char* clock_name() const = 0;  // "cuda_event" or "host"
};

// CUDA events on a CUDA device (builds with DDPSCALE_CUDA), else the host clock.
std::unique_ptr<GradientReadyTimer> make_gradient_ready_timer(const torch::Device& device, size_t parameters);

// While it lives, `timer` hears of every gradient that becomes ready: through the reducer's
// own ready hooks, or, without a reducer (one rank), through hooks of the same kind set for
// this scope alone, so no second set of hooks runs beside the reducer's.
class GradientTimingScope {
 public:
  GradientTimingScope(GradientReadyTimer& timer, GradientReducer* reducer, const std::vector<torch::Tensor>& parameters);
  ~GradientTimingScope();
  GradientTimingScope(const GradientTimingScope&) = delete;
  GradientTimingScope& operator=(const GradientTimingScope&) = delete;

 private:
  GradientReducer* reducer_;
  std::unique_ptr<GradientReadyHooks> own_hooks_;
};

// The record of one timed backward: every trainable parameter of `model` (names, element
// counts and sizes, in registration order, as the reducer is given them) with its ready time.
GradientTiming gradient_timing_record(torch::nn::Module& model, GradientReadyTimer& timer);

}  // namespace ddpscale
