// Writes the sample study of sample_records.hpp into a directory, for the outside-tool
// checks (check_run_store_h5py.py, check_run_store_h5dump.cmake) to read back.
#include "results/store/run_store.hpp"
#include "tests/sample_records.hpp"

#include <cstdio>
#include <filesystem>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  try {
    std::filesystem::create_directories(argv[1]);
    // The values check_run_store_h5py.py expects; keep the two in step.
    const ddpscale::CommBenchTable commbench{{1024, 1048576}, {10.5, 120.0}, {0.0975, 8.738}, {0.0975, 8.738}};
    ddpscale::write_study(argv[1], ddpscale::testing_samples::sample_metadata(), commbench);
    ddpscale::write_config(argv[1], ddpscale::testing_samples::sample_config());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_sample_store: %s\n", e.what());
    return 1;
  }
  return 0;
}
