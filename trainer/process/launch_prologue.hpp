// What train, sweep and commbench do alike before they measure: the launch options
// (--device, --allow-shared-gpu, --comm-timeout: one declaration, one help text, one
// validation), the device every rank uses, and the communicator of a group of ranks.
#pragma once
#include "comm/communicator.hpp"
#include "trainer/process/device_choice.hpp"

#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace cxxopts {
class Options;
class ParseResult;
}  // namespace cxxopts

namespace ddpscale {

class MpiContext;
class MpiGroup;

struct LaunchOptions {
  std::string device = "auto";
  bool allow_shared_gpu = false;
  int comm_timeout_s = 120;
};

// Declares --device (with `device_help`), --allow-shared-gpu and --comm-timeout in `group`.
void add_launch_options(cxxopts::Options& options, const std::string& group, const std::string& device_help);

// Reads the launch options and sets the communication time-out (comm_timeout.hpp). Throws
// UsageError when --comm-timeout is not a positive number of seconds. Before MPI starts.
LaunchOptions launch_options_from(const cxxopts::ParseResult& args);

// After MPI starts: the device of this rank (choose_device) and, on CPU, its share of the
// node's cores (share_cpu_cores). Throws UsageError as choose_device does.
DeviceChoice start_on_device(const MpiContext& mpi, const LaunchOptions& launch);

// The one line a usage error shows: cxxopts' parse errors explained (explain_option_error),
// others as they are.
std::string usage_error_text(const std::exception& error, int argc, char** argv, const std::string& program);

// After MPI starts, on every rank: unless `usage_error` already holds one, the device
// (start_on_device) and then `check` (what needs the device, e.g. the options' validation);
// the ranks agree on the first error (any_rank_has_usage_error), which rank 0 reports as
// "<program>: <message>". nullopt: an error was reported and the command exits 2.
std::optional<DeviceChoice> agree_on_device(const MpiContext& mpi, const std::string& program,
                                            const LaunchOptions& launch, std::string usage_error,
                                            const std::function<void(const DeviceChoice&)>& check = nullptr);

// The communicator of `group` on `device`: NCCL on a GPU, MPI on the CPU.
std::unique_ptr<Communicator> make_communicator(const MpiGroup& group, const DeviceChoice& device);
// The same for ranks that train together, but null for one rank: a world size of 1 runs no
// communication code at all.
std::unique_ptr<Communicator> make_training_communicator(const MpiGroup& group, const DeviceChoice& device);

// The one place a subcommand's usage errors are reported once MPI is up. Every rank
// validated the same input, but a rank may still see something else (a spec file missing
// on one node), so the ranks agree first. Collective over the world, before any other
// collective of the command: returns true when any rank failed, after rank 0 printed
// "<program>: <message>" (or "<program>: rank R: <message>" for the first failed rank when
// rank 0 itself was fine) as one line. Every rank then returns exit code 2.
bool any_rank_has_usage_error(const MpiContext& mpi, const std::string& program, const std::string& message);

}  // namespace ddpscale
