#include "trainer/process/device_choice.hpp"

#include "comm/mpi_context.hpp"
#include "devices/gpu_info.hpp"
#include "trainer/command_line/cli_util.hpp"

#include <ATen/Parallel.h>
#include <sched.h>

#include <algorithm>
#include <thread>

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

cpu_set_t cpu_mask_of_this_process() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0 && CPU_COUNT(&mask) > 0) return mask;
  // Unreadable (a machine of more cores than CPU_SETSIZE): every core, as the machine counts them.
  CPU_ZERO(&mask);
  const int machine = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int core = 0; core < std::min(machine, CPU_SETSIZE); ++core) CPU_SET(core, &mask);
  return mask;
}

std::vector<int> cores_in(const cpu_set_t& mask) {
  std::vector<int> cores;
  for (int core = 0; core < CPU_SETSIZE; ++core)
    if (CPU_ISSET(core, &mask)) cores.push_back(core);
  return cores;
}

int intra_op_threads(const cpu_set_t& mask, int ranks_on_node) {
  return std::max(1, CPU_COUNT(&mask) / std::max(1, ranks_on_node));
}

void share_cpu_cores(const MpiContext& mpi, const DeviceChoice& device) {
  if (device.cuda) return;
  at::set_num_threads(intra_op_threads(cpu_mask_of_this_process(), mpi.local_size()));
}

}  // namespace ddpscale
