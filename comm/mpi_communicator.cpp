// The CPU backend: MPI_Iallreduce in place. OpenMPI progresses non-blocking collectives
// only inside MPI calls, so on CPU "overlap" mostly means ordering, not hidden time;
// that is a property of the backend, and the trainer's timings show it as it is.
#include "comm/check.hpp"
#include "comm/comm_timeout.hpp"
#include "comm/communicator.hpp"
#include "comm/half_precision.hpp"
#include "comm/mpi_context.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

namespace ddpscale {
namespace {

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void sum_16bit(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = FromFloat(ToFloat(a[i]) + ToFloat(b[i]));
}

MPI_Op op_for_16bit(DType dtype) {
  static MPI_Op bf16_sum = MPI_OP_NULL, f16_sum = MPI_OP_NULL;
  static std::once_flag once;
  std::call_once(once, [] {
    DDPSCALE_MPI_CHECK(MPI_Op_create(&sum_16bit<bf16_to_float, float_to_bf16>, 1, &bf16_sum));
    DDPSCALE_MPI_CHECK(MPI_Op_create(&sum_16bit<f16_to_float, float_to_f16>, 1, &f16_sum));
  });
  return dtype == DType::bf16 ? bf16_sum : f16_sum;
}

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::i32: return MPI_INT32_T;
    case DType::i64: return MPI_INT64_T;
    case DType::f16:
    case DType::bf16: return MPI_UINT16_T;
  }
  return MPI_DATATYPE_NULL;
}

template <typename T>
void divide_in_place(void* buffer, size_t count, int divisor) {
  auto* values = static_cast<T*>(buffer);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<T>(values[i] / divisor);
}

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void divide_16bit(void* buffer, size_t count, int divisor) {
  auto* values = static_cast<uint16_t*>(buffer);
  for (size_t i = 0; i < count; ++i) values[i] = FromFloat(ToFloat(values[i]) / static_cast<float>(divisor));
}

void divide(void* buffer, size_t count, DType dtype, int divisor) {
  switch (dtype) {
    case DType::f32: return divide_in_place<float>(buffer, count, divisor);
    case DType::f64: return divide_in_place<double>(buffer, count, divisor);
    case DType::i32: return divide_in_place<int32_t>(buffer, count, divisor);
    case DType::i64: return divide_in_place<int64_t>(buffer, count, divisor);
    case DType::bf16: return divide_16bit<bf16_to_float, float_to_bf16>(buffer, count, divisor);
    case DType::f16: return divide_16bit<f16_to_float, float_to_f16>(buffer, count, divisor);
  }
}

// MPI counts are int: larger buffers go in chunks, each its own request.
constexpr size_t kMaxChunk = 1u << 30;

class MpiWork final : public CommWork {
 public:
  MpiWork(std::vector<MPI_Request> requests, void* buffer, size_t count, DType dtype, int divide_by, MPI_Comm comm)
      : requests_(std::move(requests)), buffer_(buffer), count_(count), dtype_(dtype), divide_by_(divide_by), comm_(comm) {}

  ~MpiWork() override {
    if (!done_) wait();
  }

  void wait() override {
    if (done_) return;
    wait_with_timeout();
    if (divide_by_ > 1) divide(buffer_, count_, dtype_, divide_by_);
    done_ = true;
  }

