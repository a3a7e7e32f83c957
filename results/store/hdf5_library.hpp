// Facts about the HDF5 library this build links, kept apart from the run store so that
// `ddpscale info` can report them without opening a file.
#pragma once
#include <string>

namespace ddpscale {

std::string hdf5_library_version();  // "1.10.8", from the library at run time

}  // namespace ddpscale
