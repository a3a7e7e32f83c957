#!/usr/bin/env python3
"""Phase-timing overhead from the run lines scripts/phase-timing-overhead.sh collects.

Each input line: CASE timing-on|timing-off run K <samples/s> samples/s ...
Overhead = 1 - median(on) / median(off), in percent, with a 95% bootstrap percentile
interval (runs resampled within each arm, 10,000 resamples, fixed seed). Standard library
only, because the GPU machine's Python is not ours to install into.
"""
import random
import statistics
import sys
from collections import defaultdict


def overhead_percent(on, off):
    return 100.0 * (1.0 - statistics.median(on) / statistics.median(off))


def bootstrap_interval(on, off, resamples=10000, seed=12345):
    rng = random.Random(seed)
    values = sorted(
        overhead_percent(rng.choices(on, k=len(on)), rng.choices(off, k=len(off))) for _ in range(resamples))
    return values[int(0.025 * resamples)], values[int(0.975 * resamples) - 1]


def main(path):
    arms = defaultdict(lambda: {"on": [], "off": []})
    with open(path) as lines:
        for line in lines:
            fields = line.split()
            if len(fields) < 6 or fields[2] != "run" or fields[5] != "samples/s":
                continue
            arms[fields[0]][fields[1].removeprefix("timing-")].append(float(fields[4]))
    if not arms:
        sys.exit(f"{path}: no run lines")
    print("| case | runs on / off | median samples/s, timing on | timing off | overhead | 95% CI |")
    print("|---|---|---:|---:|---:|---|")
    for case, arm in arms.items():
        on, off = arm["on"], arm["off"]
        if len(on) < 2 or len(off) < 2:
            print(f"| {case} | {len(on)} / {len(off)} | too few runs | | | |")
            continue
        low, high = bootstrap_interval(on, off)
        print(f"| {case} | {len(on)} / {len(off)} | {statistics.median(on):.1f} | {statistics.median(off):.1f} | "
              f"{overhead_percent(on, off):+.2f}% | [{low:+.2f}%, {high:+.2f}%] |")


if __name__ == "__main__":
    main(sys.argv[1])
