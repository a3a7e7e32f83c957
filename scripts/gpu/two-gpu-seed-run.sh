#!/usr/bin/env bash
# The 2-GPU run of the seed study in device calls of at most 10 minutes, chained back to back
# on one warm machine (it keeps ignored folders between calls, and goes back 30 s after a call
# ends): run the same command again and it goes on where the last call stopped.
#   CALL_SECONDS=570 bash scripts/gpu/two-gpu-seed-run.sh
# In order, each once (markers in $WORK): the build, with nccl-tests' all_reduce_perf built
# beside it (NCCL_TESTS_SRC: a copy of github.com/NVIDIA/nccl-tests; the machine has no
# network); all_reduce_perf -g N and `ddpscale commbench` back to back, 8 B to 2 GiB; the
# seed study (SPEC, default experiments/seed-study.yaml) with --resume until it is done or
# the call's time is nearly up (the sweep keeps every finished configuration; the one cut off
# is measured again next call); then, where time is left, the GPU tests. Every call ends by
# copying logs and the study (packed) to $OUT.
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
deadline=$((SECONDS + ${CALL_SECONDS:-570}))
work="${WORK:-$DDPSCALE_ROOT/studies/two-gpu}"
spec="${SPEC:-$DDPSCALE_ROOT/experiments/seed-study.yaml}"
study="$work/$(basename "$spec" .yaml)"
out="${OUT:-$work/out}"
mkdir -p "$work" "$out"
seconds_left() { echo $((deadline - SECONDS)); }
done_marker() { [ -e "$work/$1.done" ]; }
mark_done() { echo "$2 s, finished $(date -u +%FT%TZ)" >"$work/$1.done"; }

build_nccl_tests() {
  [ -n "${NCCL_TESTS_SRC:-}" ] && [ "$DDPSCALE_MODE" = gpu ] || return 0
  build_nccl_tests_allreduce "$work/nccl-tests"
}

if ! done_marker build; then
  start=$SECONDS
  { nvidia-smi topo -m || true; } >"$work/topology.txt" 2>&1
  build_nccl_tests >"$work/nccl-tests-build.log" 2>&1 &
  nccl_build=$!
  bash "$DDPSCALE_ROOT/scripts/setup.sh" >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
  wait "$nccl_build" || { log "nccl-tests did not build"; tail -n 20 "$work/nccl-tests-build.log"; }
  mark_done build $((SECONDS - start))
fi

if ! done_marker allreduce; then
  start=$SECONDS
  {
    if [ -x "$work/nccl-tests/all_reduce_perf" ]; then
      echo "## nccl-tests all_reduce_perf -b 8 -e 2G -f 4 -g $NRANKS"
      "$work/nccl-tests/all_reduce_perf" -b 8 -e 2G -f 4 -g "$NRANKS"
    fi
    echo "## ddpscale commbench --min-bytes 8 -e 2G -f 4 on $NRANKS ranks"
    "${MPIRUN[@]}" -np "$NRANKS" "$DDPSCALE_BIN" commbench --min-bytes 8 -e 2G -f 4
  } >"$work/allreduce.log" 2>&1 || log "the allreduce comparison failed: see allreduce.log"
  mark_done allreduce $((SECONDS - start))
fi

# The sweep stops (SIGTERM: finished configurations stay) 60 s before the deadline, which
# leaves the packing and the copy to $OUT their time.
if ! done_marker study && [ "$(seconds_left)" -gt 90 ]; then
  start=$SECONDS
  log "study $spec into $study, $(($(seconds_left) - 60)) s this call"
  if timeout -s TERM $(($(seconds_left) - 60)) "${MPIRUN[@]}" -np "$NRANKS" "$DDPSCALE_BIN" sweep "$spec" \
       --out "$study" --resume >>"$work/study.log" 2>&1; then
    mark_done study $((SECONDS - start))
  fi
  echo "call ended at $(date -u +%FT%TZ) after $((SECONDS - start)) s of sweep" >>"$work/study-calls.log"
fi

if done_marker study && ! done_marker gpu-tests && [ "$(seconds_left)" -gt 200 ]; then
  start=$SECONDS
  timeout $(($(seconds_left) - 40)) bash "$DDPSCALE_ROOT/scripts/gpu-test.sh" >"$work/gpu-tests.log" 2>&1 || true
  mark_done gpu-tests $((SECONDS - start))
fi

for f in "$work"/*.done; do [ -e "$f" ] && echo "$(basename "$f"): $(cat "$f")"; done
tail -n 5 "$work/study.log" 2>/dev/null | tr '\r' '\n' | tail -n 5
[ -d "$study" ] && tar czf "$out/$(basename "$study").tar.gz" -C "$work" "$(basename "$study")"
(cd "$work" && tar czf "$out/logs.tar.gz" ./*.log ./*.txt ./*.done 2>/dev/null) || true
ls -la "$out"
