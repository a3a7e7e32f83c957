#!/usr/bin/env bash
# On the GPU machine: ddpscale against PyTorch, paired round by round.
#   GPUS=1 (default): every seed model at two batch sizes (experiments/pytorch-comparison-1gpu.yaml),
#     ddpscale eager and --exec graph beside PyTorch's "eager" (fused Adam, set_to_none) and
#     "graph" (the whole step in torch.cuda.graph) from scripts/gpu/pytorch_ddp_reference.py.
#     Needs a build with -DDDPSCALE_CUDA_GRAPHS=ON.
#   GPUS=2: the seed's MLPs on 1 and 2 GPUs (experiments/reference-comparison.yaml), eager,
#     against PyTorch's DDP under torchrun.
# Eager steps are host work and the host's speed drifts within minutes (docs/methodology.md,
# "Comparing with PyTorch's DDP"), so both sides run in rounds, back to back within a round, in the order
# ddpscale, PyTorch | PyTorch, ddpscale | ... so a steady drift favours neither;
# scripts/analysis/paired_ratio.py then compares them round by round.
# PAIRING=row pairs the two sides row by row instead of grid by grid (below); PAIRING=turns
# keeps both alive and alternates them run by run (scripts/gpu/take_turns.py; below).
# STEPS="MODEL=N ..." (PAIRING=row only) measures N steps a run on both sides for that model
# instead of 100. A run of 100 eager MLP steps lasts 50-100 ms, and the host's speed moves
# by up to 2x between processes seconds apart; in one trial pairs of 2000-step runs spread
# less than pairs of 100-step runs, though 15 pairs could not establish it
# (docs/methodology.md, "Comparing with PyTorch's DDP").
# PLACEMENT_SHIFTS="0,20,40,60" (PAIRING=row only): on both sides run k first holds the
# (k mod n)-th of these MiB of GPU memory (`ddpscale train --placement-shifts-mib`), one run per
# placement, so each side's median covers where its buffers land: cuDNN's persistent LSTM
# kernel moved PyTorch's own lstm b128 graph step by 2.0% over four placements on an H100
# (docs/methodology.md, "Where the buffers land").
# PROCESS_SHIFTS="0 20 40 60" (PAIRING=turns only): set k's processes, both sides', hold the
# (k mod n)-th of these MiB first, for their whole life (`ddpscale train --process-shift`), so
# the sets sample layouts that a per-run shift cannot reach (library workspaces made once).
# START_TOGETHER=1 (PAIRING=turns only): all rows' processes of a set start at once and run
# their turn 0 (left out) together (take_turns.py --start-together), so a set's start-up is paid
# once, not once per row.
# PAIRING=grid: the whole 1-GPU grid within one 10-minute command, taking turns with every
# row's processes started together: first the graph rows, GRAPH_SETS [4] sets (one per process
# shift 0/20/40/60 MiB) of GRAPH_TURNS [5] turns of GRAPH_STEPS [100 lstm=40 gru=40
# transformer=20] steps; then the eager rows against EAGER_VARIANTS [eager-caller-thread],
# EAGER_TURNS [5] turns of EAGER_STEPS [100 lstm=20 gru=20 transformer=10] steps, as many sets as
# start before EAGER_DEADLINE_S [550] seconds; take_turns is stopped at STOP_AT_S [585] so the
# output is written before the command's limit. Starting and stopping processes and turn 0
# take most of a set (docs/methodology.md, "Taking turns"), so the graph rows, whose sets agree
# within 0.5%, get a fixed few and the eager rows the rest. Writes $OUT/graph/, $OUT/eager/
# (take-turns.md, turns.jsonl, logs.tgz), graph.out, eager.out and machine.txt (the card, and
# the sha256 of the binary and scripts: a device's copy of the tree need not carry its commit).
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
rows=()
if [ -n "${STEPS:-}" ] && [ "${PAIRING:-round}" = round ]; then
  log "STEPS needs PAIRING=row or turns (the grid's spec sets its own steps)"
  exit 2
