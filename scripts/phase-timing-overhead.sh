#!/usr/bin/env bash
# What phase timing costs: the same training with and without --no-phase-timing, launched
# in ABBA order (on, off, off, on, ...) so that a slow drift of the machine falls on both
# arms alike, several launches per arm because launches differ more than runs do. Two
# cases: the shortest step (mlp-medium, batch 8, 1 GPU: the per-step event records weigh
# most there) and the issue's case (mlp-large, batch 128, 2 GPUs).
# Writes every run line to $OUT/overhead-runs.txt and the verdict to $OUT/overhead-summary.txt.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
out="${OUT:-$DDPSCALE_ROOT/bench-out}"
mkdir -p "$out"
blocks="${OVERHEAD_BLOCKS:-4}"        # ABBA blocks per case: 2 x blocks launches per arm
runs="${OVERHEAD_RUNS:-10}" steps="${OVERHEAD_STEPS:-200}"
: >"$out/overhead-runs.txt"

launch() {  # launch CASE MODEL BATCH RANKS on|off
  local flag=()
  [ "$5" = off ] && flag=(--no-phase-timing)
  "${MPIRUN[@]}" -np "$4" "$DDPSCALE_BIN" train -m "$2" -b "$3" --runs "$runs" --warmup 10 --steps "$steps" "${flag[@]}" \
    2>&1 | grep '^run ' | sed "s/^/$1 timing-$5 /" >>"$out/overhead-runs.txt"
}

for case in "mlp-medium 8 1" "mlp-large 128 2"; do
  read -r model batch ranks <<<"$case"
  [ "$ranks" -le "$NRANKS" ] || { log "skipping $model on $ranks ranks: only $NRANKS here"; continue; }
  name="${model}_b${batch}_w${ranks}"
  log "phase-timing overhead: $name, $blocks ABBA blocks of $runs runs x $steps steps"
  for ((i = 0; i < blocks; i++)); do
    for arm in on off off on; do launch "$name" "$model" "$batch" "$ranks" "$arm"; done
  done
done
python3 "$DDPSCALE_ROOT/scripts/overhead_stats.py" "$out/overhead-runs.txt" | tee "$out/overhead-summary.txt"
