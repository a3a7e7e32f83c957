#!/usr/bin/env bash
# Call 1: build this tree, GPU tests, kernel tables, then a paired trial old vs new.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/r
date -u > $OUT/r/when.txt
bash scripts/gpu-test.sh > $OUT/r/gpu-test-summary.txt 2>&1; echo "gpu-test rc=$?" >> $OUT/r/gpu-test-summary.txt
cp build-gpu/gpu-tests.log $OUT/r/ 2>/dev/null
cp build-gpu/trainer/ddpscale $OUT/ddpscale-new 2>/dev/null
tail -5 $OUT/r/gpu-test-summary.txt
if [ -x build-gpu/trainer/ddpscale ]; then
  ROWS="mlp-medium:8:graph mlp-large:128:graph lstm:32:graph gru:128:graph mlp-large:8:eager lstm:32:eager" \
    OUT=$OUT/r bash scripts/gpu/kernel-compare.sh 2>&1 | tail -20
  date -u >> $OUT/r/when.txt
  OLD=build-carry/ddpscale-7143f4c NEW=build-gpu/trainer/ddpscale ROWS="mlp-medium:8 mlp-large:8 mlp-large:128 lstm:32 gru:128" \
    STOP=$((480 - SECONDS)) timeout $((580 - SECONDS)) bash docs/results/h200/recurrent-layout-trial/trial.sh > $OUT/r/trial-graph.txt 2>&1
  date -u >> $OUT/r/when.txt
fi
tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
