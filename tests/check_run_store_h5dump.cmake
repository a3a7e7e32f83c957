# cmake -DH5DUMP=<h5dump> -DSTUDY_DIR=<dir> -P check_run_store_h5dump.cmake
# h5dump -H (header only) on the sample configuration and study files must show every
# dataset and group the schema names (docs/hdf5-schema.md).
if(NOT H5DUMP OR NOT EXISTS "${H5DUMP}")
  message("SKIPPED: h5dump not found")
  return()
endif()

function(expect_in_header file)
  execute_process(COMMAND ${H5DUMP} -H ${file} OUTPUT_VARIABLE header ERROR_VARIABLE errors RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "h5dump -H ${file} failed (${status}): ${errors}")
  endif()
  foreach(expected IN LISTS ARGN)
    string(FIND "${header}" "${expected}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "h5dump -H ${file}: '${expected}' not found in\n${header}")
    endif()
  endforeach()
endfunction()

expect_in_header(${STUDY_DIR}/mlp-medium_b32_w2_sample.h5
  "ATTRIBUTE \"schema\"" "ATTRIBUTE \"schema_version\"" "ATTRIBUTE \"complete\""
  "GROUP \"params\"" "GROUP \"nccl_variables\"" "GROUP \"runs\"" "GROUP \"run_0001\""
  "DATASET \"loss\"" "DATASET \"phase_us\"" "DATASET \"phase_steps\"" "ATTRIBUTE \"phases\""
  "DATASET \"wall_seconds\"" "DATASET \"peak_memory_bytes\""
  "DATASET \"gpu_utilization_pct\"" "DATASET \"gpu_utilization_pct_count\""
  "DATASET \"gpu_memory_used_mib\"" "DATASET \"gpu_power_w\""
  "DATASPACE  SIMPLE { ( 2, 7, 5 ) / ( 2, 7, 5 ) }")
expect_in_header(${STUDY_DIR}/study.h5
  "GROUP \"metadata\"" "ATTRIBUTE \"spec_text\"" "ATTRIBUTE \"hostnames\""
  "GROUP \"commbench\"" "DATASET \"bytes\"" "DATASET \"time_us\"" "DATASET \"algbw_gbs\"" "DATASET \"busbw_gbs\"")
message("h5dump -H shows every dataset of the schema")
