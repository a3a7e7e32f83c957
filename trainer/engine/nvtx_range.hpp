// A named NVTX range for the lifetime of a scope, so Nsight Systems shows a step's phases
// by name (`nsys profile mpirun -np 2 ddpscale train ...`). Without a profiler attached an
// NVTX3 call is one check of a function pointer; without CUDA it compiles to nothing.
#pragma once
#ifdef DDPSCALE_CUDA
#include <nvtx3/nvToolsExt.h>
#endif

namespace ddpscale {

class NvtxRange {
 public:
  explicit NvtxRange(const char* name) {
#ifdef DDPSCALE_CUDA
    nvtxRangePushA(name);
#else
    (void)name;
#endif
  }
  ~NvtxRange() {
#ifdef DDPSCALE_CUDA
    nvtxRangePop();
#endif
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace ddpscale
