#include "comm/nccl_communicator.hpp"

#include "comm/comm_timeout.hpp"
#include "comm/gpu_check.hpp"
#include "comm/mpi_context.hpp"
#include "comm/nccl_profile.hpp"
#include "comm/stall_watchdog.hpp"

#include <dlfcn.h>

#include <chrono>
#include <thread>
#include <vector>

namespace ddpscale {
namespace {

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return ncclFloat32;
    case DType::f64: return ncclFloat64;
    case DType::f16: return ncclFloat16;
    case DType::bf16: return ncclBfloat16;
    case DType::i32: return ncclInt32;
    case DType::i64: return ncclInt64;
  }
  return ncclFloat32;
}

// Events are created once and recycled: creating one per bucket per step would cost
// microseconds on the path we are trying to measure.
class EventPool {
 public:
  ~EventPool() {
    for (cudaEvent_t e : free_) cudaEventDestroy(e);
  }
  cudaEvent_t take() {
    if (free_.empty()) {
      cudaEvent_t e;
      DDPSCALE_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      return e;
    }
    cudaEvent_t e = free_.back();
    free_.pop_back();
    return e;
  }
  void give(cudaEvent_t e) { free_.push_back(e); }

 private:
  std::vector<cudaEvent_t> free_;
};

class NcclWork final : public CommWork {
 public:
  NcclWork(EventPool& pool, cudaEvent_t done, cudaStream_t compute) : pool_(pool), done_(done), compute_(compute) {}
  ~NcclWork() override {
    if (!waited_) wait();
    pool_.give(done_);
  }
  void wait() override {
    if (waited_) return;
    DDPSCALE_CUDA_CHECK(cudaStreamWaitEvent(compute_, done_, 0));
    waited_ = true;
  }

 private:
  EventPool& pool_;
  cudaEvent_t done_;
  cudaStream_t compute_;
  bool waited_ = false;
};

