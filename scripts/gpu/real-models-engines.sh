#!/usr/bin/env bash
# A spec of TorchScript rows (experiments/real-models.yaml unless SPEC names another) under
# both engines in one study: for each launch k of the spec's launches, ddpscale's launch
# (`mpirun -np W ddpscale sweep ... --launch k`, W the spec's largest world size) and PyTorch
# DDP's (scripts/gpu/pytorch_ddp_reference.py on the same files, batches and dtypes, one
# process set per world size, imported with `ddpscale import-pytorch --launch k`),
# the two in turn and their order alternating, so each launch pairs the engines close in time.
# Then `ddpscale report`, whose "Beside PyTorch DDP" section has both engines' speedups and the
# throughput ratios with launch-paired intervals. In device calls of at most 10 minutes: run
# the same command again in the next call and it goes on from the last finished launch (a warm
# machine keeps studies/SPECNAME-engines/).
#   bash scripts/gpu/real-models-engines.sh
#   SPEC=experiments/real-models-one-gpu.yaml ROWS="resnet50:32 bert-base:32 gpt2-small:16 vit-b16:32" \
#     bash scripts/gpu/real-models-engines.sh
#   CALL_SECONDS=560 OUT (where the report and the logs go, packed)
#   LAUNCH_SECONDS=340: what a launch of both engines is planned to take until one is timed
#   RANKS=N: launch ddpscale's sweep with N ranks instead of the spec's largest world size
#     (ranks beyond a configuration's world wait idle; the study goes to studies/SPECNAME-engines-npN)
# ROWS (MODEL:BATCH, names in models-out/real/manifest.json) must match the spec's models and
# batches; `ddpscale import-pytorch` refuses a row without a twin in the study.
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
deadline=$((SECONDS + ${CALL_SECONDS:-560}))
spec="$(realpath "${SPEC:-$DDPSCALE_ROOT/experiments/real-models.yaml}")"
work="$DDPSCALE_ROOT/studies/$(basename "$spec" .yaml)-engines${RANKS:+-np$RANKS}"
study="$work/study"
out="${OUT:-$work/out}"
mkdir -p "$work" "$out"
read -r -a rows <<<"${ROWS:-resnet18:32 resnet50:32 bert-base:32 gpt2-small:16 vit-b16:32}"
# A list key of the spec on one line ("world_sizes: [1, 2]"), as words.
spec_list() { awk -v key="$1:" '$1 == key {$1 = ""; print}' "$spec" | tr -d '[],'; }
read -r -a worlds <<<"$(spec_list world_sizes)"
read -r -a dtypes <<<"$(spec_list dtype)"
[ ${#dtypes[@]} -gt 0 ] || dtypes=(float32)
ranks=${RANKS:-$(printf '%s\n' "${worlds[@]}" | sort -n | tail -n 1)}
launches=$(awk '$1 == "launches:" {print $2}' "$spec")
runs=$(awk '$1 == "runs:" {print $2}' "$spec")
warmup=$(awk '$1 == "warmup:" {print $2}' "$spec")
steps=$(awk '$1 == "steps:" {print $2}' "$spec")
[ ${#worlds[@]} -gt 0 ] && [ -n "$launches" ] && [ -n "$runs" ] && [ -n "$warmup" ] && [ -n "$steps" ] ||
  { log "$spec needs world_sizes, launches, runs, warmup and steps, each on a line of its own"; exit 1; }
runs_per_launch=$((runs / launches))
# The spec's process_shifts_mib: launch k's ddpscale processes hold the ((k-1) mod n)-th
# amount, and so do its reference processes (--process-shift), so both engines draw the
# same n layouts over the launches (docs/methodology.md, "Where the buffers land").
read -r -a shifts <<<"$(spec_list process_shifts_mib)"

build_once "$work" || exit 1
export_real_models_once "$work" || exit 1
models="$REAL_MODELS"

ddpscale_launch() {  # $1 = launch, 1-based
  (cd "$DDPSCALE_ROOT" && "${MPIRUN[@]}" -np "$ranks" "$DDPSCALE_BIN" sweep "$spec" --out "$study" --launch "$1" --resume) \
    >>"$work/ddpscale.log" 2>&1
}

pytorch_launch() {  # $1 = launch, 1-based: every row on each world size, then the import
  local results="$work/pytorch-launch-$1.jsonl" world shift_flag=()
  [ ${#shifts[@]} -eq 0 ] || shift_flag=(--process-shift "${shifts[$(( ($1 - 1) % ${#shifts[@]} ))]}")
  : >"$results"
  # One process set per world size trains every row (--manifest gives each file its flags), as
  # ddpscale's launch trains every configuration in one process set; a Python process's start
  # (PyTorch, the CUDA context, NCCL) is paid once per launch and world size, not per row.
  for world in "${worlds[@]}"; do
    local launcher=(python3)
    [ "$world" -eq 1 ] || launcher=(torchrun --standalone --nproc_per_node "$world")
    (cd "$DDPSCALE_ROOT" && "${launcher[@]}" scripts/gpu/pytorch_ddp_reference.py --manifest "$models/manifest.json" \
      --rows "${rows[@]}" --dtype "${dtypes[@]}" --runs "$runs_per_launch" --warmup "$warmup" --steps "$steps" \
      "${shift_flag[@]}") \
      >>"$results" 2>>"$work/pytorch.log" || { log "the reference failed on $world GPU(s): $work/pytorch.log"; return 1; }
  done
  (cd "$DDPSCALE_ROOT" && "$DDPSCALE_BIN" import-pytorch "$study" "$results" --launch "$1" --launches "$launches") \
    >>"$work/import.log" 2>&1 || { tail -n 5 "$work/import.log"; return 1; }
}

# A launch of both engines on real-models.yaml took 158-185 s on 2x H200, 274-339 s on 2x H100
# when the reference still ran one process per row (docs/benchmarks.md).
# Until this study has timed a launch, plan with LAUNCH_SECONDS (default 340), so no launch
# starts that the call cannot finish; from then on with the longest launch it measured.
longest=$(cat "$work/longest-launch" 2>/dev/null || echo "${LAUNCH_SECONDS:-340}")
for k in $(seq 1 "$launches"); do
  [ -e "$work/launch-$k.done" ] && continue
  if [ $((deadline - SECONDS)) -lt "$longest" ]; then
    log "launch $k of $launches left for the next call ($((deadline - SECONDS)) s left, a launch took up to $longest s)"
    break
  fi
  start=$SECONDS
  if [ $((k % 2)) -eq 1 ]; then ddpscale_launch "$k" && pytorch_launch "$k"; else pytorch_launch "$k" && ddpscale_launch "$k"; fi ||
    { log "launch $k failed"; tail -n 20 "$work/ddpscale.log"; break; }
  took=$((SECONDS - start))
  if [ ! -e "$work/longest-launch" ] || [ "$took" -gt "$longest" ]; then
    longest=$took
    echo "$longest" >"$work/longest-launch"
  fi
  log "launch $k of $launches: both engines in $took s"
  touch "$work/launch-$k.done"
done

done_launches=$(ls "$work"/launch-*.done 2>/dev/null | wc -l)
if [ "$done_launches" -gt 0 ]; then
  "$DDPSCALE_BIN" report "$study" --out "$work/report" >"$work/report.log" 2>&1 || tail -n 5 "$work/report.log"
  # The answer so far, one line per pair of configurations (summary.json's engines list).
  python3 -c 'import json, sys
for e in json.load(open(sys.argv[1]))["engines"]:
    ci = "[%.4f, %.4f]" % (e["ci95_low"], e["ci95_high"]) if e["ci95_low"] is not None else "(no interval)"
    print("%-12s %-9s b%-4d %d GPU(s): ddpscale / PyTorch %.4f %s %s" % (e["model"], e["dtype"],
          e["batch_per_rank"], e["world_size"], e["ddpscale_over_pytorch"], ci, e["verdict"]))' \
    "$work/report/summary.json" 2>/dev/null || true
fi
log "$done_launches of $launches launches measured"
tar -C "$work" -czf "$out/real-models-engines.tar.gz" --exclude=out --exclude=study . 2>/dev/null || true
tar -C "$work" -czf "$out/real-models-engines-study.tar.gz" study 2>/dev/null || true
ls -la "$out"
