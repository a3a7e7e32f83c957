# How hard the compiler optimises, by what the code does.
#
# Code that runs inside a timed step, or between a step's timers, compiles at the build type's
# level (Release: -O3): the engine (trainer/engine), the models, comm/, devices/, the study's
# LibTorch files (the paired blocks, the configuration runner) and every file that uses the
# engine's precompiled header, which GCC uses only with the flags it was built with.
#
# Everything else runs before, between or after the timed steps: the command line, the
# process prologue, the study's planning and launching, the run store, statistics, reports,
# prediction, and the tests' own code. It compiles at -O1, about half the compiler time of
# -O3 (results/report's larger combined file: 38 s at -O3 beside another compile; alone, 29 s
# at -O2 and 15 s at -O1),
# never changes a timed step, and wrote the quick study's report byte for byte the same in
# the same 0.7 s. The `ddpscale` target on 2 cores: 3 min 13 s (368 core-s) all at -O3,
# 2 min 44 s (299 core-s) so. Floating point is IEEE at either level (no -ffast-math).
# Debug builds keep -O0.
set(DDPSCALE_UNTIMED_CODE_OPTIMIZATION -O1)
set(ddpscale_untimed_code_option $<$<NOT:$<CONFIG:Debug>>:${DDPSCALE_UNTIMED_CODE_OPTIMIZATION}>)

# ddpscale_untimed_code(target): the target's own files compile at the untimed level (the
# option comes after the build type's -O3 on the command line, and GCC takes the last).
function(ddpscale_untimed_code target)
  target_compile_options(${target} PRIVATE ${ddpscale_untimed_code_option})
endfunction()

# ddpscale_untimed_sources(target group file...): only these files of a target that mixes the
# two; group names their combined file (ddpscale_unity_groups). A file with its own compile
# options would leave its combined file, so the option goes on the combined file in unity
# builds and on each file otherwise.
function(ddpscale_untimed_sources target group)
  if(DDPSCALE_UNITY_BUILD)
    set_source_files_properties(${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${target}.dir/Unity/unity_${target}_${group}_cxx.cxx
                                PROPERTIES COMPILE_OPTIONS ${ddpscale_untimed_code_option})
  else()
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS ${ddpscale_untimed_code_option})
  endif()
endfunction()
