#!/usr/bin/env bash
# Test sweep_quick_study (labels mpi;study): experiments/quick.yaml end to end on 2 ranks
# into a fresh OUT_DIR, then read back with h5py by tests/check_quick_study.py.
#
#   bash tests/quick_study_test.sh DDPSCALE_BIN OUT_DIR [-- MPIRUN PREFIX...]
#
# OUT_DIR stays behind for the tests that need a real study (CTest fixture quick_study).
# The sweep's wall time is printed; the quick study of README.md should take under 5 minutes on the 2-core CPU
# machine (a warning, not a failure: shared CI machines are slower some days).
set -uo pipefail
TEST_NAME=sweep_quick_study
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/sweep_test_lib.sh"

BIN="${1:?usage: quick_study_test.sh DDPSCALE_BIN OUT_DIR [-- MPIRUN...]}"
out="${2:?usage: quick_study_test.sh DDPSCALE_BIN OUT_DIR [-- MPIRUN...]}"
shift 2
mpirun_from_args "$@"
SPEC="$here/../experiments/quick.yaml"
[ -x "$BIN" ] || fail "ddpscale executable $BIN not found"
require_h5py

rm -rf "$out" "$out.log"
mkdir -p "$(dirname "$out")"
start=$SECONDS
# Stamped lines: sweep_eta_accuracy sets the progress estimates in $out.log against the time
# really left.
sweep_run_stamped "$out" "$out.log" || {
  rc=$?
  show_log "$out.log" 40
  fail "ddpscale sweep experiments/quick.yaml exited with $rc (log: $out.log)"
}
seconds=$((SECONDS - start))
grep ' \[sweep\]' "$out.log" | tail -n 3
say "quick.yaml: $seconds s on 2 ranks"
[ "$seconds" -le 300 ] || say "WARNING: quick.yaml took $seconds s, over the 5 minutes README.md's quick study should take"
"$H5PY_PYTHON" "$here/check_quick_study.py" "$out" || fail "the quick study in $out is not right"
"$H5PY_PYTHON" "$here/check_paired_blocks.py" "$out" || fail "the quick study's paired blocks in $out are not right"
say "PASSED"
