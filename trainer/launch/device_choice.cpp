#include "launch/device_choice.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <thread>

#include "launch/cli_util.hpp"
#include "gpu_info.hpp"
#include "mpi_context.hpp"

namespace ddpscale {

std::string DeviceChoice::describe() const { return cuda ? "cuda:" + std::to_string(device_index) : "cpu"; }

DeviceChoice choose_device(const MpiContext& mpi, const std::string& requested, bool allow_shared_gpu) {
  if (requested != "auto" && requested != "cpu" && requested != "cuda")
    throw UsageError("--device '" + requested + "' is not one of auto, cpu, cuda");
  DeviceChoice choice;
  if (requested == "cpu") return choice;
  const int gpus = visible_gpu_count();
  if (gpus == 0) {
    if (requested == "cuda")
      throw UsageError("--device cuda: no CUDA device is visible (or this build has no CUDA); use --device cpu");
    return choice;
  }
  if (mpi.local_size() > gpus && !allow_shared_gpu)
    throw UsageError(std::to_string(mpi.local_size()) + " ranks on host " + mpi.hostname() + " but only " +
                     std::to_string(gpus) +
                     " GPUs: ranks would share a GPU and distort every timing; launch fewer ranks per node or pass "
                     "--allow-shared-gpu");
  choice.cuda = true;
  choice.device_index = mpi.local_rank() % gpus;
  return choice;
}

}  // namespace ddpscale

namespace ddpscale {

void share_cpu_cores(const MpiContext& mpi, const DeviceChoice& device) {
  if (device.cuda) return;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(std::max(1, cores / std::max(1, mpi.local_size())));
}

}  // namespace ddpscale
