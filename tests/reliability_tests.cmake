# Reliability on CPU: bad input and faults, each on 2 MPI ranks against the built `ddpscale`.
# Included at the end of tests/CMakeLists.txt (after run_store_outside_tools.cmake, which
# defines DDPSCALE_H5PY_PYTHON: the fault tests that read HDF5 need h5py and skip with 77
# without it). The cases, the messages a user sees and what is not covered on CPU:
# docs/reliability.md. Every one runs beside another test: the fault tests' time limits are
# seconds, measured from the launch's own start or its fault, and the bad-input cases wait on
# refusals far inside their 10 s limit (the end of tests/CMakeLists.txt).
# Run them: ctest -L reliability --output-on-failure   (about 3 minutes on 2 cores)
set(ddpscale_reliability_args --ddpscale $<TARGET_FILE:ddpscale> --mpirun "${DDPSCALE_MPIRUN_STRING}")

# 32 bad-input cases of `ddpscale train` and `ddpscale sweep`: exit code 2, one error line
# naming what is wrong, every process gone within 10 s, no result file written.
add_test(NAME reliability_bad_input
         COMMAND ${DDPSCALE_H5PY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/reliability_cases.py ${ddpscale_reliability_args})
# Both ranks refuse and exit by themselves (after MPI_Finalize, where rank 0 has printed its
# line), so mpirun's second between SIGTERM and SIGKILL to ranks still being reaped only
# waits: 32 of them, 56 -> 43 s run alone. What is asserted does not depend on it.
set_tests_properties(reliability_bad_input PROPERTIES LABELS "mpi;reliability" TIMEOUT 300
                     ENVIRONMENT "OMPI_MCA_odls_base_sigkill_timeout=0")

# One CTest test per fault (reliability_faults.py says what each asserts).
# sweep_barrier_stall, sweep_long_idle_wait: the sweep's bounded barriers; memory_preflight:
# a model that cannot fit refused before allocation.
foreach(fault kill_rank stuck_rank signal_mpirun_int signal_mpirun_term signal_ranks_term nan_loss diverged oom_batch
              disk_full sweep_barrier_stall sweep_long_idle_wait memory_preflight)
  add_test(NAME reliability_${fault}
           COMMAND ${DDPSCALE_H5PY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/reliability_faults.py
                   ${ddpscale_reliability_args} ${fault})
  set_tests_properties(reliability_${fault} PROPERTIES LABELS "mpi;reliability" TIMEOUT 180
                       SKIP_RETURN_CODE 77)
endforeach()

# The same lost and stuck ranks over NCCL on 2 GPUs: NCCL's own error and the timed wait of
# comm/nccl_communicator.cpp must bring the job down as MPI's does on CPU.
if(DDPSCALE_CUDA)
  foreach(fault kill_rank stuck_rank)
    add_test(NAME reliability_${fault}_nccl
             COMMAND ${DDPSCALE_H5PY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/reliability_faults.py
                     ${ddpscale_reliability_args} --device cuda ${fault})
    set_tests_properties(reliability_${fault}_nccl PROPERTIES LABELS "gpu;mpi;reliability" TIMEOUT 180
                         SKIP_RETURN_CODE 77)
  endforeach()
endif()
