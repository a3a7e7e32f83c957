#!/usr/bin/env bash
# Call 6: build this tree, GPU tests, kernel tables, then a paired graph trial against cc17455.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/r
date -u > $OUT/r/when.txt; nvidia-smi -L >> $OUT/r/when.txt
bash scripts/gpu-test.sh > $OUT/r/gpu-test-summary.txt 2>&1; echo "gpu-test rc=$?" >> $OUT/r/gpu-test-summary.txt
cp build-gpu/gpu-tests.log $OUT/r/ 2>/dev/null
cp build-gpu/trainer/ddpscale $OUT/ddpscale-new 2>/dev/null
tail -8 $OUT/r/gpu-test-summary.txt
if [ -x build-gpu/trainer/ddpscale ]; then
  ROWS="transformer:128:graph mlp-large:8:graph" OUT=$OUT/r timeout 150 bash scripts/gpu/kernel-compare.sh 2>&1 | tail -8
  date -u >> $OUT/r/when.txt
  OLD=build-carry/ddpscale-cc17455 NEW=build-gpu/trainer/ddpscale ROWS="mlp-medium:8 mlp-large:8 transformer:128" \
    STOP=$((470 - SECONDS)) timeout $((575 - SECONDS)) bash docs/results/h200/recurrent-layout-trial/trial.sh > $OUT/r/trial-graph.txt 2>&1
  date -u >> $OUT/r/when.txt
fi
tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
