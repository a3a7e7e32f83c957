#!/usr/bin/env bash
# On the GPU machine: ddpscale's eager trainer against PyTorch's own DDP on the seed's MLPs
# (experiments/reference-comparison.yaml and scripts/gpu/pytorch_ddp_reference.py), paired.
# Eager steps are host work and the host's speed drifts within minutes (docs/benchmarks.md,
# 2026-11-23), so both sides run in ROUNDS rounds (default 4), back to back within a round,
# in the order ddpscale, PyTorch | PyTorch, ddpscale | ... so a steady drift favours neither;
# scripts/analysis/paired_ratio.py then compares them round by round. About 80 s per round on 2 H200s.
# The cost of phase timing is scripts/gpu/phase-timing-overhead.sh.
# Writes logs and rounds to ${OUT:-bench-out}/; studies to ${STUDIES:-studies}/reference-comparison/.
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
out="${OUT:-$DDPSCALE_ROOT/bench-out}"
mkdir -p "$out"
[ "$DDPSCALE_MODE" = gpu ] || { log "this script needs the GPU machine"; exit 1; }
study="${STUDIES:-$DDPSCALE_ROOT/studies}/reference-comparison"
rounds="${ROUNDS:-4}"

ddpscale_side() {
  local round="$1"
  log "round $round: ddpscale (experiments/reference-comparison.yaml)"
  "${MPIRUN[@]}" -np 2 "$DDPSCALE_BIN" sweep experiments/reference-comparison.yaml --out "$study/round-$round" \
    --overwrite 2>&1 | tee "$out/reference-round-$round/ddpscale-sweep.txt"
  "$DDPSCALE_BIN" report "$study/round-$round" --no-plots --out "$out/reference-round-$round/report" >/dev/null
}

pytorch_side() {
  local round="$1"
  log "round $round: PyTorch DDP on 1 GPU, then 2"
  python3 scripts/gpu/pytorch_ddp_reference.py 2>&1 | tee "$out/reference-round-$round/pytorch-1gpu.jsonl"
  python3 -m torch.distributed.run --standalone --nproc_per_node 2 scripts/gpu/pytorch_ddp_reference.py \
    2>&1 | grep '^{' | tee "$out/reference-round-$round/pytorch-2gpu.jsonl"
}

for round in $(seq 1 "$rounds"); do
  mkdir -p "$out/reference-round-$round"
  if ((round % 2 == 1)); then
    ddpscale_side "$round"
    pytorch_side "$round"
  else
    pytorch_side "$round"
    ddpscale_side "$round"
  fi
done
python3 "$DDPSCALE_ROOT/scripts/analysis/paired_ratio.py" "$out"/reference-round-* | tee "$out/reference-paired.md"
