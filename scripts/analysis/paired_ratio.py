#!/usr/bin/env python3
"""ddpscale eager against PyTorch DDP, paired round by round (scripts/gpu/gpu-benchmark.sh).

Usage: paired_ratio.py [--target 1.5] ROUND_DIR [ROUND_DIR ...]
Each ROUND_DIR holds one round: report/summary.csv (`ddpscale report` of that round's
ddpscale sweep) and pytorch-*.jsonl (scripts/gpu/pytorch_ddp_reference.py on 1 and 2 GPUs),
measured back to back. An eager step is host work, and on the GPU machine the host's speed
drifts by up to 2.5x within minutes (docs/benchmarks.md, 2026-11-23), so medians taken
minutes apart compare the drift, not the programs. Within a round both sides meet the same
host; the rounds run in the order ddpscale, PyTorch | PyTorch, ddpscale | ... so a steady
drift favours neither side.

Per configuration (model, batch per GPU, GPUs) and round: r = ddpscale's median samples/s
over its runs / PyTorch's. Over rounds: the geometric mean of r with a 95% t-interval on
log r (df = rounds - 1). Verdict against the target: "yes" when the interval's lower end is
at or above it, "no" when its upper end is below, else "undecided". Standard library only.
"""
import argparse
import glob
import math
import os
import statistics
import sys

from compare_with_pytorch import read_ddpscale, read_pytorch  # this script's folder is on sys.path

# Two-sided 95% quantiles t(0.975, df), df = 1..30 (any statistics textbook's t table, e.g.
# NIST/SEMATECH e-Handbook 1.3.6.7.2); the normal 1.960 beyond.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df):
    return T975[df - 1] if df <= len(T975) else 1.960


def read_round(directory):
    """{(model, batch, world): (ours, theirs)} for the configurations both sides measured."""
    ours = read_ddpscale(os.path.join(directory, "report", "summary.csv"))
    theirs = read_pytorch(sorted(glob.glob(os.path.join(directory, "pytorch-*.jsonl"))))
    pairs = {}
    for key, reference in theirs.items():
        row = ours.get(key + ("eager",))
        if row and row["samples_per_s_median"]:
            pairs[key] = (float(row["samples_per_s_median"]), float(reference["samples_per_s"]))
    return pairs


def paired_ratio(ratios):
    """Geometric mean of the ratios and its 95% t-interval (NaN bounds for one round)."""
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), float("nan"), float("nan")
    half = t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def verdict(low, high, target):
    if low != low:
        return "undecided (one round)"
    if low >= target:
        return "yes"
    if high < target:
        return "no"
    return "undecided"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rounds", nargs="+", help="round folders (report/summary.csv and pytorch-*.jsonl in each)")
    parser.add_argument("--target", type=float, default=1.5, help="ratio to judge against (default 1.5)")
    args = parser.parse_args(argv)
    rounds = []
    for directory in args.rounds:
        try:
            rounds.append(read_round(directory))
        except OSError as e:
            print(f"paired_ratio: skipping round {directory}: {e}", file=sys.stderr)
    if not rounds:
        print("paired_ratio: no readable round", file=sys.stderr)
        return 1
    keys = sorted(set().union(*rounds), key=lambda k: (k[0], k[2], k[1]))
    print(f"| model | batch/GPU | GPUs | rounds | eager / PyTorch per round | geometric mean [95% CI] | at least {args.target:g}x? |")
    print("|---|---:|---:|---:|---|---|---|")
    counts = {}
    for key in keys:
        ratios = [r[key][0] / r[key][1] for r in rounds if key in r]
        mean, low, high = paired_ratio(ratios)
        answer = verdict(low, high, args.target)
        counts[answer.split(" ")[0]] = counts.get(answer.split(" ")[0], 0) + 1
        interval = "n/a" if low != low else f"[{low:.2f}, {high:.2f}]"
        per_round = ", ".join(f"{r:.2f}" for r in ratios)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {len(ratios)} | {per_round} | {mean:.2f}x {interval} | {answer} |")
    print()
    print(f"{len(keys)} configurations over {len(rounds)} rounds: " +
          ", ".join(f"{counts.get(k, 0)} {k}" for k in ("yes", "no", "undecided")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
