#!/usr/bin/env python3
"""scripts/analysis/overhead_stats.py on run lines whose answer is known by construction.

Case A: in every block of 4 runs (on, off, off, on) the timed runs are exactly 2% slower
than the untimed ones, while the blocks themselves drift from 6,000 to 10,000 samples/s:
the paired estimate must be +2.00% with a zero-width interval, whatever the drift. The first
block of each launch (the launch's warm-up) has its timed runs 50% slower and must not count.
Case B: timed and untimed runs equal: 0.00%.
Exit 0 pass, 1 fail.
"""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "analysis", "overhead_stats.py")


def run_lines(case, launch, speeds_per_block, timed_factor, first_block_factor=None):
    lines = []
    for block, speed in enumerate(speeds_per_block):
        factor = first_block_factor if block == 0 and first_block_factor else timed_factor
        for i, timed in enumerate((True, False, False, True)):
            k = 4 * block + i
            sps = speed * (factor if timed else 1.0)
            rest = "step     900.0 us  fwd 1.0" if timed else "untimed (no phase timing)"
            lines.append(f"{case} launch{launch} run {k:3d}  {sps:12.1f} samples/s  {rest}  loss 1.0 -> 0.5")
    return lines


def main():
    drift = [6000.0 + 500.0 * b for b in range(9)]
    lines = run_lines("caseA", 0, drift, 0.98, 0.5) + run_lines("caseA", 1, list(reversed(drift)), 0.98, 0.5)
    lines += run_lines("caseB", 0, [5000.0] * 5, 1.0)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    out = subprocess.run([sys.executable, SCRIPT, f.name], capture_output=True, text=True, check=True).stdout
    os.unlink(f.name)
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]]
            for line in out.splitlines() if line.startswith("| case")}
    failures = []
    a, b = rows.get("caseA"), rows.get("caseB")
    if not a or a[6] != "+2.00%" or a[7] != "[+2.00%, +2.00%]":
        failures.append(f"caseA: expected paired +2.00% [+2.00%, +2.00%], got {a}")
    if a and a[2] != "16":  # 2 launches x 9 blocks, each launch's first left out
        failures.append(f"caseA: expected 16 blocks, got {a[2]}")
    if not b or b[6] != "+0.00%":
        failures.append(f"caseB: expected +0.00%, got {b}")
    print(out)
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
