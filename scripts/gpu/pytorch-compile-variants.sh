#!/usr/bin/env bash
# On the GPU machine: torch.compile's two modes on the PyTorch-comparison grid, recorded beside the
# paired comparison (scripts/gpu/gpu-benchmark.sh), which leaves them out because compiling
# takes minutes. One process per mode, each cut after COMPILE_SECONDS (default 240): what
# finished is in $OUT/pytorch-compile-<mode>.jsonl, with compile (warm-up) seconds per run.
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
[ "$DDPSCALE_MODE" = gpu ] || { log "torch.compile's CUDA modes need a GPU (none here)"; exit 1; }
out="${OUT:?set OUT to the folder for the results}"
rows=("${COMPARISON_ROWS[@]}")
for mode in default reduce-overhead; do
  log "torch.compile mode $mode on ${#rows[@]} rows (cut after ${COMPILE_SECONDS:-240} s)"
  timeout "${COMPILE_SECONDS:-240}" python3 "$DDPSCALE_ROOT/scripts/gpu/pytorch_ddp_reference.py" --rows "${rows[@]}" \
    --variant "compile-$mode" --runs "${COMPILE_RUNS:-1}" >"$out/pytorch-compile-$mode.jsonl" \
    2>"$out/pytorch-compile-$mode.err" || log "  compile-$mode stopped (exit $?): $(grep -c '^{' "$out/pytorch-compile-$mode.jsonl") rows done"
done
