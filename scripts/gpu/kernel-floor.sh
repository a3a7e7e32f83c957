#!/usr/bin/env bash
# On the GPU machine: what the GPU-busy floor of a step is made of, kernel by kernel.
# For mlp-large at batch 128 (the configuration whose floor keeps CUDA graphs below 5x
# PyTorch and 90% 2-GPU efficiency) and mlp-medium at batch 8, it trains on 1 and 2 GPUs
# with --gpu-busy-steps and --gpu-kernels, then prints each rank's largest kernels.
#   OUT=/tmp/kf bash scripts/gpu/kernel-floor.sh     # tables in $OUT/kernels/*.csv
# Needs a build with -DDDPSCALE_CUDA_GRAPHS=ON (the campaign's build has it).
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
[ "$DDPSCALE_MODE" = gpu ] || { log "the kernel floor needs GPUs (none here)"; exit 1; }
tables="${OUT:?set OUT to the folder for the kernel tables}/kernels"
mkdir -p "$tables"

# profile NAME RANKS TRAIN-ARGS...: 3 runs of 10 + 100 steps, then 20 profiled steps each.
profile() {
  local name="$1" ranks="$2"
  shift 2
  log "kernel floor: $name"
  "${MPIRUN[@]}" -np "$ranks" "$DDPSCALE_BIN" train --runs 3 --warmup 10 --steps 100 \
    --gpu-busy-steps 20 --gpu-kernels "$tables/$name" "$@" | tee "$tables/$name.log"
}

for exec_mode in graph eager; do
  for ranks in 1 2; do
    profile "mlp-large-b128-$exec_mode-${ranks}gpu" "$ranks" -m mlp-large -b 128 --exec "$exec_mode"
  done
done
profile mlp-large-b128-graph-2gpu-bf16-allreduce 2 -m mlp-large -b 128 --exec graph --allreduce-dtype bfloat16
profile mlp-medium-b8-graph-1gpu 1 -m mlp-medium -b 8 --exec graph

# The largest kernels of each table: name shortened to 90 characters, us per step, share.
python3 - "$tables" <<'EOF'
import csv, pathlib, sys
for table in sorted(pathlib.Path(sys.argv[1]).glob("*.csv")):
    rows = list(csv.DictReader(table.open()))
    total = sum(float(r["us_per_step"]) for r in rows)
    print(f"\n{table.name}: {len(rows)} kernels, {total:.1f} us of kernel time per step")
    for r in rows[:12]:
        print(f"  {float(r['us_per_step']):8.1f} us  {float(r['calls_per_step']):5.1f} calls  "
              f"{100 * float(r['share_of_busy']):5.1f}%  {r['kernel'][:90]}")
EOF
