# Predicted scaling (prediction/): unit tests of the allreduce cost model, the overlap
# simulation, the report-folder input and the interval's coverage on simulated studies.
set(DDPSCALE_TEST_LIBS ddpscale_prediction)
ddpscale_unit_test(test_prediction test_prediction.cpp)

# The README's quick study (2 CPU ranks, sweep_quick_study's fixture) predicted from its
# 1-rank half: the self-check table and the predictions, checked for structure and sanity.
add_test(NAME predict_quick_study
         COMMAND sh -c "$<TARGET_FILE:ddpscale> predict ${CMAKE_BINARY_DIR}/studies/quick --gpus 4 --draws 500 --out ${CMAKE_BINARY_DIR}/studies/quick-predict && python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_prediction.py ${CMAKE_BINARY_DIR}/studies/quick ${CMAKE_BINARY_DIR}/studies/quick-predict 1")
set_tests_properties(predict_quick_study PROPERTIES LABELS "study;predict" FIXTURES_REQUIRED quick_study TIMEOUT 120)
