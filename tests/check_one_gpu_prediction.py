#!/usr/bin/env python3
"""scripts/check-one-gpu-prediction.py on one study given as two leases (the same data):
every N-rank configuration is checked once per lease, each lease against a profile built
from the other one alone, and the pooled profile holds the study's own model errors (those
`ddpscale predict` writes to node-sharing.yaml) once per lease, in order. The same study
given a third time with --test is checked once more, out of sample, against the pooled profile.

  check_one_gpu_prediction.py DDPSCALE STUDY SCRATCH
"""
import os
import re
import subprocess
import sys

import yaml


def fail(message):
    sys.exit("check_one_gpu_prediction: " + message)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ddpscale, study, scratch = sys.argv[1:]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    own = os.path.join(scratch, "own")
    subprocess.run([ddpscale, "predict", study, "--gpus", "2", "--allreduce", "h100-nvlink-2gpu", "--draws", "500",
                    "--no-plots", "--out", own], check=True, capture_output=True)
    with open(os.path.join(own, "node-sharing.yaml")) as f:
        errors = yaml.safe_load(f)["node_sharing"]["step_errors"]
    done = subprocess.run([sys.executable, os.path.join(root, "scripts", "check-one-gpu-prediction.py"),
                           "--interconnect", "h100-nvlink-2gpu", "--ddpscale", ddpscale,
                           "--lease", "a=" + study, "--lease", "b=" + study, "--test", "c=" + study], capture_output=True, text=True)
    if done.returncode != 0:
        fail("the script failed:\n" + done.stderr)
    out = done.stdout
    n = len(errors)
    for label, count in (("lease a", n), ("lease b", n), ("all", 2 * n), ("c, 2 GPUs", n)):
        if not re.search(r"^\| %s \| %d \| [0-9.]+%% \| [+-][0-9.]+%% \| \d+ of %d \(\d+%%\) \| [0-9.]+%% \|$"
                         % (label, count, count),
                         out, re.M):
            fail(f"no row '{label}' of {count} configurations in:\n{out}")
    pooled = yaml.safe_load(out.split("(for the entry's node_sharing):", 1)[1])["node_sharing"]["step_errors"]
    # Both sides read the same numbers from node-sharing.yaml (a model-only step error does not
    # depend on the draws) and round them alike: they are equal exactly.
    expected = [round(e, 4) for e in errors] * 2
    if pooled != expected:
        fail(f"pooled errors {pooled}, expected the study's own {expected}")
    print(f"check_one_gpu_prediction: ok: {n} configurations per lease, pooled profile of {len(pooled)} errors")


if __name__ == "__main__":
    main()
