#!/usr/bin/env bash
# Runs studies back to back on the GPU machine, in device calls of at most 10 minutes, and
# brings them back packed: the same spec twice gives a study and its rerun for
# `ddpscale compare`. Run the same command again in the next call and it goes on where the
# last one stopped (every launch and configuration finished stays; --resume).
#   bash scripts/gpu/reproducibility.sh NAME[=SPEC] ...
#     NAME          a study of experiments/reproducibility.yaml in studies/repro/NAME
#     NAME=SPEC     a study of SPEC (e.g. seed=experiments/seed-study.yaml)
#   CALL_SECONDS=560 (the call's budget), OUT (where the packed studies and logs go)
# First, once per machine: the build (scripts/setup.sh), the GPU tests' tally, `ddpscale
# info`, the topology and the TorchScript files the spec trains (scripts/export_model.py).
# Each study's wall time is in its log (studies/repro/NAME.log) and in NAME.seconds.
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
deadline=$((SECONDS + ${CALL_SECONDS:-560}))
work="$DDPSCALE_ROOT/studies/repro"
out="${OUT:-$work/out}"
mkdir -p "$work" "$out"
seconds_left() { echo $((deadline - SECONDS)); }

if [ ! -e "$work/build.done" ]; then
  start=$SECONDS
  { nvidia-smi topo -m; nvidia-smi -q -d CLOCK,PERFORMANCE; } >"$work/topology.txt" 2>&1 || true
  bash "$DDPSCALE_ROOT/scripts/setup.sh" >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
  "${MPIRUN[@]}" -np "$NRANKS" "$DDPSCALE_BIN" info >"$work/info.json" 2>&1 || true
  echo "$((SECONDS - start)) s" >"$work/build.done"
fi
models="$DDPSCALE_ROOT/models-out/repro"
if [ ! -e "$models/gpt2-small.pt" ]; then
  python3 "$DDPSCALE_ROOT/scripts/export_model.py" resnet18 --image-size 64 --classes 100 --out "$models" >"$work/export.log" 2>&1 &&
    python3 "$DDPSCALE_ROOT/scripts/export_model.py" gpt2-small --layers 4 --d-model 256 --heads 4 --vocab 8000 --seq 64 \
      --out "$models" >>"$work/export.log" 2>&1 || { tail -n 20 "$work/export.log"; exit 1; }
fi

for item in "$@"; do
  name="${item%%=*}"
  spec="$DDPSCALE_ROOT/experiments/reproducibility.yaml"
  [ "$item" != "$name" ] && spec="$DDPSCALE_ROOT/${item#*=}"
  study="$work/$name"
  [ -e "$study.done" ] && continue
  # 45 s before the deadline the sweep is stopped (SIGTERM reaches the launch under way,
  # which keeps every finished file), leaving the packing its time.
  budget=$(($(seconds_left) - 45))
  [ "$budget" -gt 30 ] || { log "no time left for $name this call"; break; }
  log "study $name ($spec) into $study, at most $budget s this call"
  start=$SECONDS
  status=0
  timeout -s TERM "$budget" "${MPIRUN[@]}" -np "$NRANKS" "$DDPSCALE_BIN" sweep "$spec" --out "$study" --resume \
    >>"$study.log" 2>&1 || status=$?
  echo "$((SECONDS - start))" >>"$study.seconds"
  if [ "$status" -eq 0 ] || [ "$status" -eq 3 ]; then
    touch "$study.done"
    "$DDPSCALE_BIN" report "$study" --out "$work/reports/$name" >>"$study.log" 2>&1 || log "report of $name failed"
  else
    log "$name stopped (exit $status): run this command again to go on"
    break
  fi
done

# Pairs of finished studies of the same spec, compared in order of the arguments.
done_names=()
for item in "$@"; do name="${item%%=*}"; [ -e "$work/$name.done" ] && done_names+=("$name"); done
for ((i = 1; i < ${#done_names[@]}; i++)); do
  a="${done_names[$((i - 1))]}" b="${done_names[$i]}"
  "$DDPSCALE_BIN" compare "$work/$a" "$work/$b" --out "$work/compare-$a-$b" >"$work/compare-$a-$b.txt" 2>&1 || true
done
tar -C "$work" -czf "$out/repro.tar.gz" --exclude=out --exclude='*.tmp' . 2>/dev/null
ls -la "$out"
