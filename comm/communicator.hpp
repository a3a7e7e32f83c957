// The one interface gradient traffic goes through. Two backends: MPI (CPU buffers, so
// every collective path runs and is tested on a machine without GPUs) and NCCL (GPU
// buffers, on a dedicated CUDA stream). Buffers are raw pointers so this library never
// needs LibTorch; the trainer passes tensor data pointers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ddpscale {

class MpiGroup;

enum class DType { f32, f64, f16, bf16, i32, i64 };
enum class ReduceOp { sum, average };
enum class Backend { mpi, nccl };

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);
const char* backend_name(Backend backend);

// An operation in flight. wait() makes its result visible to the caller: on the host for
// MPI; for NCCL the caller's compute stream is ordered after it without blocking the host.
class CommWork {
 public:
  virtual ~CommWork() = default;
  virtual void wait() = 0;
};

// Memory a communicator can reduce in: host memory for MPI, device memory for NCCL.
class CommBuffer {
 public:
  virtual ~CommBuffer() = default;
  virtual void* data() = 0;
  virtual size_t bytes() const = 0;
  virtual void fill_f32(float value) = 0;
  virtual float read_f32(size_t index) const = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual Backend backend() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // In place over `count` elements; average divides by size() after summing.
  virtual std::unique_ptr<CommWork> allreduce_async(void* buffer, size_t count, DType dtype, ReduceOp op) = 0;
  void allreduce(void* buffer, size_t count, DType dtype, ReduceOp op) { allreduce_async(buffer, count, dtype, op)->wait(); }
  // Blocks the host until every rank holds root's values (the parameters before training).
  virtual void broadcast(void* buffer, size_t count, DType dtype, int root) = 0;
  // Root's values into `buffer` on every rank, ordered as allreduce_async is: after the work
  // already on the caller's compute stream, and wait() orders that stream after it (NCCL:
  // the host never waits; MPI: it is done when this returns).
  virtual std::unique_ptr<CommWork> broadcast_async(void* buffer, size_t count, DType dtype, int root) = 0;
  // Host-side barrier that also drains this communicator's outstanding device work.
  virtual void barrier() = 0;
  // Blocks the host until every operation issued so far has finished (for benchmarks).
  virtual void synchronize() = 0;
  virtual std::unique_ptr<CommBuffer> allocate(size_t bytes) = 0;
};

// MPI backend over an existing group (the group must outlive the communicator).
std::unique_ptr<Communicator> make_mpi_communicator(const MpiGroup& group);

}  // namespace ddpscale