class DeviceBuffer final : public CommBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) { DDPSCALE_CUDA_CHECK(cudaMalloc(&data_, bytes_ ? bytes_ : 1)); }
  ~DeviceBuffer() override { cudaFree(data_); }
  void* data() override { return data_; }
  size_t bytes() const override { return bytes_; }
  void fill_f32(float value) override {
    // Filled once per size outside the timed loop, so a host staging copy is fine.
    std::vector<float> host(bytes_ / sizeof(float), value);
    DDPSCALE_CUDA_CHECK(cudaMemcpy(data_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  float read_f32(size_t index) const override {
    float value = 0;
    DDPSCALE_CUDA_CHECK(cudaMemcpy(&value, static_cast<const float*>(data_) + index, sizeof(float), cudaMemcpyDeviceToHost));
    return value;
  }

 private:
  void* data_ = nullptr;
  size_t bytes_;
};

class NcclCommunicatorImpl final : public NcclCommunicator {
 public:
  NcclCommunicatorImpl(const MpiGroup& group, int device) : group_(group), device_(device) {
    enforce_no_nvls();
    DDPSCALE_CUDA_CHECK(cudaSetDevice(device_));
    ncclUniqueId id;
    if (group_.rank() == 0) DDPSCALE_NCCL_CHECK(ncclGetUniqueId(&id));
    group_.broadcast_within_comm_timeout(&id, sizeof(id), MPI_BYTE, 0, "MPI broadcast of the NCCL unique id");
    DDPSCALE_NCCL_CHECK(ncclCommInitRank(&comm_, group_.size(), id, group_.rank()));
    int least = 0, greatest = 0;
    DDPSCALE_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    // High priority, as PyTorch gives its NCCL streams: a bucket's allreduce should not
    // queue behind the backward kernels it is meant to overlap with.
    DDPSCALE_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest));
    DDPSCALE_CUDA_CHECK(cudaEventCreateWithFlags(&stall_marker_, cudaEventDisableTiming));
    watched_ = stream_;
    start_stall_watchdog();
  }

  ~NcclCommunicatorImpl() override {
    stall_watchdog_.reset();  // before the stream, event and communicator it watches
    if (stall_marker_) cudaEventDestroy(stall_marker_);
    if (stream_) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
    if (comm_) ncclCommDestroy(comm_);
  }

  Backend backend() const override { return Backend::nccl; }
  int rank() const override { return group_.rank(); }
  int size() const override { return group_.size(); }
  void set_compute_stream(void* cuda_stream) override { compute_ = static_cast<cudaStream_t>(cuda_stream); }
  void* stream() const override { return stream_; }
  void pause_stall_watchdog() override { stall_watchdog_.reset(); }
  void watch_stream(void* cuda_stream) override {
    stall_watchdog_.reset();
    watched_ = static_cast<cudaStream_t>(cuda_stream);
    start_stall_watchdog();
  }

  std::unique_ptr<CommWork> allreduce_async(void* buffer, size_t count, DType dtype, ReduceOp op) override {
    order_after_compute();
    DDPSCALE_NCCL_CHECK(ncclAllReduce(buffer, buffer, count, nccl_type(dtype), op == ReduceOp::sum ? ncclSum : ncclAvg,
                                      comm_, stream_));
    return work_done_on_stream();
  }

  std::unique_ptr<CommWork> broadcast_async(void* buffer, size_t count, DType dtype, int root) override {
    order_after_compute();
    DDPSCALE_NCCL_CHECK(ncclBroadcast(buffer, buffer, count, nccl_type(dtype), root, comm_, stream_));
    return work_done_on_stream();
  }

  void broadcast(void* buffer, size_t count, DType dtype, int root) override {
    DDPSCALE_CUDA_CHECK(cudaStreamSynchronize(compute_));
    DDPSCALE_NCCL_CHECK(ncclBroadcast(buffer, buffer, count, nccl_type(dtype), root, comm_, stream_));
    wait_stream_with_timeout("ncclBroadcast");
  }

  void barrier() override {
    synchronize();
    group_.barrier_within_comm_timeout("MPI barrier (NCCL communicator)");
  }

  void synchronize() override { wait_stream_with_timeout("NCCL stream synchronize"); }
  std::unique_ptr<CommBuffer> allocate(size_t bytes) override {
    DDPSCALE_CUDA_CHECK(cudaSetDevice(device_));
    return std::make_unique<DeviceBuffer>(bytes);
  }

 private:
  // The communicator's stream waits for what the compute stream has enqueued so far.
  void order_after_compute() {
    cudaEvent_t ready = events_.take();
    DDPSCALE_CUDA_CHECK(cudaEventRecord(ready, compute_));
    DDPSCALE_CUDA_CHECK(cudaStreamWaitEvent(stream_, ready, 0));
    events_.give(ready);  // safe: a recorded event may be re-recorded once waited on
  }

  std::unique_ptr<CommWork> work_done_on_stream() {
    cudaEvent_t done = events_.take();
    DDPSCALE_CUDA_CHECK(cudaEventRecord(done, stream_));
    return std::make_unique<NcclWork>(events_, done, compute_);
  }

  // A peer that stops inside a step's allreduce would otherwise hang this rank: the step
  // waits for it on the device (see stall_watchdog.hpp).
  void start_stall_watchdog() {
    StreamProbe probe;
    probe.place_marker = [this] {
      DDPSCALE_CUDA_CHECK(cudaSetDevice(device_));  // the watchdog's own thread
      DDPSCALE_CUDA_CHECK(cudaEventRecord(stall_marker_, watched_));
    };
    probe.marker_reached = [this] {
      const cudaError_t state = cudaEventQuery(stall_marker_);
      if (state != cudaErrorNotReady) DDPSCALE_CUDA_CHECK(state);
      return state == cudaSuccess;
    };
    probe.async_error = [this] { return async_error_text(); };
    stall_watchdog_ = std::make_unique<StallWatchdog>(
        std::move(probe), std::chrono::duration_cast<std::chrono::milliseconds>(comm_timeout()),
        std::chrono::milliseconds(100), [](const std::string& why) {
          fatal_error("NCCL collective (stall watchdog)", why, __FILE__, __LINE__);
        });
  }

  // "" while the communicator is healthy, else "NCCL async error: <what NCCL says>".
  std::string async_error_text() {
    ncclResult_t async_error = ncclSuccess;
    DDPSCALE_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async_error));
    if (async_error == ncclSuccess || async_error == ncclInProgress) return std::string();
    return std::string("NCCL async error: ") + ncclGetErrorString(async_error);
  }

  // The watchdog first: it must not query a communicator being aborted.
  [[noreturn]] void abort_communicator(const char* what, const std::string& why) {
    stall_watchdog_.reset();
    ncclCommAbort(comm_);
    comm_ = nullptr;
    fatal_error(what, why, __FILE__, __LINE__);
  }

  // Polls instead of cudaStreamSynchronize so a lost peer becomes an error naming the
  // cause (NCCL's async error, or the timeout) rather than a hang.
  void wait_stream_with_timeout(const char* what) {
    const auto deadline = std::chrono::steady_clock::now() + comm_timeout();
    for (;;) {
      const cudaError_t state = cudaStreamQuery(stream_);
      if (state == cudaSuccess) return;
      if (state != cudaErrorNotReady) DDPSCALE_CUDA_CHECK(state);
      const std::string async_error = async_error_text();
      if (!async_error.empty()) abort_communicator(what, async_error);
      if (std::chrono::steady_clock::now() > deadline)
        abort_communicator(what, "no completion within --comm-timeout (" + std::to_string(comm_timeout().count()) +
                                     " s): a peer rank is probably gone or stuck");
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  const MpiGroup& group_;
  int device_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaStream_t compute_ = nullptr;
  EventPool events_;
  cudaEvent_t stall_marker_ = nullptr;
  cudaStream_t watched_ = nullptr;  // the stream the stall watchdog watches: ours, or a graph's
  std::unique_ptr<StallWatchdog> stall_watchdog_;
};

}  // namespace

std::string NcclCommunicator::loaded_version() {
  int code = 0;
  ncclGetVersion(&code);
  const int major = code / 10000, minor = (code / 100) % 100, patch = code % 100;
  std::string text = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&ncclGetVersion), &info) && info.dli_fname)
    text += std::string(" (") + info.dli_fname + ")";
  return text;
}

std::unique_ptr<NcclCommunicator> make_nccl_communicator(const MpiGroup& group, int device) {
  return std::make_unique<NcclCommunicatorImpl>(group, device);
}

}  // namespace ddpscale
