#!/usr/bin/env bash
# On the GPU machine: ddpscale's trainer against PyTorch's own DDP, side by side, on the
# seed's MLPs (experiments/reference-comparison.yaml). The cost of phase timing is
# scripts/phase-timing-overhead.sh.
# Writes logs to ${OUT:-bench-out}/.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
out="${OUT:-$DDPSCALE_ROOT/bench-out}"
mkdir -p "$out"
[ "$DDPSCALE_MODE" = gpu ] || { log "this script needs the GPU machine"; exit 1; }
study="${STUDIES:-$DDPSCALE_ROOT/studies}/reference-comparison"

log "ddpscale: reference comparison sweep"
"${MPIRUN[@]}" -np 2 "$DDPSCALE_BIN" sweep experiments/reference-comparison.yaml --out "$study" --overwrite \
  2>&1 | tee "$out/ddpscale-reference-sweep.txt"

log "PyTorch DDP: 1 GPU"
python3 experiments/pytorch_ddp_reference.py 2>&1 | tee "$out/pytorch-1gpu.jsonl"
log "PyTorch DDP: 2 GPUs"
python3 -m torch.distributed.run --standalone --nproc_per_node 2 experiments/pytorch_ddp_reference.py \
  2>&1 | grep '^{' | tee "$out/pytorch-2gpu.jsonl"
