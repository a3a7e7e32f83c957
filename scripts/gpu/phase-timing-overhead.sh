#!/usr/bin/env bash
# What phase timing costs. Each launch runs `ddpscale train --alternate-phase-timing`, whose
# runs are timed in the pattern on, off, off, on (repeated): every block of 4 neighbouring
# runs compares the two arms within about a second, so the machine's drift (single runs of
# a 1 ms step vary by +-25% over seconds on the GPU machine) falls on both arms alike.
# Several launches per case, because launches differ too. Two cases: the shortest step
# (mlp-medium, batch 8, 1 GPU: the per-step event records weigh most there) and the
# issue's case (mlp-large, batch 128, 2 GPUs).
# Writes every run line to $OUT/overhead-runs.txt and the verdict to $OUT/overhead-summary.txt.
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
out="${OUT:-$DDPSCALE_ROOT/bench-out}"
mkdir -p "$out"
launches="${OVERHEAD_LAUNCHES:-3}"
runs="${OVERHEAD_RUNS:-40}" steps="${OVERHEAD_STEPS:-200}"
[ $((runs % 4)) -eq 0 ] || { log "OVERHEAD_RUNS must be a multiple of 4 (blocks of on, off, off, on)"; exit 2; }
: >"$out/overhead-runs.txt"

for case in "mlp-medium 8 1" "mlp-large 128 2"; do
  read -r model batch ranks <<<"$case"
  [ "$ranks" -le "$NRANKS" ] || { log "skipping $model on $ranks ranks: only $NRANKS here"; continue; }
  name="${model}_b${batch}_w${ranks}"
  log "phase-timing overhead: $name, $launches launches of $runs alternating runs x $steps steps"
  for ((i = 0; i < launches; i++)); do
    "${MPIRUN[@]}" -np "$ranks" "$DDPSCALE_BIN" train -m "$model" -b "$batch" --runs "$runs" --warmup 10 \
      --steps "$steps" --alternate-phase-timing 2>&1 | grep '^run ' | sed "s/^/$name launch$i /" >>"$out/overhead-runs.txt"
  done
done
python3 "$DDPSCALE_ROOT/scripts/analysis/overhead_stats.py" "$out/overhead-runs.txt" | tee "$out/overhead-summary.txt"