fi
if [ -n "${START_TOGETHER:-}" ] && [ "${PAIRING:-round}" != turns ]; then
  log "START_TOGETHER needs PAIRING=turns (it starts a set's processes of every row at once)"
  exit 2
fi
if [ -n "${PROCESS_SHIFTS:-}" ] && [ "${PAIRING:-round}" != turns ]; then
  log "PROCESS_SHIFTS needs PAIRING=turns (each set of fresh processes holds one amount)"
  exit 2
fi
if [ -n "${PLACEMENT_SHIFTS:-}" ] && [ "${PAIRING:-round}" != row ]; then
  log "PLACEMENT_SHIFTS needs PAIRING=row (the grid's spec sets its own runs)"
  exit 2
fi
# Runs per row on both sides: 3, or one per placement with PLACEMENT_SHIFTS.
row_runs=3
[ -n "${PLACEMENT_SHIFTS:-}" ] && row_runs=$(tr ',' '\n' <<<"$PLACEMENT_SHIFTS" | grep -c .)
if [ "$gpus" = 1 ]; then
  # SPEC and ROWS (MODEL:BATCH ...) narrow the grid, e.g. to settle one model's rows with
  # more rounds; ROWS must name exactly the spec's configurations. VARIANTS (default
  # "eager graph") picks PyTorch's variants to match the spec's exec modes; add
  # eager-caller-thread for PyTorch with the backward on the calling thread, as ddpscale's
  # runs (paired_ratio.py judges ddpscale's eager step against it too).
  spec="${SPEC:-experiments/pytorch-comparison-1gpu.yaml}"
  study="$studies/pytorch-comparison-1gpu"
  read -r -a rows <<<"${ROWS:-${COMPARISON_ROWS[*]}}"
else
  spec=experiments/reference-comparison.yaml
  study="$studies/reference-comparison"
fi

