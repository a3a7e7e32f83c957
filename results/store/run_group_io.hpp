// One run's group in a configuration file, /runs/run_NNNN (docs/hdf5-schema.md): its
// attributes, every rank's phase times per step, the NVML series, the host-drift calibration
// and the instruments. The file around it (run_store.cpp) holds one group per run.
#pragma once
#include "results/store/h5_io.hpp"
#include "results/store/run_record.hpp"

#include <string>

namespace ddpscale {

// Writes `run` as a new group of `runs`, named for its index.
void write_run(const H5Io& io, hid_t runs, const RunRecord& run);

// Reads the group `name` of `runs`; the optional parts a file of an older build lacks are
// left at their defaults. Throws StoreError naming the file on a malformed group.
RunRecord read_run(const H5Io& io, hid_t runs, const std::string& name);

}  // namespace ddpscale
