# What a new user meets first, run as they would meet it (as root, like the README's setup):
# the README's command lines and the report's "Commands" section as printed, the messages
# of common mistakes with the fixes they give, and the naming rule of flags and spec keys.
# Included from tests/CMakeLists.txt after torchscript_tests.cmake (the torchscript_files
# fixture). They wait on short launches much of their time and assert no time, so each runs
# beside another test (tests/CMakeLists.txt says how).

add_test(NAME readme_commands
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_readme_commands.py ${PROJECT_SOURCE_DIR}
                 $<TARGET_FILE:ddpscale> ${DDPSCALE_TS_DIR} ${CMAKE_BINARY_DIR}/first_hour/readme)
set_tests_properties(readme_commands PROPERTIES LABELS "mpi;study" TIMEOUT 900
                     FIXTURES_REQUIRED torchscript_files)

add_test(NAME messages_name_cause_and_fix
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_messages.py $<TARGET_FILE:ddpscale> ${DDPSCALE_TS_DIR}
                 ${CMAKE_BINARY_DIR}/first_hour/messages ${DDPSCALE_MPIRUN})
set_tests_properties(messages_name_cause_and_fix PROPERTIES LABELS "mpi;study" TIMEOUT 600
                     FIXTURES_REQUIRED torchscript_files)

add_test(NAME flag_rule
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_flag_rule.py $<TARGET_FILE:ddpscale>
                 ${CMAKE_BINARY_DIR}/first_hour/flags)
set_tests_properties(flag_rule PROPERTIES LABELS unit TIMEOUT 300)

add_test(NAME study_command
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_study_command.py $<TARGET_FILE:ddpscale>
                 ${DDPSCALE_TS_DIR}/mlp.pt ${CMAKE_BINARY_DIR}/first_hour/study ${DDPSCALE_MPIRUN})
set_tests_properties(study_command PROPERTIES LABELS "mpi;study" TIMEOUT 600
                     FIXTURES_REQUIRED torchscript_files PASS_REGULAR_EXPRESSION "PASSED: study")

# The six findings of a new user's first hour, each run as the user ran it: --out naming a
# file refused before any work by every subcommand with --out; the folder `study --out` wrote
# taken by predict, report and compare; a CPU study predicted from a GPU curve warned of; one
# intra-op thread per rank on a one-core mask (taskset, mpirun --bind-to core); the dry run's
# total; SIGTERM named; reports titled by their study.
add_test(NAME first_hour_findings
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_first_hour_findings.py $<TARGET_FILE:ddpscale>
                 ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/first_hour/findings ${DDPSCALE_MPIRUN})
set_tests_properties(first_hour_findings PROPERTIES LABELS "mpi;study" TIMEOUT 600
                     PASS_REGULAR_EXPRESSION "PASSED: first hour findings")
