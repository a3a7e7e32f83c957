# The run store read by tools outside ddpscale: a helper writes a sample study with known
# values (sample_records.hpp), then h5py and h5dump must find them. Included from
# tests/CMakeLists.txt.
add_executable(write_sample_store write_sample_store.cpp)
target_link_libraries(write_sample_store PRIVATE ddpscale_results ${HDF5_C_LIBRARIES})
target_include_directories(write_sample_store PRIVATE ${HDF5_INCLUDE_DIRS})
ddpscale_untimed_code(write_sample_store)
# Building the store test builds the sample writer, so `ctest -R run_store` finds it.
add_dependencies(test_run_store write_sample_store)

# Debian's python3-h5py belongs to the system interpreter, not to a pyenv one on PATH.
set(DDPSCALE_H5PY_PYTHON /usr/bin/python3 CACHE FILEPATH "Python interpreter that has h5py and numpy")
find_program(DDPSCALE_H5DUMP h5dump)

set(run_store_sample_dir ${CMAKE_CURRENT_BINARY_DIR}/run_store_sample)
add_test(NAME run_store_write_sample COMMAND write_sample_store ${run_store_sample_dir})
set_tests_properties(run_store_write_sample PROPERTIES FIXTURES_SETUP run_store_sample LABELS unit)

add_test(NAME run_store_h5py
         COMMAND ${DDPSCALE_H5PY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_run_store_h5py.py ${run_store_sample_dir})
# 77: h5py or numpy missing for that interpreter; reported as skipped, not passed.
set_tests_properties(run_store_h5py PROPERTIES FIXTURES_REQUIRED run_store_sample LABELS unit SKIP_RETURN_CODE 77)

add_test(NAME run_store_h5dump
         COMMAND ${CMAKE_COMMAND} -DH5DUMP=${DDPSCALE_H5DUMP} -DSTUDY_DIR=${run_store_sample_dir}
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/check_run_store_h5dump.cmake)
set_tests_properties(run_store_h5dump PROPERTIES FIXTURES_REQUIRED run_store_sample LABELS unit
                     SKIP_REGULAR_EXPRESSION "SKIPPED: h5dump not found")
