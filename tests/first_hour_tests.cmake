# What a new user meets first, run as they would meet it (as root, like the README's setup):
# the naming rule of flags and spec keys.

add_test(NAME flag_rule
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_flag_rule.py $<TARGET_FILE:ddpscale>
                 ${CMAKE_BINARY_DIR}/first_hour/flags)
set_tests_properties(flag_rule PROPERTIES LABELS unit TIMEOUT 300)
