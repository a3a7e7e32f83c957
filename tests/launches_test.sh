#!/usr/bin/env bash
# launches: 2 on 2 ranks: one command runs both launches, each configuration's runs split
# over them (runs 0-1 in launch 1, 2-3 in launch 2), each launch in its own processes (read
# back from HDF5 with h5py); the report reads the launches as one study; --resume skips the
# complete launches and measures a launch whose files are gone again.
# Usage: launches_test.sh DDPSCALE_BIN WORK_DIR [-- MPIRUN...]
set -uo pipefail
TEST_NAME=sweep_launches
source "$(dirname "${BASH_SOURCE[0]}")/sweep_test_lib.sh"
begin_sweep_test launches.yaml "$@"

sweep_run "$WORK/study" "$WORK/sweep.log" --no-commbench || { cat "$WORK/sweep.log"; fail "the sweep failed"; }
grep -q "launch 2 of 2: fresh processes" "$WORK/sweep.log" || { cat "$WORK/sweep.log"; fail "the driver did not start launch 2"; }
"$H5PY_PYTHON" - "$WORK/study" <<'PY' || fail "the launches are not as expected"
import glob, sys
import h5py
for world in (1, 2):
    pids_by_launch = {}
    for k in (1, 2):
        paths = glob.glob(f"{sys.argv[1]}/mlp-medium_b8_w{world}*.launch-{k}-of-2.h5")
        if len(paths) != 1:
            sys.exit(f"world {world} launch {k}: expected one file, found {paths}")
        with h5py.File(paths[0], "r") as f:
            assert int(f.attrs["launch"]) == k - 1 and int(f.attrs["launches"]) == 2, dict(f.attrs)
            runs = sorted(int(r.attrs["index"]) for r in f["runs"].values())
            expected = [0, 1] if k == 1 else [2, 3]
            if runs != expected:
                sys.exit(f"world {world} launch {k}: runs {runs}, expected {expected}")
            pids = set()
            for r in f["runs"].values():
                assert int(r.attrs["launch"]) == k - 1
                assert r.attrs["status"] in (b"ok", "ok"), r.attrs["failure"]
                ids = [int(p) for p in r["process_id"][()]]
                assert len(ids) == world and all(p > 0 for p in ids), ids
                pids.update(ids)
                names = [n.decode() if isinstance(n, bytes) else n for n in r["instruments"].attrs["names"]]
                counts = r["instrument_counts"][()].reshape(world, len(names))
                assert (counts[:, names.index("cpu_cores")] > 0).all(), "no cores recorded"
                assert (counts[:, names.index("context_switches")] == 2).all(), counts
            pids_by_launch[k] = pids
    if pids_by_launch[1] & pids_by_launch[2]:
        sys.exit(f"world {world}: launches share processes {pids_by_launch}")
    print(f"world {world}: launch 1 pids {sorted(pids_by_launch[1])}, launch 2 pids {sorted(pids_by_launch[2])}")
PY

"$BIN" report "$WORK/study" --out "$WORK/report" >"$WORK/report.log" 2>&1 || { cat "$WORK/report.log"; fail "report failed"; }
grep -q "Launches and speed levels" "$WORK/report/report.md" || fail "the report has no launches section"
grep -q "runs came from 2 launches" "$WORK/report/report.md" || fail "the report does not say the runs came from 2 launches"

sweep_run "$WORK/study" "$WORK/resume.log" --no-commbench --resume || { cat "$WORK/resume.log"; fail "--resume failed"; }
grep -q "launch 1 of 2: complete, skipped" "$WORK/resume.log" && grep -q "launch 2 of 2: complete, skipped" "$WORK/resume.log" ||
  { cat "$WORK/resume.log"; fail "--resume did not skip the complete launches"; }

# One launch's files gone: --resume measures that launch again, and only it.
rm "$WORK"/study/*.launch-2-of-2.h5
sweep_run "$WORK/study" "$WORK/resume2.log" --no-commbench --resume || { cat "$WORK/resume2.log"; fail "--resume failed"; }
grep -q "launch 1 of 2: complete, skipped" "$WORK/resume2.log" && grep -q "launch 2 of 2: fresh processes" "$WORK/resume2.log" ||
  { cat "$WORK/resume2.log"; fail "--resume did not run only launch 2"; }
[ "$(ls "$WORK"/study/*.launch-2-of-2.h5 | wc -l)" = 2 ] || fail "launch 2's files were not written again"
say "PASSED"
