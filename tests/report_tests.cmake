# `ddpscale report` (docs/architecture.md, "From runs to a report"): unit tests on synthetic studies, and the report of the
# real quick study checked by an independent computation (h5py + scipy) and opened in
# headless Chromium. Included from tests/CMakeLists.txt, after run_store_outside_tools.cmake
# (DDPSCALE_H5PY_PYTHON) and sweep_tests.cmake (the quick_study fixture).
set(DDPSCALE_TEST_LIBS ddpscale_results)
# One binary, one file per part of the report it tests; report_test_helpers.hpp holds what
# they share (synthetic configurations, the report written without plots, a CSV reader).
ddpscale_unit_test(test_report test_report_twins.cpp test_report_speedup.cpp test_report_thresholds.cpp
                   test_report_format.cpp test_summary_export.cpp test_report_sections.cpp
                   test_report_escaping.cpp test_load_studies.cpp test_write_report.cpp test_report_drift.cpp
                   test_report_paid_off.cpp test_report_why_not.cpp test_pytorch_import.cpp)
# The bad-input tests (test_load_studies.cpp) forge files with the HDF5 C API directly.
target_include_directories(test_report PRIVATE ${HDF5_INCLUDE_DIRS})
target_link_libraries(test_report PRIVATE ${HDF5_C_LIBRARIES})

# gtest_discover_tests makes the tests at ctest time and lists them in test_report_TESTS;
# a file included after its own gives each of them a timeout (they take well under a
# second each; gnuplot draws five plots in one of them).
set(report_test_timeouts ${CMAKE_CURRENT_BINARY_DIR}/test_report_timeouts.cmake)
file(WRITE ${report_test_timeouts}
     "if(test_report_TESTS)\n  set_tests_properties(\${test_report_TESTS} PROPERTIES TIMEOUT 120)\nendif()\n")
set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${report_test_timeouts})

# The quick study (experiments/quick.yaml on 2 ranks, left in studies/quick by
# sweep_quick_study) turned into a report, whose numbers are then recomputed from the
# HDF5 files with h5py + numpy + scipy, and whose HTML must render in headless Chromium.
# 77 = skipped: h5py/scipy missing for DDPSCALE_H5PY_PYTHON, or no Chromium.
set(report_quick_study_dir ${CMAKE_BINARY_DIR}/studies/quick)
set(report_quick_out_dir ${CMAKE_BINARY_DIR}/reports/quick)
add_test(NAME report_quick_study
         COMMAND bash -c [=[
set -eu
ddpscale="$1" study="$2" out="$3" python="$4" tests="$5"
rm -rf "$out"
"$ddpscale" report "$study" --out "$out"
"$python" "$tests/check_report_numbers.py" "$out" "$study"
bash "$tests/check_report_html.sh" "$out"
]=] report_quick_study $<TARGET_FILE:ddpscale> ${report_quick_study_dir} ${report_quick_out_dir}
                 ${DDPSCALE_H5PY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(report_quick_study PROPERTIES LABELS "study;report" FIXTURES_REQUIRED quick_study
                     TIMEOUT 300 SKIP_RETURN_CODE 77)
