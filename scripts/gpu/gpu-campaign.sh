#!/usr/bin/env bash
# On the GPU machine: everything docs/ records from there, as one resumable job. One device
# command may run 10 minutes and this takes longer, so start it detached (setsid) and
# poll it:
#   setsid nohup bash scripts/gpu/gpu-campaign.sh >/dev/null 2>&1 &     # start (or continue)
#   bash scripts/gpu/gpu-campaign.sh --status                            # progress, logs to $OUT
# Steps, in order, each skipped once its marker says done: build and GPU tests, the
# allreduce sweep (only with CAMPAIGN_COMMBENCH=1) and nccl-tests' beside it (only with
# NCCL_TESTS_SRC=<a copy of its source>), the cost of phase timing, eager ddpscale
# against PyTorch DDP in paired rounds, eager against CUDA graphs with PyTorch DDP beside
# them, the seed study, the threshold study, float32 against bfloat16, the kernels that make
# up the GPU-busy floor (scripts/gpu/kernel-floor.sh), the threshold study under strong scaling.
# CAMPAIGN_SKIP="03-reference ..." leaves out steps already measured, to spend a short
# device lease on the rest. A study folder already in
# $CAMPAIGN_DIR/studies/ (e.g. one cut off earlier, copied there) is
# continued, not repeated: every sweep runs with --resume.
# Studies are packed into $CAMPAIGN_DIR/*.tar.gz after each step so a cut-off campaign
# still brings back what it measured.
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
# One build for every step, with --exec graph compiled in (a superset of the default build):
# a second build costs minutes of device time.
export DDPSCALE_CMAKE_ARGS="${DDPSCALE_CMAKE_ARGS:--DDDPSCALE_CUDA_GRAPHS=ON}"
campaign="${CAMPAIGN_DIR:-/root/ddpscale-campaign}"
mkdir -p "$campaign/studies"

pack_studies() {
  (cd "$campaign/studies" && shopt -s nullglob && for study in */; do
    tar czf "$campaign/${study%/}.tar.gz" "${study%/}"
  done) 2>/dev/null || true
}

status() {
  local out="${OUT:-$campaign/out}"
  mkdir -p "$out"
  for f in "$campaign"/*.done "$campaign"/*.failed; do [ -e "$f" ] && echo "$(basename "$f"): $(cat "$f")"; done
  if flock -n "$campaign/lock" true 2>/dev/null; then echo "campaign: not running"; else echo "campaign: running"; fi
  tail -n 3 "$campaign"/*.log 2>/dev/null | tr '\r' '\n' | tail -n 40
  (shopt -s nullglob; for f in "$campaign"/*.log "$campaign"/*.tar.gz; do cp "$f" "$out"/; done)
  (cd "$campaign" && tar czf "$out/bench.tar.gz" bench 2>/dev/null) || true
  nvidia-smi --query-gpu=index,utilization.gpu,memory.used,temperature.gpu --format=csv,noheader || true
}

# step NAME COMMAND...: runs once; the marker holds the wall time, or the exit code.
step() {
  local name="$1"
  shift
  [ -e "$campaign/$name.done" ] && return 0
  if [[ " ${CAMPAIGN_SKIP:-} " == *" $name "* ]]; then
    log "campaign step $name skipped (CAMPAIGN_SKIP)"
    return 0
  fi
  rm -f "$campaign/$name.failed"
  local start=$SECONDS
  log "campaign step $name"
  if "$@" >"$campaign/$name.log" 2>&1; then
    echo "$((SECONDS - start)) s, finished $(date -u +%FT%TZ)" >"$campaign/$name.done"
  else
    echo "exit $? after $((SECONDS - start)) s" >"$campaign/$name.failed"
  fi
  pack_studies
}

sweep() {
  local spec="$1" name="$2"
  resume_sweep "$spec" "$campaign/studies/$name"
}

# nccl-tests' all_reduce_perf (common.sh builds it from NCCL_TESTS_SRC), run over every GPU in
# one process.
nccl_tests_allreduce() {
  local build="$campaign/nccl-tests-build"
  build_nccl_tests_allreduce "$build" >"$campaign/nccl-tests-build.log" 2>&1 ||
    { tail -n 30 "$campaign/nccl-tests-build.log"; return 1; }
  "$build/all_reduce_perf" -b 8 -e 2G -f 4 -g "$NRANKS"
}

if [ "${1:-}" = "--status" ]; then
  status
  exit 0
fi
[ "$DDPSCALE_MODE" = gpu ] || { log "this script is for the GPU machine"; exit 1; }
exec 9>"$campaign/lock"
flock -n 9 || { log "a campaign is already running"; exit 0; }

step 01-gpu-tests bash "$DDPSCALE_ROOT/scripts/gpu-test.sh"
[ -n "${CAMPAIGN_COMMBENCH:-}" ] && step 02-commbench "${MPIRUN[@]}" -np "$NRANKS" "$DDPSCALE_BIN" commbench --min-bytes 8 -e 2G -f 4
# Right after commbench, so the two allreduce curves share the machine's state.
[ -n "${NCCL_TESTS_SRC:-}" ] && step 02-nccl-tests nccl_tests_allreduce
step 02-overhead env OUT="$campaign/bench" bash "$DDPSCALE_ROOT/scripts/gpu/phase-timing-overhead.sh"
# Two GPUs: the MLPs against PyTorch DDP on 1 and 2; one: the PyTorch-comparison grid, eager and graph.
step 03-reference env OUT="$campaign/bench" STUDIES="$campaign/studies" GPUS="$(( NRANKS >= 2 ? 2 : 1 ))" bash "$DDPSCALE_ROOT/scripts/gpu/gpu-benchmark.sh"
step 04-graphs env OUT="$campaign/bench" STUDIES="$campaign/studies" GRAPHS_BUILD_DIR="$BUILD_DIR" GRAPHS_TESTS=0 \
  bash "$DDPSCALE_ROOT/scripts/gpu/gpu-graphs.sh"
step 05-seed-study sweep experiments/seed-study.yaml seed-study
step 06-thresholds sweep experiments/thresholds.yaml thresholds
step 07-precision sweep experiments/precision.yaml precision
step 08-kernel-floor env OUT="$campaign/bench" bash "$DDPSCALE_ROOT/scripts/gpu/kernel-floor.sh"
step 09-thresholds-strong sweep experiments/thresholds-strong.yaml thresholds-strong
log "campaign finished"
