#!/usr/bin/env python3
"""scripts/check-node-sharing-model.py on synthetic entries with costs at 1, 2 and 4 GPUs,
each count's errors exp(m_N + r) - 1 with the same residuals r = -0.05, 0, +0.05 about a median
log inflation m_N (m_1 = 0, m_2 = a = 0.08):

- the growth model holds (m_4 = 3a, N - 1): kept 1 and 2, the line through (0, 0) and (1, a)
  gives 3a = 0.2400 at 4 GPUs, as measured; the typical step is off by +0.0% and all three
  measured errors lie inside the carried range. Its model sd: the fit's weights at x = 3 are
  -2 and 3 on two medians of standard error sqrt(pi / 2) x 0.05 / sqrt 3 = 0.036180, so
  sqrt(13) x 0.036180 = 0.13045; the log2 N fit says 2a, half the gap a / 2 = 0.04:
  sqrt(0.13045^2 + 0.04^2) = 0.1364. The 2-GPU cost applied unchanged misses the typical step
  by exp(a - 3a) - 1 = -14.8%. Kept 2 alone (through the origin): the fit's sd
  3 x 0.036180 = 0.1085, model sd 0.1157.
- it does not (m_4 = 2a, log2 N): carried 0.2400 against 0.1600 measured, the typical step
  off by exp(3a - 2a) - 1 = +8.3%.

  check_node_sharing_model.py SCRATCH
"""
import math
import os
import re
import subprocess
import sys

import yaml

A = 0.08
RESIDUALS = [-0.05, 0.0, 0.05]


def fail(message):
    sys.exit("check_node_sharing_model: FAIL: " + message)


def entry(mean_at_4):
    costs = [(1, 0.0), (2, A), (4, mean_at_4)]
    return {"about": "synthetic", "measured": "2026-11-27", "source": "tests/check_node_sharing_model.py",
            "gpus": 4, "bytes": [1000, 1000000], "time_us": [10, 100],
            "node_sharing": [{"gpus": n, "source": "synthetic",
                              "step_errors": [math.expm1(m + r) for r in RESIDUALS]} for n, m in costs]}


def run(catalog, name, *extra, expect_ok=True):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "check-node-sharing-model.py")
    done = subprocess.run([sys.executable, script, "--interconnects", catalog, "--interconnect", name, *extra],
                          capture_output=True, text=True)
    if (done.returncode == 0) != expect_ok:
        fail(f"{name} {extra}: exit {done.returncode}\n{done.stdout}{done.stderr}")
    return done.stdout + done.stderr


def expect(pattern, text, what):
    if not re.search(pattern, text, re.M):
        fail(f"{what}: no match for {pattern!r} in:\n{text}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    scratch = sys.argv[1]
    os.makedirs(scratch, exist_ok=True)
    catalog = os.path.join(scratch, "interconnects.yaml")
    with open(catalog, "w") as f:
        yaml.safe_dump({"interconnects": {"holds": entry(3 * A), "misses": entry(2 * A)}}, f)

    holds = run(catalog, "holds", "--hold-out", "4", "--keep", "1,2")
    expect(r"median log\(1 \+ error\) 0\.2400 against 0\.2400 measured; model sd 0\.1364 \(fit 0\.1304, "
           r"half the gap to log2 N 0\.0400\)", holds, "holds")
    expect(r"^\| carried from 1, 2 by N - 1 growth \| \+27\.1% \| \+0\.0% \| 3 of 3 \(100%\) \|$", holds, "holds")
    expect(r"^\| the 2-GPU cost unchanged \| \+8\.3% \| -14\.8% \| 0 of 3 \(0%\) \|$", holds, "holds")
    origin = run(catalog, "holds", "--hold-out", "4", "--keep", "2")
    expect(r"0\.2400 against 0\.2400 measured; model sd 0\.1157 \(fit 0\.1085, half the gap to log2 N 0\.0400\)",
           origin, "through the origin")
    misses = run(catalog, "misses")  # keeps every count below 4: 1 and 2
    expect(r"median log\(1 \+ error\) 0\.2400 against 0\.1600 measured", misses, "misses")
    expect(r"^\| carried from 1, 2 by N - 1 growth \| \+27\.1% \| \+8\.3% \|", misses, "misses")
    expect(r"has no cost measured at 8 GPUs to hold out \(it has \[1, 2, 4\]\)",
           run(catalog, "holds", "--hold-out", "8", expect_ok=False), "no such count")
    expect(r"no kept cost at 2 or more GPUs to carry", run(catalog, "holds", "--keep", "1", expect_ok=False),
           "one GPU alone")
    print("check_node_sharing_model: ok")


if __name__ == "__main__":
    main()