# Each side measures into a round folder DIR: ddpscale_side DIR SPEC, pytorch_side DIR ROW...
ddpscale_side() {
  local dir="$1" spec_file="$2"
  log "${dir#"$out"/}: ddpscale ($spec_file)"
  "${MPIRUN[@]}" -np "$gpus" "$DDPSCALE_BIN" sweep "$spec_file" --out "$study/${dir#"$out"/}" \
    --overwrite >"$dir/ddpscale-sweep.txt" 2>&1
  "$DDPSCALE_BIN" report "$study/${dir#"$out"/}" --no-plots --out "$dir/report" >/dev/null
}
pytorch_side() {
  local dir="$1"
  shift
  if [ "$gpus" = 1 ]; then
    log "${dir#"$out"/}: PyTorch ${VARIANTS:-eager graph} on 1 GPU"
    python3 "$DDPSCALE_ROOT/scripts/gpu/pytorch_ddp_reference.py" --rows "$@" --variant ${VARIANTS:-eager graph} ${steps:+--steps "$steps"} \
      ${PLACEMENT_SHIFTS:+--placement-shifts "$PLACEMENT_SHIFTS" --runs "$row_runs"} \
      >"$dir/pytorch-1gpu.jsonl" 2>"$dir/pytorch-1gpu.err"
  else
    log "${dir#"$out"/}: PyTorch DDP on 1 GPU, then 2"
    python3 "$DDPSCALE_ROOT/scripts/gpu/pytorch_ddp_reference.py" >"$dir/pytorch-1gpu.jsonl"
    python3 -m torch.distributed.run --standalone --nproc_per_node 2 "$DDPSCALE_ROOT/scripts/gpu/pytorch_ddp_reference.py" \
      2>&1 | grep '^{' >"$dir/pytorch-2gpu.jsonl"
  fi
}
# PAIRING=row (1 GPU): one row at a time, ddpscale's one-configuration sweep and PyTorch's
# run of the same row back to back (seconds apart instead of the whole grid apart), the order
# alternating from row to row and round to round; each row is its own folder, which
# paired_ratio.py reads as a round holding that row only. The row's spec is the grid spec's
# settings for that model and batch (runs 3, 10 + 100 steps, Adam, lr 1e-3, seed 42), in the
# exec modes VARIANTS names.
# PyTorch's eager-* and compile-* variants are all set against ddpscale's eager step.
row_steps() {  # row_steps MODEL: the steps a run of that model measures (STEPS, else 100)
  local entry
  for entry in ${STEPS:-}; do [ "${entry%%=*}" = "$1" ] && { echo "${entry##*=}"; return; }; done
  echo 100
}
row_spec() {  # row_spec MODEL BATCH STEPS FILE
  local model="$1" batch="$2" steps="$3" file="$4" modes
  modes=$(for v in ${VARIANTS:-eager graph}; do [ "$v" = graph ] && echo graph || echo eager; done | sort -u | paste -sd,)
  printf 'name: %s-b%s\nmodels: [%s]\nbatch_sizes: [%s]\nworld_sizes: [1]\nexec: [%s]\nruns: %s\nwarmup: 10\nsteps: %s\noptimizer: adam\nlr: 0.001\nseed: 42\n' \
    "$model" "$batch" "$model" "$batch" "$modes" "$row_runs" "$steps" >"$file"
  [ -z "${PLACEMENT_SHIFTS:-}" ] || echo "placement_shifts_mib: [$PLACEMENT_SHIFTS]" >>"$file"
}
pair() {  # pair FIRST DIR SPEC ROW...: both sides into DIR, ddpscale first when FIRST is ddpscale
  local first="$1" dir="$2" spec_file="$3"
  shift 3
  if [ "$first" = ddpscale ]; then
    ddpscale_side "$dir" "$spec_file"
    pytorch_side "$dir" "$@"
  else
    pytorch_side "$dir" "$@"
    ddpscale_side "$dir" "$spec_file"
  fi
  finished+=("$dir")
}
# Which card, build and PyTorch: one kind of device may be served by different cards, and a
# ratio near 1 has differed between them (docs/methodology.md, "Where the buffers land").
measured_on() {
  local cards commit torch_version
  cards=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | sed 's/^ *//' | paste -sd, -)
  commit=$("$DDPSCALE_BIN" info 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["git_commit"])' 2>/dev/null)
  torch_version=$(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)
  echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) on ${cards:-an unnamed GPU}; ddpscale ${commit:-at an unknown commit}; PyTorch ${torch_version:-unknown}."
}
# PAIRING=turns (1 GPU): both programs alive at once, taking turns run by run
# (scripts/gpu/take_turns.py): neighbouring runs of the two sides a fraction of a second apart
# instead of a whole launch. ROUNDS is the sets of fresh processes per row, TURNS (default 10)
# the runs of each process; ddpscale runs --exec graph when VARIANTS is "graph", else eager.
# No set starts after DEADLINE seconds.
if [ "${PAIRING:-round}" = grid ]; then
  [ "$gpus" = 1 ] || { log "PAIRING=grid is for 1 GPU"; exit 2; }
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  { date -u +%FT%TZ; nvidia-smi -L; } >"$out/machine.txt" 2>&1 || true
  (cd "$DDPSCALE_ROOT" && sha256sum "$DDPSCALE_BIN" scripts/gpu/gpu-benchmark.sh scripts/gpu/take_turns.py \
    scripts/gpu/pytorch_ddp_reference.py scripts/analysis/paired_ratio.py) >>"$out/machine.txt"
  grid_turns() {  # take_turns until STOP_AT_S at the latest; a late end keeps the turns so far
    local left=$(( ${STOP_AT_S:-585} - SECONDS ))
    if ((left < 30)); then log "no time left for take_turns $*"; return 0; fi
    timeout --kill-after=5 "$left" python3 "$DDPSCALE_ROOT/scripts/gpu/take_turns.py" --ddpscale "$DDPSCALE_BIN" \
      --rows "${rows[@]}" --start-together "$@" ||
      log "take_turns ended with $? (judge its turns.jsonl with take_turns.py --report)"
  }
  read -ra graph_steps <<<"${GRAPH_STEPS:-100 lstm=40 gru=40 transformer=20}"
  read -ra eager_steps <<<"${EAGER_STEPS:-100 lstm=20 gru=20 transformer=10}"
  read -ra eager_variants <<<"${EAGER_VARIANTS:-eager-caller-thread}"
  grid_turns --exec graph --variants graph --process-shifts 0 20 40 60 --sets "${GRAPH_SETS:-4}" \
    --turns "${GRAPH_TURNS:-5}" --steps "${graph_steps[@]}" --out "$out/graph" 2>"$out/graph.out"
  echo "graph done at ${SECONDS} s" >>"$out/machine.txt"
  grid_turns --exec eager --variants "${eager_variants[@]}" --sets 100 --turns "${EAGER_TURNS:-5}" \
    --steps "${eager_steps[@]}" --deadline $(( ${EAGER_DEADLINE_S:-550} - SECONDS )) --out "$out/eager" \
    2>"$out/eager.out"
  echo "eager done at ${SECONDS} s" >>"$out/machine.txt"
  exit 0
