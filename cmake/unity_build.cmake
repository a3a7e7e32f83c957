# Unity builds: a target's sources compiled as a few combined translation units.
#
# A file that includes LibTorch pays, even with the precompiled torch/torch.h, about 10 s
# instantiating LibTorch's inline templates and 10 s optimising and emitting that code
# (g++ -ftime-report on trainer/engine/gradient_reducer.cpp); files compiled together pay it
# once. The files of the other targets mostly parse the same standard, JSON, HDF5 and
# GoogleTest headers, which a combined file parses once too.
#
# DDPSCALE_UNITY_BUILD=OFF compiles every file alone: a faster rebuild after editing one file,
# and the check that each file includes what it uses.
option(DDPSCALE_UNITY_BUILD "Compile each target's sources as a few combined translation units" ON)

# Every target: consecutive sources in batches of DDPSCALE_UNITY_BATCH_SIZE. The LibTorch
# targets group their files by hand instead (ddpscale_unity_groups below).
set(DDPSCALE_UNITY_BATCH_SIZE 8 CACHE STRING "Source files per combined translation unit")
set(CMAKE_UNITY_BUILD ${DDPSCALE_UNITY_BUILD})
set(CMAKE_UNITY_BUILD_BATCH_SIZE ${DDPSCALE_UNITY_BATCH_SIZE})

# ddpscale_unity_groups(target GROUP name file... [GROUP name file...]): each GROUP's files
# compiled as one translation unit; files in no group compile alone. For targets whose files
# differ in cost (LibTorch or not) and in precompiled header: a group holds files alike in
# both, and groups of similar cost keep both cores busy. Call it after the target's
# SKIP_PRECOMPILE_HEADERS: a group whose files all skip the PCH skips it too (CMake gives a
# combined file the target's PCH otherwise), and one that mixes the two is refused.
function(ddpscale_unity_groups target)
  if(NOT DDPSCALE_UNITY_BUILD)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  set(groups "")
  set(group "")
  set(next_is_name FALSE)
  foreach(arg IN LISTS ARGN)
    if(arg STREQUAL "GROUP")
      set(next_is_name TRUE)
    elseif(next_is_name)
      set(group ${target}_${arg})
      list(APPEND groups ${group})
      set(next_is_name FALSE)
    elseif(group STREQUAL "")
      message(FATAL_ERROR "ddpscale_unity_groups(${target}): ${arg} comes before any GROUP name")
    else()
      set_property(SOURCE ${arg} PROPERTY UNITY_GROUP ${group})
      get_source_file_property(skips_pch ${arg} SKIP_PRECOMPILE_HEADERS)
      list(APPEND ${group}_pch_skips ${skips_pch})
    endif()
  endforeach()
  foreach(group IN LISTS groups)
    if(NOT "NOTFOUND" IN_LIST ${group}_pch_skips)
      # The combined file CMake writes for the group (its Unity/ folder's naming).
      set_source_files_properties(${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${target}.dir/Unity/unity_${group}_cxx.cxx
                                  PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    elseif(NOT ${group}_pch_skips MATCHES "^NOTFOUND(;NOTFOUND)*$")
      message(FATAL_ERROR "ddpscale_unity_groups(${target}): group ${group} mixes files with and without the "
                          "precompiled header")
    endif()
  endforeach()
endfunction()
