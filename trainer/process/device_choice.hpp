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
// The same count goes to OpenBLAS where it is LibTorch's BLAS (Debian's libtorch takes it from
// the libblas.so.3 alternative), which at::set_num_threads in LibTorch 1.13 does not reach:
// OpenBLAS's pthread build, which Debian's SciPy installs and which then wins the alternative,
// otherwise starts a thread per core of the machine in every rank: 4 busy threads on 2 cores
// for 2 ranks (tests/kill_resume_test.sh on 2 cores: 37-43 CPU-seconds so, 26 with one BLAS
// thread a rank).
void share_cpu_cores(const MpiContext& mpi, const DeviceChoice& device);

// OpenBLAS's thread count, -1 where LibTorch's BLAS is not OpenBLAS; and setting it (nothing
// where it is not OpenBLAS).
int blas_threads();
void set_blas_threads(int threads);

// This process's CPU mask (sched_getaffinity); every core of the machine where it cannot be read.
cpu_set_t cpu_mask_of_this_process();
// The cores in a mask, in ascending order.
std::vector<int> cores_in(const cpu_set_t& mask);
// LibTorch's intra-op threads for a rank with this CPU mask, whose cores ranks_on_node ranks
// share: CPU_COUNT(mask) / ranks_on_node, at least 1.
int intra_op_threads(const cpu_set_t& mask, int ranks_on_node);

}  // namespace ddpscale
