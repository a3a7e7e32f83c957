#!/usr/bin/env bash
# Device call 1 (nvidia-h200): build HEAD and run the GPU tests, keep the binary, then the
# eager-modes trial for the rest of the call. Run from the repository root: bash THIS_FILE
set -uo pipefail
here=docs/results/h100/eager-modes-trial
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
{ date -u; nproc; cat /proc/loadavg; top -bn1 | head -25; nvidia-smi -q -d CLOCK,PERFORMANCE | head -60
  command -v perf setarch taskset; } >"$OUT/host.txt" 2>&1
bash scripts/gpu-test.sh >"$OUT/gpu-test.txt" 2>&1; echo "gpu-test rc $?" >>"$OUT/gpu-test.txt"
cp build-gpu/gpu-tests.log "$OUT/" 2>/dev/null
cp build-gpu/trainer/ddpscale "$OUT/ddpscale-$(git rev-parse --short HEAD)"
tail -3 "$OUT/gpu-test.txt"
python3 $here/trial.py build-gpu/trainer/ddpscale $((570 - SECONDS)) >"$OUT/trial.txt" 2>"$OUT/trial.err"
tail -5 "$OUT/trial.txt"
