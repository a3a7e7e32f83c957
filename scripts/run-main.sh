#!/usr/bin/env bash
# The README's first command: set up, build, run the quick study (experiments/quick.yaml)
# on this machine (its GPUs when there are, otherwise 2 CPU ranks over MPI) and write its
# report. Run again, it continues an interrupted study (--resume) and rewrites the report.
#   STUDY=path SPEC=experiments/other.yaml bash scripts/run-main.sh   to choose another study
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# Only the binary this command runs: the test executables are scripts/run-tests.sh's.
bash "$DDPSCALE_ROOT/scripts/setup.sh" ddpscale

spec="${SPEC:-$DDPSCALE_ROOT/experiments/quick.yaml}"
study="${STUDY:-$DDPSCALE_ROOT/studies/$(basename "$spec" .yaml)-$DDPSCALE_MODE}"
report="${REPORT:-$DDPSCALE_ROOT/reports/$(basename "$study")}"

log "ddpscale info ($NRANKS ranks)"
"${MPIRUN[@]}" -np "$NRANKS" "$DDPSCALE_BIN" info >"$BUILD_DIR/info.json"
log "machine description written to $BUILD_DIR/info.json"

log "study $spec -> $study ($NRANKS ranks, $DDPSCALE_MODE)"
resume=()
[ -e "$study/study.h5" ] && resume=(--resume)
status=0
"${MPIRUN[@]}" -np "$NRANKS" "$DDPSCALE_BIN" sweep "$spec" --out "$study" "${resume[@]}" || status=$?
# 3: finished, but some configuration has no successful run; the report shows which.
if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then
  log "the sweep stopped (exit $status); run this command again to resume it"
  exit "$status"
fi

log "report -> $report"
"$DDPSCALE_BIN" report "$study" --out "$report"
log "done: open $report/report.html (or read $report/report.md)"
exit "$status"
