#include "trainer/engine/gradient_timer.hpp"

#include "trainer/engine/gradient_reducer.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#ifdef DDPSCALE_CUDA
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include "comm/gpu_check.hpp"
#endif

namespace ddpscale {
namespace {

constexpr double kNotReady = std::numeric_limits<double>::quiet_NaN();

class HostGradientTimer final : public GradientReadyTimer {
 public:
  explicit HostGradientTimer(size_t parameters) : ready_us_(parameters, kNotReady) {}
  void backward_started() override { start_ = Clock::now(); }
  void gradient_ready(size_t parameter) override {
    if (std::isnan(ready_us_[parameter])) ready_us_[parameter] = since_start(Clock::now());
  }
  void backward_ended() override { backward_us_ = since_start(Clock::now()); }
  std::vector<double> ready_us() override { return ready_us_; }
  double backward_us() override { return backward_us_; }
  const char* clock_name() const override { return "host"; }

 private:
  using Clock = std::chrono::steady_clock;
  double since_start(Clock::time_point t) const { return std::chrono::duration<double, std::micro>(t - start_).count(); }
  Clock::time_point start_;
  std::vector<double> ready_us_;
  double backward_us_ = kNotReady;
};

#ifdef DDPSCALE_CUDA
// Events are created up front, so the hooks only enqueue a record (no allocation, no
// synchronisation inside backward), and read once backward's end event has completed.
class CudaGradientTimer final : public GradientReadyTimer {
 public:
  explicit CudaGradientTimer(size_t parameters) : ready_(parameters), recorded_(parameters, false) {
    for (cudaEvent_t* event : all_events()) DDPSCALE_CUDA_CHECK(cudaEventCreate(event));
  }
  ~CudaGradientTimer() override {
    for (cudaEvent_t* event : all_events()) cudaEventDestroy(*event);
  }
  void backward_started() override { record(start_); }
  void gradient_ready(size_t parameter) override {
    if (recorded_[parameter]) return;
    record(ready_[parameter]);
    recorded_[parameter] = true;
  }
  void backward_ended() override { record(end_); }
  std::vector<double> ready_us() override {
    DDPSCALE_CUDA_CHECK(cudaEventSynchronize(end_));
    std::vector<double> us(ready_.size(), kNotReady);
    for (size_t p = 0; p < ready_.size(); ++p)
      if (recorded_[p]) us[p] = since_start(ready_[p]);
    return us;
  }
  double backward_us() override {
    DDPSCALE_CUDA_CHECK(cudaEventSynchronize(end_));
    return since_start(end_);
  }
  const char* clock_name() const override { return "cuda_event"; }

 private:
  // The stream autograd runs the node on: the one its gradient's kernels were queued on.
  static void record(cudaEvent_t event) {
    DDPSCALE_CUDA_CHECK(cudaEventRecord(event, c10::cuda::getCurrentCUDAStream().stream()));
  }
  double since_start(cudaEvent_t event) const {
    float ms = 0;
    DDPSCALE_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, event));
    return static_cast<double>(ms) * 1000.0;
  }
  std::vector<cudaEvent_t*> all_events() {
    std::vector<cudaEvent_t*> events{&start_, &end_};
    for (cudaEvent_t& event : ready_) events.push_back(&event);
    return events;
  }
  cudaEvent_t start_ = nullptr, end_ = nullptr;
  std::vector<cudaEvent_t> ready_;
  std::vector<bool> recorded_;
};
#endif

}  // namespace

std::unique_ptr<GradientReadyTimer> make_gradient_ready_timer(const torch::Device& device, size_t parameters) {
#ifdef DDPSCALE_CUDA
  if (device.is_cuda()) return std::make_unique<CudaGradientTimer>(parameters);
#else
  (void)device;
#endif
  return std::make_unique<HostGradientTimer>(parameters);
}

GradientTimingScope::GradientTimingScope(GradientReadyTimer& timer, GradientReducer* reducer,
                                         const std::vector<torch::Tensor>& parameters)
    : reducer_(reducer) {
  auto on_ready = [&timer](size_t parameter) { timer.gradient_ready(parameter); };
  if (reducer_)
    reducer_->set_ready_observer(on_ready);
  else
    own_hooks_ = std::make_unique<GradientReadyHooks>(parameters, on_ready);
}

GradientTimingScope::~GradientTimingScope() {
  if (reducer_) reducer_->set_ready_observer(nullptr);
}

GradientTiming gradient_timing_record(torch::nn::Module& model, GradientReadyTimer& timer) {
  GradientTiming timing;
  timing.clock = timer.clock_name();
  timing.backward_us = timer.backward_us();
  const std::vector<double> ready = timer.ready_us();
  size_t index = 0;
  for (const auto& item : model.named_parameters()) {
    const torch::Tensor& p = item.value();
    if (!p.requires_grad()) continue;  // frozen: neither reduced nor timed
    const double ready_us = index < ready.size() ? ready[index] : kNotReady;
    timing.parameters.push_back({item.key(), p.numel(), static_cast<int64_t>(p.element_size()), ready_us});
    ++index;
  }
  return timing;
}

}  // namespace ddpscale
