#!/usr/bin/env python3
"""scripts/analysis/kernel_launches.py on two small traces with known answers (by hand):
- A (Kineto's layout, a dict with traceEvents): the LSTM kernel 4 times on grid 132x1x1,
  block 256x1x1, 168 registers, 98304 B shared, lasting 800, 810, 830, 840 us (median 820.0);
  one GEMM; a cudaGraphLaunch runtime event (not a kernel: left out).
- B (a bare list of events, which chrome://tracing also reads): the LSTM kernel twice on the
  same shape (790, 800: median 795.0) and twice on grid 66x1x1 (900, 910: median 905.0).
With --steps 2 the calls read per step: A's shape 2, B's 1 and 1. --match LSTM drops the GEMM.
A trace with no kernels is an error that names the file.
Exit 0 pass, 1 fail.
"""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "analysis", "kernel_launches.py")
LSTM = "RNN_blockPersist_fp_LSTM<float, float, float, 128, 5, true>"


def kernel(name, dur, grid, registers=168, shared=98304):
    return {"ph": "X", "cat": "kernel", "name": name, "ts": 0, "dur": dur,
            "args": {"grid": grid, "block": [256, 1, 1], "registers per thread": registers, "shared memory": shared}}


def main():
    tmp = tempfile.mkdtemp()
    a, b, empty = (os.path.join(tmp, n) for n in ("a.json", "b.json", "empty.json"))
    with open(a, "w") as f:
        json.dump({"traceEvents": [kernel(LSTM, d, [132, 1, 1]) for d in (840, 800, 830, 810)]
                   + [kernel("sgemm_largek_lds64", 10, [8, 4, 1], 90, 0),
                      {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "ts": 0, "dur": 5}]}, f)
    with open(b, "w") as f:
        json.dump([kernel(LSTM, 790, [132, 1, 1]), kernel(LSTM, 800, [132, 1, 1]),
                   kernel(LSTM, 900, [66, 1, 1]), kernel(LSTM, 910, [66, 1, 1])], f)
    with open(empty, "w") as f:
        json.dump({"traceEvents": []}, f)
    out = subprocess.run([sys.executable, SCRIPT, "--match", "LSTM", "--steps", "2", a, b],
                         capture_output=True, text=True, check=True).stdout
    print(out)
    name = "RNN_blockPersist_fp_LSTM"  # template arguments cut, as in the kernel tables
    expected = [f"| {name} | 132x1x1 | 256x1x1 | 168 | 98304 | 2 | 820.0 | 1 | 795.0 |",
                f"| {name} | 66x1x1 | 256x1x1 | 168 | 98304 | - | - | 1 | 905.0 |"]
    failures = [line for line in expected if line not in out.splitlines()]
    failures += ["the GEMM was not filtered out"] if "sgemm" in out else []
    failures += ["a runtime event was read as a kernel"] if "cudaGraphLaunch" in out else []
    single = subprocess.run([sys.executable, SCRIPT, a], capture_output=True, text=True, check=True).stdout
    if "| sgemm_largek_lds64 | 8x4x1 | 256x1x1 | 90 | 0 | 1 | 10.0 |" not in single.splitlines():
        failures.append("one trace: the GEMM row is missing or wrong:\n" + single)
    none = subprocess.run([sys.executable, SCRIPT, empty], capture_output=True, text=True)
    if none.returncode == 0 or "empty.json" not in none.stderr:
        failures.append(f"a trace with no kernels: rc {none.returncode}, stderr {none.stderr!r}")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