fi
if [ "${PAIRING:-round}" = turns ]; then
  [ "$gpus" = 1 ] || { log "PAIRING=turns is for 1 GPU"; exit 2; }
  exec_mode=eager
  [ "${VARIANTS:-}" = graph ] && exec_mode=graph
  # shellcheck disable=SC2086 # VARIANTS and STEPS are lists of words
  python3 "$DDPSCALE_ROOT/scripts/gpu/take_turns.py" --ddpscale "$DDPSCALE_BIN" --rows "${rows[@]}" \
    --exec "$exec_mode" --variants ${VARIANTS:-eager eager-caller-thread} --sets "$rounds" --turns "${TURNS:-10}" \
    --steps ${STEPS:-100} ${PROCESS_SHIFTS:+--process-shifts $PROCESS_SHIFTS} ${START_TOGETHER:+--start-together} --deadline $((deadline - SECONDS)) --out "$out"
  { measured_on; echo; cat "$out/take-turns.md"; } | tee "$out/reference-paired.md"
  exit 0
fi
finished=()
steps=""  # a row's steps per run (PAIRING=row); the grid's spec sets its own
last=0  # the last round's seconds: a round that would end past the deadline is not started
for round in $(seq 1 "$rounds"); do
  if ((SECONDS + last >= deadline)); then
    log "deadline: stopping after $((round - 1)) rounds"
    break
  fi
  mkdir -p "$out/round-$round"
  start=$SECONDS
  if [ "${PAIRING:-round}" = row ] && [ "$gpus" = 1 ]; then
    for i in "${!rows[@]}"; do  # a row's order flips from round to round: A B | B A | ...
      row="${rows[$i]}"
      dir="$out/round-$round/${row/:/-b}"
      mkdir -p "$dir"
      steps=$(row_steps "${row%%:*}")  # the same on both sides; pytorch_side reads it
      row_spec "${row%%:*}" "${row##*:}" "$steps" "$dir/spec.yaml"
      if (((i + round) % 2 == 1)); then first=ddpscale; else first=pytorch; fi
      pair "$first" "$dir" "$dir/spec.yaml" "$row"
    done
  elif ((round % 2 == 1)); then
    pair ddpscale "$out/round-$round" "$spec" "${rows[@]}"
  else
    pair pytorch "$out/round-$round" "$spec" "${rows[@]}"
  fi
  last=$((SECONDS - start))
  log "round $round took $last s"
done
{
  measured_on
  echo
  python3 "$DDPSCALE_ROOT/scripts/analysis/paired_ratio.py" "${finished[@]}"
} | tee "$out/reference-paired.md"
