# Predicted scaling (prediction/): unit tests of the allreduce cost model, the named allreduce
# curves (experiments/interconnects.yaml), the overlap simulation, the report-folder input, the
# interval's coverage on simulated studies and the leave-one-model-out self-check.
set(DDPSCALE_TEST_LIBS ddpscale_prediction)
ddpscale_unit_test(test_prediction test_prediction.cpp test_prediction_self_check.cpp test_interconnect_curves.cpp test_node_sharing.cpp
                   test_prediction_trust.cpp)
# For the repository's experiments/networks.yaml.
target_compile_definitions(test_prediction PRIVATE DDPSCALE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# The README's quick study (2 CPU ranks, sweep_quick_study's fixture) predicted from its
# 1-rank half: the self-check table and the predictions, checked for structure and sanity.
add_test(NAME predict_quick_study
         COMMAND sh -c "$<TARGET_FILE:ddpscale> predict ${CMAKE_BINARY_DIR}/studies/quick --gpus 4 --draws 500 --out ${CMAKE_BINARY_DIR}/studies/quick-predict && python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_prediction.py ${CMAKE_BINARY_DIR}/studies/quick ${CMAKE_BINARY_DIR}/studies/quick-predict 1")
set_tests_properties(predict_quick_study PROPERTIES LABELS "study;predict" FIXTURES_REQUIRED quick_study TIMEOUT 120)

# `report --predict` on the same quick study and targets as `predict` (4 GPUs, and 2 nodes of
# 2 over a named network from the repository's networks file): the section exists and its
# numbers are predict's (check_report_prediction.py). Then 2 nodes over the quick study's own
# commbench.csv standing in for a curve measured between nodes (--network-commbench).
set(DDPSCALE_PREDICT_TARGETS "--gpus 4 --nodes 2 --gpus-per-node 2 --network eth-25 --networks ${PROJECT_SOURCE_DIR}/experiments/networks.yaml --draws 500")
set(DDPSCALE_PREDICT_SPEC "gpus=4;nodes=2;gpus-per-node=2;network=eth-25;networks=${PROJECT_SOURCE_DIR}/experiments/networks.yaml;draws=500")
add_test(NAME predict_in_report
         COMMAND sh -c "set -e; q=${CMAKE_BINARY_DIR}/studies/quick; rm -rf $q-predict-nodes $q-report-predict $q-predict-curve
$<TARGET_FILE:ddpscale> predict $q ${DDPSCALE_PREDICT_TARGETS} --out $q-predict-nodes
$<TARGET_FILE:ddpscale> report $q --out $q-report-predict --predict '${DDPSCALE_PREDICT_SPEC}'
python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_report_prediction.py $q-report-predict $q-predict-nodes
$<TARGET_FILE:ddpscale> predict $q --nodes 2 --gpus-per-node 2 --network-commbench $q-report-predict/commbench.csv --draws 500 --no-plots --out $q-predict-curve
grep -q 'network between nodes: measured between 2 nodes' $q-predict-curve/predict.md
python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_prediction.py $q $q-predict-curve 1")
set_tests_properties(predict_in_report PROPERTIES LABELS "study;predict;report" FIXTURES_REQUIRED quick_study TIMEOUT 300)

# Usage errors say what to give: an unknown network name lists the file's names; a bad
# --predict key lists the keys.
add_test(NAME predict_network_name_unknown
         COMMAND $<TARGET_FILE:ddpscale> predict ${CMAKE_SOURCE_DIR}/docs/results/h100x2/seed-study --nodes 2
                 --network token-ring --networks ${PROJECT_SOURCE_DIR}/experiments/networks.yaml --out ${CMAKE_BINARY_DIR}/predict-unused)
set_tests_properties(predict_network_name_unknown PROPERTIES LABELS "predict" PASS_REGULAR_EXPRESSION
                     "network 'token-ring' is not in .*networks.yaml \\(it has: ib-ndr-400, ")
add_test(NAME report_predict_bad_key
         COMMAND $<TARGET_FILE:ddpscale> report ${CMAKE_SOURCE_DIR}/docs/results/h100x2/seed-study --predict "gpus=4;speed=9"
                 --out ${CMAKE_BINARY_DIR}/report-unused)
set_tests_properties(report_predict_bad_key PROPERTIES LABELS "predict" PASS_REGULAR_EXPRESSION
                     "--predict: unknown key 'speed' \\(gpus, nodes, gpus-per-node, network, networks, network-commbench, allreduce, interconnects, draws\\)")

# A study of one rank (tests/specs/one-gpu.yaml, started without mpirun as a one-GPU user
# starts it) has no allreduce curve of its own: predicted to 2, 4 and 8 GPUs from a named
# curve (experiments/interconnects.yaml) and from a commbench.csv, in predict and in the
# report; tests/check_allreduce_prediction.py recomputes each allreduce time from the curve.
# Without --allreduce the error says why the study has no curve and names the curves.
set(ddpscale_one_gpu ${CMAKE_BINARY_DIR}/studies/one-gpu)
set(ddpscale_h100_curve ${PROJECT_SOURCE_DIR}/docs/results/h100x2/seed-study/commbench.csv)
set(ddpscale_interconnects ${PROJECT_SOURCE_DIR}/experiments/interconnects.yaml)
add_test(NAME predict_one_gpu_study_sweep
         COMMAND sh -c "rm -rf ${ddpscale_one_gpu} && $<TARGET_FILE:ddpscale> sweep ${CMAKE_CURRENT_SOURCE_DIR}/specs/one-gpu.yaml --out ${ddpscale_one_gpu}")
set_tests_properties(predict_one_gpu_study_sweep PROPERTIES LABELS "study;predict" FIXTURES_SETUP one_gpu_study
                     TIMEOUT 300 ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
add_test(NAME predict_one_gpu_named_curve
         COMMAND sh -c "set -e; rm -rf ${ddpscale_one_gpu}-named
$<TARGET_FILE:ddpscale> predict ${ddpscale_one_gpu} --gpus 2,4,8 --allreduce h100-nvlink-2gpu --interconnects ${ddpscale_interconnects} --draws 500 --no-plots --out ${ddpscale_one_gpu}-named
python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_allreduce_prediction.py ${ddpscale_one_gpu}-named ${ddpscale_h100_curve} 2,4,8 'h100-nvlink-2gpu: 2x NVIDIA H100 80GB HBM3 in one node'
grep -q 'calibrated by the cost of sharing a node, [0-9]* model errors measured on 2 GPUs of the named interconnect' ${ddpscale_one_gpu}-named/predict.md
! cut -d, -f24 ${ddpscale_one_gpu}-named/predict.csv | tail -n +2 | grep -qv true")
set_tests_properties(predict_one_gpu_named_curve PROPERTIES LABELS "predict" FIXTURES_REQUIRED one_gpu_study TIMEOUT 120)
# The same study from a test entry with node-sharing costs measured at 2 and 4 GPUs
# (tests/data/interconnects-per-gpu-count.yaml): each target is calibrated by the cost at its
# own count, 4 GPUs by the 4-GPU one, 8 by the one carried from both; checked against the
# model-only prediction from the same curve times (1 + each cost's median).
set(ddpscale_per_count ${CMAKE_CURRENT_SOURCE_DIR}/data/interconnects-per-gpu-count.yaml)
add_test(NAME predict_one_gpu_node_sharing_per_count
         COMMAND sh -c "set -e; rm -rf ${ddpscale_one_gpu}-per-count ${ddpscale_one_gpu}-curve-only
$<TARGET_FILE:ddpscale> predict ${ddpscale_one_gpu} --gpus 2,4,8 --allreduce test-costs-at-2-and-4 --interconnects ${ddpscale_per_count} --draws 500 --no-plots --out ${ddpscale_one_gpu}-per-count
$<TARGET_FILE:ddpscale> predict ${ddpscale_one_gpu} --gpus 2,4,8 --allreduce test-curve-only --interconnects ${ddpscale_per_count} --draws 500 --no-plots --out ${ddpscale_one_gpu}-curve-only
python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_node_sharing_per_count.py ${ddpscale_one_gpu}-per-count ${ddpscale_one_gpu}-curve-only ${ddpscale_per_count} test-costs-at-2-and-4")
set_tests_properties(predict_one_gpu_node_sharing_per_count PROPERTIES LABELS "predict" FIXTURES_REQUIRED one_gpu_study
                     TIMEOUT 120)
# scripts/check-node-sharing-model.py on synthetic entries with costs at 1, 2 and 4 GPUs: the
# carried cost, its error against the held-out count and the coverage, worked by hand.
add_test(NAME node_sharing_model_script
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_node_sharing_model.py ${CMAKE_BINARY_DIR}/node-sharing-model)
set_tests_properties(node_sharing_model_script PROPERTIES LABELS "predict" TIMEOUT 60)
add_test(NAME predict_one_gpu_csv_curve
         COMMAND sh -c "set -e; rm -rf ${ddpscale_one_gpu}-csv
$<TARGET_FILE:ddpscale> predict ${ddpscale_one_gpu} --gpus 2,4,8 --allreduce ${ddpscale_h100_curve} --draws 500 --no-plots --out ${ddpscale_one_gpu}-csv
python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_allreduce_prediction.py ${ddpscale_one_gpu}-csv ${ddpscale_h100_curve} 2,4,8 'commbench.csv measured on 2 GPUs (${ddpscale_h100_curve})'
grep -q 'model only: the study measured no N-GPU configuration and the allreduce curve carries no cost of sharing a node' ${ddpscale_one_gpu}-csv/predict.md")
set_tests_properties(predict_one_gpu_csv_curve PROPERTIES LABELS "predict" FIXTURES_REQUIRED one_gpu_study TIMEOUT 120)
add_test(NAME report_predict_one_gpu_named_curve
         COMMAND sh -c "set -e; rm -rf ${ddpscale_one_gpu}-report
$<TARGET_FILE:ddpscale> report ${ddpscale_one_gpu} --no-plots --out ${ddpscale_one_gpu}-report --predict 'gpus=2,4,8;allreduce=h100-nvlink-2gpu;interconnects=${ddpscale_interconnects};draws=500'
python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_allreduce_prediction.py ${ddpscale_one_gpu}-report ${ddpscale_h100_curve} 2,4,8 'h100-nvlink-2gpu: 2x NVIDIA H100 80GB HBM3 in one node'")
set_tests_properties(report_predict_one_gpu_named_curve PROPERTIES LABELS "predict;report" FIXTURES_REQUIRED one_gpu_study
                     TIMEOUT 120)
add_test(NAME predict_one_gpu_without_curve
         COMMAND $<TARGET_FILE:ddpscale> predict ${ddpscale_one_gpu} --interconnects ${ddpscale_interconnects}
                 --out ${CMAKE_BINARY_DIR}/predict-unused)
set_tests_properties(predict_one_gpu_without_curve PROPERTIES LABELS "predict" FIXTURES_REQUIRED one_gpu_study TIMEOUT 60
                     PASS_REGULAR_EXPRESSION "one-gpu measured 1 rank only, and a sweep measures the allreduce curve only on 2 or more ranks, so the study has none to predict the communication from: give one with --allreduce NAME \\(in [^ ]*interconnects.yaml: h200-nvlink-2gpu, h200-nvlink-4gpu, h100-nvlink-2gpu\\) or --allreduce FILE.csv")

# scripts/check-one-gpu-prediction.py (docs/benchmarks.md, "Prediction accuracy") on the quick
# study given as two leases: the rows it counts and the profile it pools.
add_test(NAME predict_one_gpu_check_script
         COMMAND sh -c "rm -rf ${CMAKE_BINARY_DIR}/studies/one-gpu-check && mkdir -p ${CMAKE_BINARY_DIR}/studies/one-gpu-check && python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_one_gpu_prediction.py $<TARGET_FILE:ddpscale> ${CMAKE_BINARY_DIR}/studies/quick ${CMAKE_BINARY_DIR}/studies/one-gpu-check")
set_tests_properties(predict_one_gpu_check_script PROPERTIES LABELS "predict" FIXTURES_REQUIRED quick_study TIMEOUT 120)
