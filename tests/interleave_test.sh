#!/usr/bin/env bash
# The default run order on 2 ranks (a spec without interleave_runs): each 1-rank configuration and its 2-rank twin alternate run by
# run in the order A B B A A B B A, read back from the runs' start times (start_unix_ms) with
# h5py; and the study is complete and sound (check_study.py: every run ok, replicas agreed),
# with the twins sharing one model between their runs.
# Usage: interleave_test.sh DDPSCALE_BIN WORK_DIR [-- MPIRUN...]
set -uo pipefail
TEST_NAME=sweep_interleave
source "$(dirname "${BASH_SOURCE[0]}")/sweep_test_lib.sh"
begin_sweep_test interleaved.yaml "$@"

sweep_run "$WORK/study" "$WORK/sweep.log" --no-commbench || { cat "$WORK/sweep.log"; fail "the sweep failed"; }
"$H5PY_PYTHON" "$SWEEP_TESTS_DIR/check_study.py" check "$WORK/study" --models mlp-medium --batches 8,16 --worlds 1,2 \
  --runs 4 --warmup 1 --steps 3 --seed 7 --no-commbench || fail "the interleaved study is not right"
"$H5PY_PYTHON" - "$WORK/study" <<'PY' || fail "the runs were not interleaved A B B A"
import glob, sys
import h5py
for batch, first in ((8, 1), (16, 2)):  # the sweep's ABBA order of world sizes per batch size
    starts = []
    for path in glob.glob(f"{sys.argv[1]}/mlp-medium_b{batch}_w*.h5"):
        with h5py.File(path, "r") as f:
            world = int(f["params"].attrs["world_size"])
            starts += [(int(run.attrs["start_unix_ms"]), world, int(run.attrs["index"])) for run in f["runs"].values()]
    order = [world for _, world, _ in sorted(starts)]
    other = 3 - first
    expected = [first, other, other, first] * 2
    print(f"batch {batch}: run order by start time {order}, expected {expected}")
    if order != expected:
        sys.exit(1)
PY
say "PASSED"
