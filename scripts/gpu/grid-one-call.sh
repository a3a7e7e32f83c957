#!/usr/bin/env bash
# Issue 19's whole grid in one device call: ddpscale against PyTorch on 1 GPU, graph then eager,
# every row, processes taking turns (take_turns.py --start-together), judged by paired_ratio.py.
#
#   bash scripts/gpu/grid-one-call.sh DDPSCALE_BINARY OUT_DIR
#
# Why this shape: a device call lasts at most 600 s, and one row's set of fresh processes
# spent 61-81% of its wall starting and stopping them and in turn 0 (docs/benchmarks.md,
# ninth session). --start-together pays those once per set for all ten rows. The graph rows
# need few sets (their sets agree within 0.5%), so they run first, a fixed number of sets, one
# per process shift; the eager rows (host-bound, their sets spread by about 12%) get the rest
# of the call, as many sets as fit before EAGER_DEADLINE_S.
#
# Environment (defaults in brackets):
#   GRAPH_SETS [4]  GRAPH_TURNS [5]  EAGER_TURNS [5]  EAGER_VARIANTS [eager-caller-thread]
#   GRAPH_STEPS [100 lstm=40 gru=40 transformer=20]  EAGER_STEPS [100 lstm=20 gru=20 transformer=10]
#   EAGER_DEADLINE_S [550]: no eager set starts after this many seconds of the script
#   STOP_AT_S [585]: take_turns is ended at this second, so the output is packed before the
#   device's 600 s limit (the turns done so far stay in turns.jsonl; --report judges them).
set -euo pipefail
ddpscale=${1:?usage: grid-one-call.sh DDPSCALE_BINARY OUT_DIR}
out=${2:?usage: grid-one-call.sh DDPSCALE_BINARY OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

rows=(mlp-medium:8 mlp-medium:128 mlp-large:8 mlp-large:128 lstm:32 lstm:128 gru:32 gru:128
      transformer:32 transformer:128)
mkdir -p "$out"
{ date -u +%FT%TZ; nvidia-smi -L; } > "$out/machine.txt" 2>&1 || true
# The files' hashes, not `git rev-parse`: a device's copy of the tree need not carry the
# commit it came from. Compare with `sha256sum` of the same paths at a commit.
(cd "$here/../.." && sha256sum "$ddpscale" scripts/gpu/grid-one-call.sh scripts/gpu/take_turns.py \
  scripts/gpu/pytorch_ddp_reference.py scripts/analysis/paired_ratio.py) >> "$out/machine.txt"

# Runs take_turns until STOP_AT_S at the latest; a late end keeps the turns recorded so far.
take_turns() {
  local left=$(( ${STOP_AT_S:-585} - SECONDS ))
  if (( left < 30 )); then echo "grid-one-call: no time left for take_turns $*" >&2; return 0; fi
  timeout --kill-after=5 "$left" python3 "$here/take_turns.py" --ddpscale "$ddpscale" --rows "${rows[@]}" \
    --start-together "$@" || echo "grid-one-call: take_turns ended with $? (judge its turns.jsonl with --report)" >&2
}

read -ra graph_steps <<< "${GRAPH_STEPS:-100 lstm=40 gru=40 transformer=20}"
read -ra eager_steps <<< "${EAGER_STEPS:-100 lstm=20 gru=20 transformer=10}"
read -ra eager_variants <<< "${EAGER_VARIANTS:-eager-caller-thread}"
take_turns --exec graph --variants graph --process-shifts 0 20 40 60 --sets "${GRAPH_SETS:-4}" \
  --turns "${GRAPH_TURNS:-5}" --steps "${graph_steps[@]}" --out "$out/graph" \
  2> "$out/graph.out"
echo "grid-one-call: graph done at ${SECONDS} s" >> "$out/machine.txt"
take_turns --exec eager --variants "${eager_variants[@]}" --sets 100 \
  --turns "${EAGER_TURNS:-5}" --steps "${eager_steps[@]}" \
  --deadline $(( ${EAGER_DEADLINE_S:-550} - SECONDS )) --out "$out/eager" 2> "$out/eager.out"
echo "grid-one-call: eager done at ${SECONDS} s" >> "$out/machine.txt"
