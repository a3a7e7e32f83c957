// The NCCL backend on 2 GPUs, one per rank. Skips where the build has no CUDA or the
// machine fewer than 2 GPUs.
#include "comm/communicator.hpp"
#include "devices/device_sampler.hpp"
#include "devices/gpu_info.hpp"
#include "tests/mpi_test_env.hpp"

#include <gtest/gtest.h>

#include <vector>
#ifdef DDPSCALE_CUDA
#include <cuda_runtime.h>

#include "comm/nccl_communicator.hpp"
#endif

namespace ddpscale {
namespace {

using testing::g_mpi;

class NcclBackend : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef DDPSCALE_CUDA
    GTEST_SKIP() << "built without CUDA";
#else
    if (visible_gpu_count() < 2) GTEST_SKIP() << "needs 2 GPUs, found " << visible_gpu_count();
    if (!comm) comm = make_nccl_communicator(g_mpi->world(), g_mpi->local_rank());
#endif
  }
#ifdef DDPSCALE_CUDA
  static std::unique_ptr<NcclCommunicator> comm;

  template <typename T>
  std::vector<T> reduce_on_device(const std::vector<T>& host, DType dtype, ReduceOp op) {
    void* device = nullptr;
    EXPECT_EQ(cudaMalloc(&device, host.size() * sizeof(T)), cudaSuccess);
    cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
    auto work = comm->allreduce_async(device, host.size(), dtype, op);
    work->wait();
    comm->synchronize();
    std::vector<T> out(host.size());
    cudaMemcpy(out.data(), device, host.size() * sizeof(T), cudaMemcpyDeviceToHost);
    cudaFree(device);
    return out;
  }
#endif
};

#ifdef DDPSCALE_CUDA
std::unique_ptr<NcclCommunicator> NcclBackend::comm;
#endif

TEST_F(NcclBackend, AllreduceSumAndAverageOddSizes) {
#ifdef DDPSCALE_CUDA
  for (size_t count : {size_t(1), size_t(1023), size_t(1000003)}) {
    std::vector<float> f(count);
    std::vector<double> d(count);
    for (size_t i = 0; i < count; ++i) {
      f[i] = static_cast<float>((i % 89 + 1) * (g_mpi->rank() + 1));
      d[i] = static_cast<double>((i % 89 + 1) * (g_mpi->rank() + 1));
    }
    const auto sum = reduce_on_device(f, DType::f32, ReduceOp::sum);
    const auto avg = reduce_on_device(d, DType::f64, ReduceOp::average);
    for (size_t i = 0; i < count; i += 101) {
      ASSERT_FLOAT_EQ(sum[i], 3.0f * static_cast<float>(i % 89 + 1)) << count << " " << i;
      ASSERT_DOUBLE_EQ(avg[i], 1.5 * static_cast<double>(i % 89 + 1)) << count << " " << i;
    }
  }
#endif
}

TEST_F(NcclBackend, AllreduceInt64) {
#ifdef DDPSCALE_CUDA
  std::vector<int64_t> v(9, g_mpi->rank() + 1);
  const auto sum = reduce_on_device(v, DType::i64, ReduceOp::sum);
  for (int64_t x : sum) EXPECT_EQ(x, 3);
#endif
}

TEST_F(NcclBackend, BroadcastFromRankOne) {
#ifdef DDPSCALE_CUDA
  std::vector<float> host(4097, g_mpi->rank() == 1 ? 7.25f : -1.0f);
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, host.size() * sizeof(float)), cudaSuccess);
  cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  comm->broadcast(device, host.size(), DType::f32, 1);
  cudaMemcpy(host.data(), device, host.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(device);
  for (float x : host) ASSERT_EQ(x, 7.25f);
#endif
}

// Each rank's GPU read through NVML while a kernel keeps it busy: memory in use covers at
// least the buffer we hold, the board draws power, and the sampler stores what it read.
TEST_F(NcclBackend, NvmlSamplerReadsThisRanksGpu) {
#ifdef DDPSCALE_CUDA
  const SampleProbe probe = nvml_probe(g_mpi->local_rank());
  ASSERT_TRUE(probe) << "NVML could not read GPU " << g_mpi->local_rank();
  const size_t bytes = size_t(256) << 20;
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, bytes), cudaSuccess);
  DeviceSampler sampler(probe, std::chrono::milliseconds(5));
  sampler.start();
  for (int i = 0; i < 200; ++i) ASSERT_EQ(cudaMemset(device, i, bytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  sampler.stop();
  cudaFree(device);
  ASSERT_GE(sampler.samples().size(), 2u);
  for (const DeviceSample& s : sampler.samples()) {
    EXPECT_GE(s.memory_used_mib, 256.0f);
    EXPECT_GT(s.power_w, 0.0f);
    EXPECT_GE(s.utilization_pct, 0.0f);
    EXPECT_LE(s.utilization_pct, 100.0f);
  }
#endif
}

}  // namespace
}  // namespace ddpscale
