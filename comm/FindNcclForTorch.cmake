# Finds the NCCL that the process will actually load next to LibTorch.
# PyTorch wheels bundle their own libnccl.so.2 (site-packages/nvidia/nccl); linking a
# second, system NCCL would put two copies with one soname in the process, and the
# loader would silently pick one. So: prefer the bundled copy, fall back to the system's.
# Sets NCCL_INCLUDE_DIR, NCCL_LIBRARY and the imported target ddpscale::nccl.
get_filename_component(_torch_site "${Torch_DIR}/../../../.." ABSOLUTE)
find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS "${_torch_site}/nvidia/nccl/include" "${_torch_site}/../nvidia/nccl/include"
  PATHS /usr/include /usr/local/include /usr/local/cuda/include)
find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR
  HINTS "${_torch_site}/nvidia/nccl/lib" "${_torch_site}/../nvidia/nccl/lib"
  PATHS /usr/lib/x86_64-linux-gnu /usr/local/lib /usr/local/cuda/lib64)
if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
  message(FATAL_ERROR "DDPSCALE_WITH_CUDA needs NCCL: nccl.h / libnccl not found "
    "(looked next to Torch in ${_torch_site}/nvidia/nccl and in the system paths). "
    "Install NCCL or configure with -DDDPSCALE_WITH_CUDA=OFF.")
endif()
message(STATUS "ddpscale: NCCL header ${NCCL_INCLUDE_DIR}, library ${NCCL_LIBRARY}")
get_filename_component(NCCL_LIBRARY_DIR "${NCCL_LIBRARY}" DIRECTORY)
add_library(ddpscale::nccl UNKNOWN IMPORTED)
set_target_properties(ddpscale::nccl PROPERTIES
  IMPORTED_LOCATION "${NCCL_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
# The run-time search path must find the same copy first, before the system's.
set(CMAKE_BUILD_RPATH "${NCCL_LIBRARY_DIR};${CMAKE_BUILD_RPATH}")
set(CMAKE_INSTALL_RPATH "${NCCL_LIBRARY_DIR};${CMAKE_INSTALL_RPATH}")
