#!/usr/bin/env bash
# target_half_width on 2 ranks, both ways, on launches whose agreement the test sets: launch
# 1 is measured, launch 2 is launch 1's files written again as launch 2 (h5py), so the two
# launches agree exactly (a host that never changes) and the speedup's interval over them has
# no width; then the sweep's driver must find launch 3 not needed. In a copy of the study,
# launch 2's 2-rank throughput is doubled instead, the interval is far wider than +-5%, and
# the driver must run launch 3. The report says how far the comparison got (before launch 3:
# stopped with a launch left; after it: the launches ran out); a changed target is refused.
# Usage: launches_precise_test.sh DDPSCALE_BIN WORK_DIR [-- MPIRUN...]
set -uo pipefail
TEST_NAME=sweep_launches_precise
source "$(dirname "${BASH_SOURCE[0]}")/sweep_test_lib.sh"
begin_sweep_test launches-precise.yaml "$@"

sweep_run "$WORK/study" "$WORK/launch1.log" --no-commbench --launch 1 || { cat "$WORK/launch1.log"; fail "launch 1 failed"; }
cp -r "$WORK/study" "$WORK/apart"

# Launch 2 from launch 1's files: SCALE multiplies the 2-rank runs' throughput.
copy_launch() {
  "$H5PY_PYTHON" - "$1" "$2" <<'PY' || fail "could not write launch 2 from launch 1"
import glob, shutil, sys
import h5py
study, scale = sys.argv[1], float(sys.argv[2])
sources = glob.glob(f"{study}/*.launch-1-of-3.h5")
assert len(sources) == 2, sources
for source in sources:
    target = source.replace(".launch-1-of-3.h5", ".launch-2-of-3.h5")
    shutil.copyfile(source, target)
    with h5py.File(target, "r+") as f:
        f.attrs["launch"] = 1
        two_ranks = "_w2_" in target
        for run in f["runs"].values():
            run.attrs["launch"] = 1
            run.attrs["index"] = 1
            if two_ranks:
                run.attrs["samples_per_second"] = run.attrs["samples_per_second"] * scale
PY
}
copy_launch "$WORK/study" 1
copy_launch "$WORK/apart" 2

sweep_run "$WORK/study" "$WORK/agree.log" --no-commbench --resume || { cat "$WORK/agree.log"; fail "the sweep failed"; }
grep -q "launch 3 of 3: not needed: 1 of 1 speedups' 95% intervals within ±5% after 2 launches" "$WORK/agree.log" ||
  { cat "$WORK/agree.log"; fail "the driver did not find launch 3 unneeded where launches 1 and 2 agree"; }
[ -z "$(ls "$WORK"/study/*.launch-3-of-3.h5 2>/dev/null)" ] || fail "launch 3 was measured anyway"

# Before launch 3 the copy is a stopped study: its open comparison has a launch left, which the
# report says instead of "ran out".
"$BIN" report "$WORK/apart" --out "$WORK/report-stopped" >"$WORK/report-stopped.log" 2>&1 || fail "report of the stopped copy failed"
grep -q "0 of 1 speedups got there; 1 had not yet when the study stopped, before its last launch" "$WORK/report-stopped/report.md" &&
  grep -q "Short of it when the study stopped, with launches left (.*): mlp-medium b8 2 CPU ranks: .* over 2 launches" \
    "$WORK/report-stopped/report.md" ||
  { grep -n "Launches" "$WORK/report-stopped/report.md"; fail "the report of a stopped study does not say it has launches left"; }

sweep_run "$WORK/apart" "$WORK/apart.log" --no-commbench --resume || { cat "$WORK/apart.log"; fail "the sweep failed"; }
grep -q "launch 3 of 3: fresh processes (.*); 0 of 1 speedups' 95% intervals within ±5% after 2 launches; measuring 2 of 2" \
  "$WORK/apart.log" || { cat "$WORK/apart.log"; fail "the driver did not run launch 3 where launches 1 and 2 disagree"; }
[ "$(ls "$WORK"/apart/*.launch-3-of-3.h5 | wc -l)" = 2 ] || fail "launch 3's files are missing"

# The rule a study began with stays: a changed target is refused, naming both.
sed 's/target_half_width: 0.05/target_half_width: 0.1/' "$SPEC" >"$WORK/changed.yaml"
"${MPIRUN[@]}" -np 2 "$BIN" sweep "$WORK/changed.yaml" --out "$WORK/study" --no-commbench --resume >"$WORK/changed.log" 2>&1
status=$?
[ "$status" = 2 ] && grep -q "was begun with target_half_width 0.05, min_launches 2 .*now asks for target_half_width 0.1, min_launches 2" "$WORK/changed.log" ||
  { cat "$WORK/changed.log"; fail "a changed target_half_width was not refused (exit $status)"; }

"$BIN" report "$WORK/study" --out "$WORK/report" >"$WORK/report.log" 2>&1 || { cat "$WORK/report.log"; fail "report failed"; }
grep -q "1 of 1 speedups met the target, after 2 launches" "$WORK/report/report.md" ||
  { grep -n "Launches until precise" "$WORK/report/report.md"; fail "the report does not say the target was met after 2 launches"; }
grep -q "| mlp-medium b8 2 CPU ranks | 2 of 3 |" "$WORK/report/report.md" || fail "the report does not count 2 of 3 launches"
"$BIN" report "$WORK/apart" --out "$WORK/report-apart" >"$WORK/report-apart.log" 2>&1 || fail "report of the copy failed"
grep -q "0 of 1 speedups met the target. Short of it when the launches ran out: mlp-medium b8 2 CPU ranks" \
  "$WORK/report-apart/report.md" || { grep -n "Launches until precise" "$WORK/report-apart/report.md"; fail "the report does not name the comparison short of the target"; }
say "PASSED"
