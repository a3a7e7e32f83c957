// CUDA-event step clock: events are created before the measured loop, recorded inside it
// (an asynchronous enqueue, no synchronisation) and read after it.
#include "comm/gpu_check.hpp"
#include "trainer/engine/step_clock.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <limits>
#include <vector>

namespace ddpscale {
namespace {

class CudaEvent {
 public:
  CudaEvent() { DDPSCALE_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~CudaEvent() { cudaEventDestroy(event_); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

class CudaStepClock final : public StepClock {
 public:
  CudaStepClock(int steps, cudaStream_t compute, cudaStream_t comm)
      : compute_(compute), comm_(comm), marks_(static_cast<size_t>(steps) * kMarkCount),
        recorded_(static_cast<size_t>(steps) * kMarkCount, false), comm_marks_(static_cast<size_t>(steps) * 2),
        has_comm_(static_cast<size_t>(steps), false) {}

  void select_step(int step) override { step_ = step; }

  void mark(Mark mark) override {
    if (step_ < 0) return;
    const size_t i = static_cast<size_t>(step_) * kMarkCount + static_cast<size_t>(mark);
    DDPSCALE_CUDA_CHECK(cudaEventRecord(marks_[i].get(), compute_));
    recorded_[i] = true;
  }

  void mark_comm_start() override {
    if (step_ < 0 || comm_ == nullptr) return;
    // The communicator orders the allreduce after the compute stream; the start mark
    // must wait for the same point, or it would count the comm stream's idle time.
    DDPSCALE_CUDA_CHECK(cudaEventRecord(ordering_.get(), compute_));
    DDPSCALE_CUDA_CHECK(cudaStreamWaitEvent(comm_, ordering_.get(), 0));
    DDPSCALE_CUDA_CHECK(cudaEventRecord(comm_marks_[static_cast<size_t>(step_) * 2].get(), comm_));
    has_comm_[static_cast<size_t>(step_)] = true;
  }

  void mark_comm_end() override {
    if (step_ < 0 || comm_ == nullptr) return;
    DDPSCALE_CUDA_CHECK(cudaEventRecord(comm_marks_[static_cast<size_t>(step_) * 2 + 1].get(), comm_));
  }

  void read(int steps, RankTimings& timings) override {
    DDPSCALE_CUDA_CHECK(cudaDeviceSynchronize());
    for (auto& series : timings.phase_us) series.assign(static_cast<size_t>(steps), 0.0f);
    const cudaEvent_t origin = marks_[0].get();  // the first step's start is always recorded
    double previous_step_end = std::numeric_limits<double>::quiet_NaN();
    for (int s = 0; s < steps; ++s) {
      const size_t i = static_cast<size_t>(s);
      double marks_us[kMarkCount];
      for (int m = 0; m < kMarkCount; ++m) {
        const size_t k = i * kMarkCount + static_cast<size_t>(m);
        marks_us[m] = recorded_[k] ? since(origin, marks_[k].get()) : std::numeric_limits<double>::quiet_NaN();
      }
      const double start = has_comm_[i] ? since(origin, comm_marks_[i * 2].get()) : 0.0;
      const double end = has_comm_[i] ? since(origin, comm_marks_[i * 2 + 1].get()) : 0.0;
      store_step_phases(marks_us, previous_step_end, start, end, has_comm_[i], i, timings);
    }
  }

 private:
  static double since(cudaEvent_t origin, cudaEvent_t event) {
    float ms = 0;
    DDPSCALE_CUDA_CHECK(cudaEventElapsedTime(&ms, origin, event));
    return static_cast<double>(ms) * 1000.0;
  }

  cudaStream_t compute_;
  cudaStream_t comm_;
  int step_ = -1;
  std::vector<CudaEvent> marks_;
  std::vector<bool> recorded_;
  std::vector<CudaEvent> comm_marks_;
  std::vector<bool> has_comm_;
  CudaEvent ordering_;
};

}  // namespace

std::unique_ptr<StepClock> make_cuda_step_clock(int steps, void* compute_stream, void* comm_stream) {
  return std::make_unique<CudaStepClock>(steps, static_cast<cudaStream_t>(compute_stream),
                                         static_cast<cudaStream_t>(comm_stream));
}

}  // namespace ddpscale
