#!/usr/bin/env bash
# On the GPU machine: ddpscale against PyTorch, paired round by round.
#   GPUS=1 (default): every seed model at two batch sizes (experiments/pytorch-comparison-1gpu.yaml),
#     ddpscale eager and --exec graph beside PyTorch's "eager" (fused Adam, set_to_none) and
#     "graph" (the whole step in torch.cuda.graph) from scripts/gpu/pytorch_ddp_reference.py.
#     Needs a build with -DDDPSCALE_CUDA_GRAPHS=ON.
#   GPUS=2: the seed's MLPs on 1 and 2 GPUs (experiments/reference-comparison.yaml), eager,
#     against PyTorch's DDP under torchrun.
# Eager steps are host work and the host's speed drifts within minutes (docs/benchmarks.md,
# 2026-11-23), so both sides run in rounds, back to back within a round, in the order
# ddpscale, PyTorch | PyTorch, ddpscale | ... so a steady drift favours neither;
# scripts/analysis/paired_ratio.py then compares them round by round.
# ROUNDS (default 4) rounds at most; no round starts after DEADLINE seconds (default 480,
# for a 10-minute device call with the build done), so the call ends with a verdict on the
# rounds that finished. Writes rounds and $OUT/reference-paired.md to ${OUT:-bench-out}/.
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
out="${OUT:-$DDPSCALE_ROOT/bench-out}"
mkdir -p "$out"
[ "$DDPSCALE_MODE" = gpu ] || { log "this script needs the GPU machine"; exit 1; }
gpus="${GPUS:-1}"
rounds="${ROUNDS:-4}"
deadline=$((SECONDS + ${DEADLINE:-480}))
studies="${STUDIES:-$DDPSCALE_ROOT/studies}"
if [ "$gpus" = 1 ]; then
  # SPEC and ROWS (MODEL:BATCH ...) narrow the grid, e.g. to settle one model's rows with
  # more rounds; ROWS must name exactly the spec's configurations. VARIANTS (default
  # "eager graph") picks PyTorch's variants to match the spec's exec modes.
  spec="${SPEC:-experiments/pytorch-comparison-1gpu.yaml}"
  study="$studies/pytorch-comparison-1gpu"
  read -r -a rows <<<"${ROWS:-${COMPARISON_ROWS[*]}}"
else
  spec=experiments/reference-comparison.yaml
  study="$studies/reference-comparison"
fi

ddpscale_side() {
  local round="$1"
  log "round $round: ddpscale ($spec)"
  "${MPIRUN[@]}" -np "$gpus" "$DDPSCALE_BIN" sweep "$spec" --out "$study/round-$round" \
    --overwrite >"$out/round-$round/ddpscale-sweep.txt" 2>&1
  "$DDPSCALE_BIN" report "$study/round-$round" --no-plots --out "$out/round-$round/report" >/dev/null
}

pytorch_side() {
  local round="$1"
  if [ "$gpus" = 1 ]; then
    log "round $round: PyTorch eager and graph on 1 GPU"
    python3 "$DDPSCALE_ROOT/scripts/gpu/pytorch_ddp_reference.py" --rows "${rows[@]}" --variant ${VARIANTS:-eager graph} \
      >"$out/round-$round/pytorch-1gpu.jsonl" 2>"$out/round-$round/pytorch-1gpu.err"
  else
    log "round $round: PyTorch DDP on 1 GPU, then 2"
    python3 "$DDPSCALE_ROOT/scripts/gpu/pytorch_ddp_reference.py" >"$out/round-$round/pytorch-1gpu.jsonl"
    python3 -m torch.distributed.run --standalone --nproc_per_node 2 "$DDPSCALE_ROOT/scripts/gpu/pytorch_ddp_reference.py" \
      2>&1 | grep '^{' >"$out/round-$round/pytorch-2gpu.jsonl"
  fi
}

finished=()
last=0  # the last round's seconds: a round that would end past the deadline is not started
for round in $(seq 1 "$rounds"); do
  if ((SECONDS + last >= deadline)); then
    log "deadline: stopping after $((round - 1)) rounds"
    break
  fi
  mkdir -p "$out/round-$round"
  start=$SECONDS
  if ((round % 2 == 1)); then
    ddpscale_side "$round"
    pytorch_side "$round"
  else
    pytorch_side "$round"
    ddpscale_side "$round"
  fi
  finished+=("$out/round-$round")
  last=$((SECONDS - start))
  log "round $round took $last s"
done
python3 "$DDPSCALE_ROOT/scripts/analysis/paired_ratio.py" "${finished[@]}" | tee "$out/reference-paired.md"
