#!/usr/bin/env bash
# The paired design with more ranks than the widest configuration: interleaved.yaml's 1- and
# 2-rank twins on 3 ranks, as a 4-GPU machine runs a spec of 1 and 2 GPUs on all four. The
# rank outside every N-rank group must wait out the windows' blocks (no N-rank session of its
# own), and the blocks must be right (check_paired_blocks.py).
# Usage: paired_spare_rank_test.sh DDPSCALE_BIN WORK_DIR [-- MPIRUN...]
set -uo pipefail
TEST_NAME=sweep_paired_spare_rank
source "$(dirname "${BASH_SOURCE[0]}")/sweep_test_lib.sh"
begin_sweep_test interleaved.yaml "$@"

"${MPIRUN[@]}" -np 3 "$BIN" sweep "$SPEC" --out "$WORK/study" --no-commbench >"$WORK/sweep.log" 2>&1 ||
  { tail -n 40 "$WORK/sweep.log"; fail "the sweep on 3 ranks failed"; }
"$H5PY_PYTHON" "$SWEEP_TESTS_DIR/check_paired_blocks.py" "$WORK/study" || fail "the paired blocks on 3 ranks are not right"
say "PASSED"
