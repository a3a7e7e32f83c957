#!/usr/bin/env python3
"""scripts/check-node-sharing-model.py on synthetic entries with costs at 1, 2 and 4 GPUs,
each count's errors exp(m_N + r) - 1 with the same residuals r = -0.05, 0, +0.05 about a median
log inflation m_N (m_1 = 0, m_2 = a = 0.08). Carried to 4 GPUs the cost is 2's unchanged
(median 0.0800, +8.3%), widened by a model sd of hypot(se, g) = 0.0539: its median's standard
error se = sqrt(pi / 2) x 0.05 / sqrt 3 = 0.036180, and half the gap to the log2 N line, which
through (0, 0) and (1, a), or through the origin and (1, a) alone, says 2a at x = 2: g = a / 2 =
0.04. Its 18 log values (each residual at -sqrt 3, 0 x 4, +sqrt 3 model sds) put the 95% range
(R's type 7) at [-0.0422, 0.2022]; the three errors unwidened, at [0.0325, 0.1275].

- the carry holds (m_4 = a): 0.0800 against 0.0800 measured, the typical step off by +0.0%;
  all three measured errors (logs 0.03, 0.08, 0.13) inside the widened range, 1 of 3 inside
  the unwidened one.
- it does not (m_4 = 3a, N - 1 growth): 0.0800 against 0.2400, the typical step off by
  exp(a - 3a) - 1 = -14.8%; of the logs 0.19, 0.24, 0.29 one is inside the widened range.

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
        yaml.safe_dump({"interconnects": {"holds": entry(A), "misses": entry(3 * A)}}, f)

    model = r"model sd 0\.0539 \(its median's 0\.0362, half the gap to log2 N 0\.0400\)"
    holds = run(catalog, "holds", "--hold-out", "4", "--keep", "1,2")
    expect(r"median log\(1 \+ error\) 0\.0800 against 0\.0800 measured; " + model, holds, "holds")
    expect(r"^\| carried from 1, 2: the 2-GPU cost, widened \| \+8\.3% \| \+0\.0% \| 3 of 3 \(100%\) \|$", holds,
           "holds")
    expect(r"^\| the 2-GPU cost as measured, not widened \| \+8\.3% \| \+0\.0% \| 1 of 3 \(33%\) \|$", holds, "holds")
    origin = run(catalog, "holds", "--hold-out", "4", "--keep", "2")
    expect(r"0\.0800 against 0\.0800 measured; " + model, origin, "through the origin")
    misses = run(catalog, "misses")  # keeps every count below 4: 1 and 2
    expect(r"median log\(1 \+ error\) 0\.0800 against 0\.2400 measured", misses, "misses")
    expect(r"^\| carried from 1, 2: the 2-GPU cost, widened \| \+8\.3% \| -14\.8% \| 1 of 3 \(33%\) \|$", misses,
           "misses")
    expect(r"has no cost measured at 8 GPUs to hold out \(it has \[1, 2, 4\]\)",
           run(catalog, "holds", "--hold-out", "8", expect_ok=False), "no such count")
    expect(r"no kept cost at 2 or more GPUs to carry", run(catalog, "holds", "--keep", "1", expect_ok=False),
           "one GPU alone")
    print("check_node_sharing_model: ok")


if __name__ == "__main__":
    main()
