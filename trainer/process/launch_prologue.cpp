#include "trainer/process/launch_prologue.hpp"

#include "comm/comm_timeout.hpp"
#include "comm/mpi_context.hpp"
#include "trainer/command_line/cli_util.hpp"

#include <cxxopts.hpp>

#include <chrono>
#include <cstdio>
#ifdef DDPSCALE_CUDA
#include "comm/nccl_communicator.hpp"
#endif

namespace ddpscale {

void add_launch_options(cxxopts::Options& options, const std::string& group, const std::string& device_help) {
  options.add_options(group)
      ("device", device_help, cxxopts::value<std::string>()->default_value("auto"))
      ("allow-shared-gpu", "allow more ranks per node than GPUs")
      ("comm-timeout", "seconds before a stuck collective is declared a lost rank",
       cxxopts::value<int>()->default_value("120"));
}

LaunchOptions launch_options_from(const cxxopts::ParseResult& args) {
  LaunchOptions launch;
  launch.device = args["device"].as<std::string>();
  launch.allow_shared_gpu = args.count("allow-shared-gpu") > 0;
  launch.comm_timeout_s = args["comm-timeout"].as<int>();
  if (launch.comm_timeout_s <= 0)
    throw UsageError("--comm-timeout must be a positive number of seconds, got " +
                     std::to_string(launch.comm_timeout_s));
  set_comm_timeout(std::chrono::seconds(launch.comm_timeout_s));
  return launch;
}

DeviceChoice start_on_device(const MpiContext& mpi, const LaunchOptions& launch) {
  const DeviceChoice device = choose_device(mpi, launch.device, launch.allow_shared_gpu);
  share_cpu_cores(mpi, device);
  return device;
}

std::string usage_error_text(const std::exception& error, int argc, char** argv, const std::string& program) {
  if (dynamic_cast<const cxxopts::exceptions::exception*>(&error)) return explain_option_error(error, argc, argv, program);
  return error.what();
}

std::optional<DeviceChoice> agree_on_device(const MpiContext& mpi, const std::string& program,
                                            const LaunchOptions& launch, std::string usage_error,
                                            const std::function<void(const DeviceChoice&)>& check) {
  DeviceChoice device;
  if (usage_error.empty()) {
    try {
      device = start_on_device(mpi, launch);
      if (check) check(device);
    } catch (const std::exception& e) {
      usage_error = e.what();
    }
  }
  if (any_rank_has_usage_error(mpi, program, usage_error)) return std::nullopt;
  return device;
}

std::unique_ptr<Communicator> make_communicator(const MpiGroup& group, const DeviceChoice& device) {
#ifdef DDPSCALE_CUDA
  if (device.cuda) return make_nccl_communicator(group, device.device_index);
#else
  (void)device;
#endif
  return make_mpi_communicator(group);
}

std::unique_ptr<Communicator> make_training_communicator(const MpiGroup& group, const DeviceChoice& device) {
  if (group.size() == 1) return nullptr;
  return make_communicator(group, device);
}

bool any_rank_has_usage_error(const MpiContext& mpi, const std::string& program, const std::string& message) {
  const FirstFailure first = first_failure(mpi.world(), !message.empty(), message);
  if (first.rank < 0) return false;
  // One line, from rank 0: its own message, or that of the first rank that failed.
  if (mpi.rank() == 0) {
    if (first.rank == 0)
      std::fprintf(stderr, "%s: %s\n", program.c_str(), first.message.c_str());
    else
      std::fprintf(stderr, "%s: rank %d: %s\n", program.c_str(), first.rank, first.message.c_str());
    std::fflush(stderr);
  }
  return true;
}

}  // namespace ddpscale
