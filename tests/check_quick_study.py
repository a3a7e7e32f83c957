#!/usr/bin/python3
"""Checks the study that `ddpscale sweep experiments/quick.yaml` wrote (test sweep_quick_study).

Usage: /usr/bin/python3 check_quick_study.py DIR   (exit 77: h5py or numpy missing)

The grid below is experiments/quick.yaml written out by hand, so that a bug in the spec
expansion shows up here instead of being mirrored: mlp-medium and mlp-large x batch 8 and 64
x world 1 and 2 = 8 configurations over 4 launches (32 files), 4 runs each (1 per launch) of
3 warm-up + 20 measured steps, seed 42. Keep it in step with quick.yaml. The checks themselves are in check_study.py.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_study  # noqa: E402  (exits 77 itself when h5py or numpy is missing)

QUICK = ["--models", "mlp-medium,mlp-large", "--batches", "8,64", "--worlds", "1,2",
         "--runs", "4", "--launches", "4", "--warmup", "3", "--steps", "20", "--seed", "42", "--commbench"]

if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.argv = [sys.argv[0], "check", sys.argv[1]] + QUICK
    sys.exit(check_study.main())
