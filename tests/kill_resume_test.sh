#!/usr/bin/env bash
# Test sweep_kill_resume (labels mpi;study): a sweep killed with SIGKILL to mpirun mid-way
# and resumed ends with exactly the configurations and runs of an uninterrupted sweep.
#
#   bash tests/kill_resume_test.sh DDPSCALE_BIN WORK_DIR [-- MPIRUN PREFIX...]
#
# On tests/specs/kill-resume.yaml (tiny.yaml's 4 configurations x 3 runs, 400 steps, so that
# the freeze lands between configuration files):
#  1. WORK_DIR/A: the uninterrupted study; checked against the spec's grid (check_study.py).
#  2. WORK_DIR/B: the sweep is started, frozen (SIGSTOP to mpirun and its ranks) as soon as
#     one configuration file exists, SIGKILLed (mpirun), every rank of it is made sure dead,
#     then `--resume` finishes it. (Ranks running on after mpirun's death are the soak's
#     case, tests/soak_kill_resume.sh.)
#     B must equal A (same files, same runs, none duplicated, all readable, no *.tmp), the
#     files finished before the kill must be untouched (skipped, not measured again), and
#     the resumed launch must say how many configurations it skipped.
#  3. A rerun into B with neither --resume nor --overwrite is refused: exit code 2, a message
#     naming --resume, and not one byte of B changed.
# The default MPIRUN prefix is that of tests/CMakeLists.txt.
set -uo pipefail
TEST_NAME=sweep_kill_resume
source "$(dirname "${BASH_SOURCE[0]}")/sweep_test_lib.sh"

BIN="${1:?usage: kill_resume_test.sh DDPSCALE_BIN WORK_DIR [-- MPIRUN...]}"
work="${2:?usage: kill_resume_test.sh DDPSCALE_BIN WORK_DIR [-- MPIRUN...]}"
shift 2
mpirun_from_args "$@"
SPEC="$SWEEP_TESTS_DIR/specs/kill-resume.yaml"
KILL_RESUME_GRID=(--models mlp-medium --batches 8,16 --worlds 1,2 --runs 3 --warmup 1 --steps 400 --seed 7)
[ -x "$BIN" ] || fail "ddpscale executable $BIN not found"
require_h5py

rm -rf "$work"
mkdir -p "$work"
A="$work/A"
B="$work/B"

# 1. The uninterrupted study.
t0="$(now)"
sweep_run "$A" "$work/A.log" || {
  rc=$?
  show_log "$work/A.log"
  fail "the uninterrupted sweep into $A exited with $rc"
}
say "uninterrupted study: $(config_files "$A" | wc -l) configuration files in $(elapsed_since "$t0") s"
"$H5PY_PYTHON" "$SWEEP_TESTS_DIR/check_study.py" check "$A" "${KILL_RESUME_GRID[@]}" ||
  fail "the uninterrupted study $A does not match tests/specs/kill-resume.yaml"

# 2. Killed once a configuration is stored, then resumed.
t0="$(now)"
sweep_start "$B" "$work/B-killed.log"
deadline=$((SECONDS + 300))
while ! has_config_file "$B"; do
  if ! alive "$SWEEP_PID"; then
    wait "$SWEEP_PID"
    rc=$?
    show_log "$work/B-killed.log"
    fail "the sweep into $B ended (exit $rc) before any configuration file appeared"
  fi
  [ "$SECONDS" -lt "$deadline" ] || { kill_sweep "$SWEEP_PID" "$B"; fail "no configuration file in $B after 300 s"; }
  sleep 0.05
done
freeze_sweep "$SWEEP_PID"  # the kill lands where the first file was seen, whatever the speed
kill_sweep "$SWEEP_PID" "$B"
mapfile -t done_at_kill < <(config_files "$B")
say "killed mpirun after $(elapsed_since "$t0") s with ${#done_at_kill[@]} configuration file(s) in B;" \
  "temporary files: $(tmp_files "$B" | wc -l)"
[ "${#done_at_kill[@]}" -lt "$TINY_CONFIGS" ] ||
  fail "the sweep had finished all $TINY_CONFIGS configurations before the kill; the test proves nothing (make tests/specs/kill-resume.yaml longer)"
sums_at_kill="$(checksums "$B")"

t0="$(now)"
sweep_run "$B" "$work/B-resume.log" --resume || {
  rc=$?
  show_log "$work/B-resume.log"
  fail "sweep --resume into $B exited with $rc"
}
say "resumed in $(elapsed_since "$t0") s: $(grep -o '([0-9]* already done)' "$work/B-resume.log")"
grep -q "(${#done_at_kill[@]} already done)" "$work/B-resume.log" || {
  show_log "$work/B-resume.log"
  fail "the resumed sweep did not report skipping the ${#done_at_kill[@]} configuration(s) finished before the kill"
}
for f in "${done_at_kill[@]}"; do
  before="$(awk -v f="$f" '$2 == f' <<<"$sums_at_kill")"
  after="$(cd "$B" && md5sum -- "$f")"
  [ "$before" = "$after" ] || fail "$f, complete before the kill, was changed by --resume (measured again?)"
done
[ -z "$(tmp_files "$B")" ] || fail "temporary files left in $B: $(tmp_files "$B" | tr '\n' ' ')"
"$H5PY_PYTHON" "$SWEEP_TESTS_DIR/check_study.py" check "$B" "${KILL_RESUME_GRID[@]}" ||
  fail "the resumed study $B does not match tests/specs/kill-resume.yaml"
"$H5PY_PYTHON" "$SWEEP_TESTS_DIR/check_study.py" compare "$A" "$B" ||
  fail "the killed and resumed study $B differs from the uninterrupted $A"

# 3. An existing study without --resume or --overwrite is refused, untouched.
sums="$(checksums "$B")"
sweep_run "$B" "$work/B-refused.log"
rc=$?
[ "$rc" -eq 2 ] || { show_log "$work/B-refused.log"; fail "a rerun into $B without --resume/--overwrite exited with $rc, expected 2"; }
grep -q -- "--resume" "$work/B-refused.log" || {
  show_log "$work/B-refused.log"
  fail "the refusal does not mention --resume"
}
say "rerun without flags refused (exit 2): $(grep -m1 'ddpscale sweep:' "$work/B-refused.log")"
[ "$sums" = "$(checksums "$B")" ] || fail "the refused rerun changed files in $B"
[ -z "$(tmp_files "$B")" ] || fail "the refused rerun left temporary files in $B"
# 4. ddpscale compare on the two real studies of the same spec: it runs, matches every
#    configuration, and prints its agreement line (agreement itself is up to 2 shared cores).
"$BIN" compare "$A" "$B" --out "$work/compare" >"$work/compare.log" 2>&1 || {
  show_log "$work/compare.log"
  fail "ddpscale compare of the uninterrupted and the resumed study failed"
}
grep -Eq "^speedups agree on [0-9]+ of [0-9]+ configurations" "$work/compare.log" || {
  show_log "$work/compare.log"
  fail "ddpscale compare printed no agreement line"
}
[ -s "$work/compare/compare.md" ] && [ -s "$work/compare/compare.csv" ] || fail "compare.md or compare.csv missing"
say "compare: $(head -1 "$work/compare.log")"
say "PASSED"
