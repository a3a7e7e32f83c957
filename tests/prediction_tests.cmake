# Predicted scaling (prediction/): unit tests of the allreduce cost model, the overlap
# simulation, the report-folder input and the interval's coverage on simulated studies.
set(DDPSCALE_TEST_LIBS ddpscale_prediction)
ddpscale_unit_test(test_prediction test_prediction.cpp)
