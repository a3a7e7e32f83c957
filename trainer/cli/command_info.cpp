#include "comm/mpi_context.hpp"
#include "trainer/cli/commands.hpp"
#include "trainer/command_line/help_option.hpp"
#include "trainer/process/system_report.hpp"

#include <cxxopts.hpp>

#include <iostream>

namespace ddpscale {

int run_info_command(int argc, char** argv) {
  cxxopts::Options options(argv[0], "Prints, as JSON on rank 0: host and ranks, versions of LibTorch, CUDA, NCCL, MPI "
                                    "and HDF5, the GPUs and the link between each pair.");
  options.add_options()("h,help", "show this help");
  const auto args = options.parse(argc, argv);
  if (printed_help(options, args, "mpirun -np 2 ddpscale info")) return 0;
  MpiContext mpi(&argc, &argv);
  const std::string json = system_report_json(mpi);
  if (mpi.rank() == 0) std::cout << json << std::endl;
  return 0;
}

}  // namespace ddpscale
