// The GPU backend: one NCCL communicator per group, bootstrapped over MPI, with its own
// CUDA stream so gradient allreduces run beside the compute stream (the overlap DDP needs).
#pragma once
#include "comm/communicator.hpp"

#include <memory>

namespace ddpscale {

class MpiGroup;

class NcclCommunicator : public Communicator {
 public:
  // The stream collectives are ordered after (and that wait() orders back onto):
  // the trainer passes LibTorch's current stream. nullptr = the legacy default stream.
  virtual void set_compute_stream(void* cuda_stream) = 0;
  // The communicator's own stream (a cudaStream_t), for events that time communication.
  virtual void* stream() const = 0;
  // CUDA graph mode: the stall watchdog's marker must not land inside a stream capture, and
  // once the step is a graph its collectives run on the stream the graph is launched on.
  virtual void pause_stall_watchdog() = 0;
  virtual void watch_stream(void* cuda_stream) = 0;  // (re)starts the watchdog on that stream
  // "2.28.9 (/path/to/libnccl.so.2)": the NCCL this process actually loaded.
  static std::string loaded_version();
};

// Creates the communicator on CUDA device `device` (usually the local rank). Collective
// over `group`; the group must outlive the communicator.
std::unique_ptr<NcclCommunicator> make_nccl_communicator(const MpiGroup& group, int device);

}  // namespace ddpscale
