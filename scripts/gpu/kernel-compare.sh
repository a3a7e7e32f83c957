#!/usr/bin/env bash
# On the GPU machine: ddpscale's step and PyTorch's, kernel by kernel. For each
# row, `ddpscale train --gpu-kernels` and scripts/gpu/pytorch_ddp_reference.py --kernels
# profile 20 steps after 3 runs of 10 + 100 steps; scripts/analysis/kernel_side_by_side.py
# puts the two tables side by side in $OUT/kernels/<row>.md, and scripts/analysis/kernel_launches.py
# the two sides' launch shapes (grid, block, registers, shared memory), from the profiled steps'
# Chrome traces, in $OUT/kernels/<row>-launches.md.
#   OUT=/tmp/k bash scripts/gpu/kernel-compare.sh      # mlp-large b128 graph and more
# ROWS overrides the rows, each MODEL:BATCH:MODE with MODE eager or graph (PyTorch's variant
# of the same name). Graph rows need a build with -DDDPSCALE_CUDA_GRAPHS=ON. A MODEL named in
# MANIFEST (what scripts/export_model.py --manifest writes) is that TorchScript file, with its
# input and classes:
#   MANIFEST=models-out/real/manifest.json ROWS="resnet50:32:eager" OUT=/tmp/k bash scripts/gpu/kernel-compare.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
[ "$DDPSCALE_MODE" = gpu ] || { log "the kernel comparison needs a GPU (none here)"; exit 1; }
tables="${OUT:?set OUT to the folder for the tables}/kernels"
mkdir -p "$tables"
read -r -a rows <<<"${ROWS:-mlp-large:128:graph mlp-medium:8:graph transformer:32:eager lstm:32:eager}"
for row in "${rows[@]}"; do
  IFS=: read -r model batch mode <<<"$row"
  name="$model-b$batch-$mode"
  log "kernels side by side: $name"
  # A manifest's model: its file and the flags that describe its input (one per line).
  model_flags=("$model")
  if [ -n "${MANIFEST:-}" ]; then
    mapfile -t found < <(manifest_model_flags "$MANIFEST" "$model")
    [ ${#found[@]} -eq 0 ] || model_flags=("${found[@]}")
  fi
  "$DDPSCALE_BIN" train -m "${model_flags[@]}" -b "$batch" --exec "$mode" --runs 3 --warmup 10 --steps 100 \
    --gpu-busy-steps 20 --gpu-kernels "$tables/ddpscale-$name" --gpu-trace "$tables/ddpscale-$name" \
    >"$tables/ddpscale-$name.log" 2>&1
  python3 "$DDPSCALE_ROOT/scripts/gpu/pytorch_ddp_reference.py" --rows "${model_flags[0]}:$batch" \
    "${model_flags[@]:1}" --variant "$mode" --kernels "$tables/pytorch" --trace \
    >"$tables/pytorch-$name.jsonl" 2>"$tables/pytorch-$name.err"
  python3 "$DDPSCALE_ROOT/scripts/analysis/kernel_side_by_side.py" "$tables/ddpscale-$name.rank0.csv" \
    "$tables/pytorch-$model-b$batch-$mode-float32.csv" >"$tables/$name.md"
  python3 "$DDPSCALE_ROOT/scripts/analysis/kernel_launches.py" --steps 20 "$tables/ddpscale-$name.rank0.json" \
    "$tables/pytorch-$model-b$batch-$mode-float32.json" >"$tables/$name-launches.md"
  tail -3 "$tables/$name.md" >&2
done
