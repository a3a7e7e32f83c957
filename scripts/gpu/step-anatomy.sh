#!/usr/bin/env bash
# On the GPU machine: what each step of the PyTorch-comparison grid launches, and
# what the host pays per launch. For every (model, batch) row and exec mode, one binary
# trains 3 runs of 10 + 100 steps, then profiles 20 more steps (--gpu-busy-steps) and writes
# its kernel table (--gpu-kernels). scripts/analysis/step_anatomy.py then puts kernels per
# step, GPU-busy time, step time and step time per launch side by side.
#   OUT=/tmp/a bash scripts/gpu/step-anatomy.sh                 # this checkout's build
#   OUT=/tmp/a LABEL=before DDPSCALE_BIN=/tmp/old/ddpscale bash scripts/gpu/step-anatomy.sh
# Tables and logs go to $OUT/anatomy/$LABEL/. MODES (default "eager graph") picks the modes;
# graph needs a build with -DDDPSCALE_CUDA_GRAPHS=ON.
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
[ "$DDPSCALE_MODE" = gpu ] || { log "the step anatomy needs a GPU (none here)"; exit 1; }
label="${LABEL:-$(git -C "$DDPSCALE_ROOT" rev-parse --short HEAD 2>/dev/null || echo build)}"
tables="${OUT:?set OUT to the folder for the tables}/anatomy/$label"
mkdir -p "$tables"

for mode in ${MODES:-eager graph}; do
  for row in "${COMPARISON_ROWS[@]}"; do
    model="${row%%:*}" batch="${row##*:}"
    name="$model-b$batch-$mode"
    log "step anatomy ($label): $name"
    "$DDPSCALE_BIN" train -m "$model" -b "$batch" --exec "$mode" --runs 3 --warmup 10 --steps 100 \
      --gpu-busy-steps 20 --gpu-kernels "$tables/$name" >"$tables/$name.log" 2>&1 ||
      log "  $name failed: see $tables/$name.log"
  done
done
python3 "$DDPSCALE_ROOT/scripts/analysis/step_anatomy.py" "$tables" | tee "$tables/anatomy.md"
