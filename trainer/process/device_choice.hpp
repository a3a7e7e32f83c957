// Which device a rank trains and communicates on. Decided from facts every rank on a
// node sees alike (build, GPU count, ranks per node), so all ranks reach the same verdict
// before any collective.
#pragma once
#include <sched.h>

#include <string>
#include <vector>

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
// threads, so two ranks on two cores do not fight four threads over two cores. The cores are
// those of the process's CPU mask (taskset, mpirun --bind-to, a cpuset), not the machine's:
// a rank pinned to one core that ran as many threads as the machine has cores spent its
// steps switching between them.
void share_cpu_cores(const MpiContext& mpi, const DeviceChoice& device);

// This process's CPU mask (sched_getaffinity); every core of the machine where it cannot be read.
cpu_set_t cpu_mask_of_this_process();
// The cores in a mask, in ascending order.
std::vector<int> cores_in(const cpu_set_t& mask);
// LibTorch's intra-op threads for a rank with this CPU mask, whose cores ranks_on_node ranks
// share: CPU_COUNT(mask) / ranks_on_node, at least 1.
int intra_op_threads(const cpu_set_t& mask, int ranks_on_node);

}  // namespace ddpscale
