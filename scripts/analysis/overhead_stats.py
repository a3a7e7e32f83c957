#!/usr/bin/env python3
"""Phase-timing overhead from the run lines scripts/gpu/phase-timing-overhead.sh collects.

Each input line: CASE LAUNCH run K <samples/s> samples/s (step ... | untimed ...).
`ddpscale train --alternate-phase-timing` times runs 0 and 3 of every block of 4 and leaves
runs 1 and 2 untimed. Per block: log(mean timed / mean untimed), a paired comparison of
runs less than a second apart. The first block of each launch is left out (the process's
own warm-up: allocator, cuBLAS handles, page faults). Overhead = 1 - exp(mean of the block
log ratios), in percent, with a 95% bootstrap percentile interval over blocks (10,000
resamples, fixed seed). The unpaired figure (1 - median timed / median untimed over all
runs) is printed beside it. Standard library only: the GPU machine's Python is not ours
to install into.
"""
import math
import random
import statistics
import sys
from collections import defaultdict


def block_log_ratios(runs):
    """runs: {index: (samples_per_second, timed)} of one launch -> one log ratio per full block."""
    ratios = []
    for block in range(1, max(runs) // 4 + 1):  # block 0 is the launch's warm-up
        members = [runs.get(4 * block + i) for i in range(4)]
        if any(m is None for m in members):
            continue
        timed = [s for s, t in members if t]
        untimed = [s for s, t in members if not t]
        if len(timed) != 2 or len(untimed) != 2:
            sys.exit(f"block {block}: expected runs timed on, off, off, on; was --alternate-phase-timing given?")
        ratios.append(math.log(statistics.fmean(timed) / statistics.fmean(untimed)))
    return ratios


def overhead_percent(log_ratios):
    return 100.0 * (1.0 - math.exp(statistics.fmean(log_ratios)))


def bootstrap_interval(log_ratios, resamples=10000, seed=12345):
    rng = random.Random(seed)
    values = sorted(overhead_percent(rng.choices(log_ratios, k=len(log_ratios))) for _ in range(resamples))
    return values[int(0.025 * resamples)], values[int(0.975 * resamples) - 1]


def read_runs(path):
    """-> {case: {launch: {index: (samples_per_second, timed)}}}"""
    cases = defaultdict(lambda: defaultdict(dict))
    with open(path) as lines:
        for line in lines:
            fields = line.split()
            if len(fields) < 7 or fields[2] != "run" or fields[5] != "samples/s":
                continue
            cases[fields[0]][fields[1]][int(fields[3])] = (float(fields[4]), fields[6] != "untimed")
    return cases


def main(path):
    cases = read_runs(path)
    if not cases:
        sys.exit(f"{path}: no run lines")
    print("| case | launches | blocks | median samples/s, timed runs | untimed runs | unpaired overhead | paired overhead | 95% CI (paired) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for case, launches in cases.items():
        ratios = [r for runs in launches.values() for r in block_log_ratios(runs)]
        timed = [s for runs in launches.values() for s, t in runs.values() if t]
        untimed = [s for runs in launches.values() for s, t in runs.values() if not t]
        if len(ratios) < 2:
            print(f"| {case} | {len(launches)} | {len(ratios)} | too few blocks | | | | |")
            continue
        low, high = bootstrap_interval(ratios)
        unpaired = 100.0 * (1.0 - statistics.median(timed) / statistics.median(untimed))
        print(f"| {case} | {len(launches)} | {len(ratios)} | {statistics.median(timed):.1f} | "
              f"{statistics.median(untimed):.1f} | {unpaired:+.2f}% | {overhead_percent(ratios):+.2f}% | "
              f"[{low:+.2f}%, {high:+.2f}%] |")


if __name__ == "__main__":
    main(sys.argv[1])
