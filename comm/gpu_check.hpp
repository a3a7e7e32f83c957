// Check macros for CUDA and NCCL; only compiled when DDPSCALE_CUDA is on.
#pragma once
#include "comm/check.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#define DDPSCALE_CUDA_CHECK(call)                                                                  \
  do {                                                                                             \
    cudaError_t ddpscale_err_ = (call);                                                            \
    if (ddpscale_err_ != cudaSuccess)                                                              \
      ::ddpscale::fatal_error(#call, cudaGetErrorString(ddpscale_err_), __FILE__, __LINE__);       \
  } while (0)

#define DDPSCALE_NCCL_CHECK(call)                                                                  \
  do {                                                                                             \
    ncclResult_t ddpscale_res_ = (call);                                                           \
    if (ddpscale_res_ != ncclSuccess && ddpscale_res_ != ncclInProgress)                           \
      ::ddpscale::fatal_error(#call, std::string(ncclGetErrorString(ddpscale_res_)) + " / " +      \
                                         ncclGetLastError(nullptr), __FILE__, __LINE__);           \
  } while (0)
