// Which device a rank trains and communicates on. Decided from facts every rank on a
// node sees alike (build, GPU count, ranks per node), so all ranks reach the same verdict
// before any collective.
#pragma once
#include <string>

namespace ddpscale {

class MpiContext;

struct DeviceChoice {
  bool cuda = false;
  int device_index = -1;  // CUDA device of this rank, -1 on CPU
  std::string describe() const;
};

// requested: "auto" (GPUs when the build and the machine have them), "cpu" or "cuda".
// Throws UsageError when "cuda" cannot be honoured, or when more ranks share a node than
// it has GPUs and allow_shared_gpu is false.
DeviceChoice choose_device(const MpiContext& mpi, const std::string& requested, bool allow_shared_gpu);

// On CPU, ranks of one node share its cores: each gets cores / ranks-per-node LibTorch
// threads, so two ranks on two cores do not fight four threads over two cores.
void share_cpu_cores(const MpiContext& mpi, const DeviceChoice& device);

}  // namespace ddpscale
