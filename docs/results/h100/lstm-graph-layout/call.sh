#!/usr/bin/env bash
# The device call that layout.py waits for (not run yet): which of ddpscale's two differences
# in the cuDNN call moves RNN_blockPersist_fp_LSTM, then ddpscale's own lstm rows in graph mode
# beside PyTorch's on the same lease. Run from the repository root on the GPU machine:
#   bash docs/results/h100/lstm-graph-layout/call.sh      (writes under $OUT)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
python3 docs/results/h100/lstm-graph-layout/layout.py 200 lstm:128 lstm:32 >"$OUT/layout.txt" 2>"$OUT/layout.err"
cat "$OUT/layout.txt"
SPEC=experiments/pytorch-comparison-graph.yaml VARIANTS=graph OUT=$OUT/graph ROUNDS=30 \
  DEADLINE=$((540 - SECONDS)) bash scripts/gpu/gpu-benchmark.sh >"$OUT/graph.log" 2>&1
tail -16 "$OUT/graph/reference-paired.md"
