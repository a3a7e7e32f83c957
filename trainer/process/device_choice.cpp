#include "trainer/process/device_choice.hpp"

#include "comm/mpi_context.hpp"
#include "devices/gpu_info.hpp"
#include "trainer/command_line/cli_util.hpp"

#include <ATen/Parallel.h>
#include <dlfcn.h>
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

// OpenBLAS's entry points, looked up in the libraries loaded with LibTorch: null where its
// BLAS is another (MKL, the reference BLAS).
template <typename Function>
Function openblas_function(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

int blas_threads() {
  const auto get = openblas_function<int (*)()>("openblas_get_num_threads");
  return get ? get() : -1;
}

void set_blas_threads(int threads) {
  if (const auto set = openblas_function<void (*)(int)>("openblas_set_num_threads")) set(threads);
}

void share_cpu_cores(const MpiContext& mpi, const DeviceChoice& device) {
  if (device.cuda) return;
  const int threads = intra_op_threads(cpu_mask_of_this_process(), mpi.local_size());
  at::set_num_threads(threads);
  set_blas_threads(threads);
}

}  // namespace ddpscale
