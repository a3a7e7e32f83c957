# Writes CTEST_FILE with one CTest test per GoogleTest suite of TEST_EXECUTABLE, named
# "Suite.*" and run as `TEST_EXECUTABLE --gtest_filter=Suite.*`: every case still runs and
# prints its own line, in one process per suite. For binaries that link LibTorch, whose
# start alone costs about 0.75 s on the 2-core machine; one process per case would spend
# most of the suite's time starting (tests/CMakeLists.txt, ddpscale_unit_test_per_suite).
#   cmake -D TEST_EXECUTABLE=... -D CTEST_FILE=... -D TEST_LABELS=unit -D TEST_TIMEOUT=300 -P gtest_suites.cmake
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE status TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "listing the tests of ${TEST_EXECUTABLE} failed (${status}): ${errors}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
set(suites 0)
foreach(line IN LISTS lines)
  # A suite line is its name and a dot at the start of the line; cases are indented.
  if(line MATCHES "^([A-Za-z_][A-Za-z0-9_/]*)\\.")
    set(name "${CMAKE_MATCH_1}.*")
    string(APPEND script "add_test([=[${name}]=] [=[${TEST_EXECUTABLE}]=] [=[--gtest_filter=${name}]=])\n"
                         "set_tests_properties([=[${name}]=] PROPERTIES LABELS [=[${TEST_LABELS}]=] TIMEOUT ${TEST_TIMEOUT})\n")
    math(EXPR suites "${suites} + 1")
  endif()
endforeach()
if(suites EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} lists no GoogleTest suite")
endif()
file(WRITE "${CTEST_FILE}" "${script}")