 private:
  void wait_with_timeout() {
    // MPI_Wait would block forever if a peer died without the launcher noticing.
    const auto deadline = std::chrono::steady_clock::now() + comm_timeout();
    int spins = 0;
    for (;;) {
      int all_done = 0;
      DDPSCALE_MPI_CHECK(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &all_done,
                                     MPI_STATUSES_IGNORE));
      if (all_done) return;
      if (++spins % 1024 == 0) {
        if (std::chrono::steady_clock::now() > deadline)
          fatal_error("MPI allreduce", "no completion within --comm-timeout (" +
                                           std::to_string(comm_timeout().count()) + " s): lost contact with " +
                                           peers_text() + ", gone or stuck; the job is aborted",
                      __FILE__, __LINE__);
        std::this_thread::yield();
      }
    }
  }

  // "rank 1" (the peer of a 2-rank group) or "one of ranks 1, 2, 3": MPI cannot say which
  // peer holds a collective up, but with two ranks there is only one. World ranks, as
  // mpirun numbers them.
  std::string peers_text() const {
    // Unchecked on purpose: this only words the fatal message; any failure says "a peer rank".
    MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    int size = 0, me = 0;
    std::vector<int> world_ranks;
    if (MPI_Comm_group(comm_, &group) == MPI_SUCCESS && MPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS &&
        MPI_Comm_size(comm_, &size) == MPI_SUCCESS && MPI_Comm_rank(comm_, &me) == MPI_SUCCESS) {
      std::vector<int> ranks(static_cast<size_t>(size));
      for (int r = 0; r < size; ++r) ranks[static_cast<size_t>(r)] = r;
      world_ranks.resize(static_cast<size_t>(size));
      if (MPI_Group_translate_ranks(group, size, ranks.data(), world, world_ranks.data()) != MPI_SUCCESS)
        world_ranks.clear();
    }
    if (group != MPI_GROUP_NULL) MPI_Group_free(&group);
    if (world != MPI_GROUP_NULL) MPI_Group_free(&world);
    if (world_ranks.empty()) return "a peer rank";
    std::string text;
    for (int r = 0; r < size; ++r) {
      if (r == me) continue;
      text += (text.empty() ? "" : ", ") + std::to_string(world_ranks[static_cast<size_t>(r)]);
    }
    return size == 2 ? "rank " + text : "one of ranks " + text;
  }

  std::vector<MPI_Request> requests_;
  void* buffer_;
  size_t count_;
  DType dtype_;
  int divide_by_;
  MPI_Comm comm_;
  bool done_ = false;
};

class FinishedWork final : public CommWork {
 public:
  void wait() override {}
};

class HostBuffer final : public CommBuffer {
 public:
  explicit HostBuffer(size_t bytes) : storage_((bytes + sizeof(float) - 1) / sizeof(float)), bytes_(bytes) {}
  void* data() override { return storage_.data(); }
  size_t bytes() const override { return bytes_; }
  void fill_f32(float value) override { std::fill(storage_.begin(), storage_.end(), value); }
  float read_f32(size_t index) const override { return storage_.at(index); }

 private:
  std::vector<float> storage_;
  size_t bytes_;
};

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(const MpiGroup& group) : group_(group) {}

  Backend backend() const override { return Backend::mpi; }
  int rank() const override { return group_.rank(); }
  int size() const override { return group_.size(); }

  std::unique_ptr<CommWork> allreduce_async(void* buffer, size_t count, DType dtype, ReduceOp op) override {
    const bool is_16bit = dtype == DType::f16 || dtype == DType::bf16;
    const MPI_Op mpi_op = is_16bit ? op_for_16bit(dtype) : MPI_SUM;
    std::vector<MPI_Request> requests;
    auto* bytes = static_cast<char*>(buffer);
    for (size_t offset = 0; offset < count; offset += kMaxChunk) {
      const size_t chunk = std::min(kMaxChunk, count - offset);
      MPI_Request request;
      DDPSCALE_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, bytes + offset * dtype_size(dtype), static_cast<int>(chunk),
                                        mpi_type(dtype), mpi_op, group_.handle(), &request));
      requests.push_back(request);
    }
    const int divide_by = op == ReduceOp::average ? size() : 1;
    return std::make_unique<MpiWork>(std::move(requests), buffer, count, dtype, divide_by, group_.handle());
  }

  void broadcast(void* buffer, size_t count, DType dtype, int root) override {
    auto* bytes = static_cast<char*>(buffer);
    for (size_t offset = 0; offset < count; offset += kMaxChunk) {
      const size_t chunk = std::min(kMaxChunk, count - offset);
      // The ranks train together: one that does not take part within --comm-timeout is lost.
      group_.broadcast_within_comm_timeout(bytes + offset * dtype_size(dtype), static_cast<int>(chunk),
                                           mpi_type(dtype), root, "MPI broadcast");
    }
  }

  // MPI broadcasts on the host: the values are in place when this returns.
  std::unique_ptr<CommWork> broadcast_async(void* buffer, size_t count, DType dtype, int root) override {
    broadcast(buffer, count, dtype, root);
    return std::make_unique<FinishedWork>();
  }

  void barrier() override { group_.barrier_within_comm_timeout("MPI barrier"); }
  void synchronize() override {}
  std::unique_ptr<CommBuffer> allocate(size_t bytes) override { return std::make_unique<HostBuffer>(bytes); }

 private:
  const MpiGroup& group_;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(const MpiGroup& group) {
  return std::make_unique<MpiCommunicator>(group);
}

}  // namespace ddpscale
