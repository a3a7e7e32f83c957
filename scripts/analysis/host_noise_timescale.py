#!/usr/bin/env python3
"""How long the host's speed stays put, read from a study's own runs: what decides whether
more runs per launch, more steps per run or more launches narrow a speedup's interval.

Usage: host_noise_timescale.py STUDY_DIR [--lags 0,0.5,1,2,4,8,15,30,60,120,300]

Reads every run of every configuration file in STUDY_DIR (what `ddpscale sweep` writes: one
file per configuration and launch) with h5py, and prints three tables.

1. Runs against time. A run's residual is its log samples/s minus the mean log samples/s of
   its configuration. Every pair of runs falls into a bin by the time between their starts;
   per bin, the correlation of the pairs' residuals (mean of e_i * e_j over the bin's pairs,
   over the variance of all residuals) and the share of the bin's pairs from one launch. Near 1
   at some lag: runs that far apart meet the same host speed. Near 0: they draw it afresh.
2. Per comparison (an N-rank configuration and the 1-rank configuration whose id differs only
   in the world size, "_wN_"; weak scaling pairs so), paired by launch: each launch's log
   speedup, log(mean N-rank samples/s / mean 1-rank samples/s) over the launch's runs, and
     sd        the standard deviation of that over launches;
     sd(R)*vR  for R = 2 and 4, the standard deviation of the means of R consecutive launches
               times sqrt(R): about sd where launches are independent draws (then each launch
               adds as much as the first), above sd where neighbouring launches move together;
     halves    the correlation, over launches, between the log speedup from the first half of
               each run's steps and from its second half (the slowest rank's step time): near 1,
               the speedup's noise outlasts a run, and longer runs would not narrow it.
3. What that implies, per comparison: the launches a +-5% interval needs at that sd (the
   two-level interval's half-width is about t(0.975, L - 1) * sd / sqrt(L); the report's
   sizing column computes the same from the interval itself).

numpy and h5py (Debian: python3-numpy python3-h5py).
"""
import argparse
import collections
import glob
import math
import os
import re
import sys

import numpy as np

FILE_NAME = re.compile(r"^(?P<id>.+?)(?:\.launch-(?P<launch>\d+)-of-(?P<launches>\d+))?\.h5$")
WORLD = re.compile(r"_w(\d+)_")

Run = collections.namedtuple("Run", "config world launch start_s samples_per_s step_us")


def read_study(study_dir):
    """Every run with status ok of every configuration file in study_dir."""
    import h5py

    runs = []
    for path in sorted(glob.glob(os.path.join(study_dir, "*.h5"))):
        match = FILE_NAME.match(os.path.basename(path))
        if not match or os.path.basename(path) == "study.h5":
            continue
        world = WORLD.search(match["id"])
        if not world:
            continue
        with h5py.File(path, "r") as f:
            if "runs" not in f:
                continue
            for run in f["runs"].values():
                if run.attrs.get("status", b"ok") not in (b"ok", "ok"):
                    continue
                phases = [p.decode() if isinstance(p, bytes) else p for p in run["phase_us"].attrs["phases"]]
                step = run["phase_us"][:, phases.index("step"), :].max(axis=0)  # the slowest rank's
                runs.append(Run(match["id"], int(world[1]), int(run.attrs["launch"]),
                                float(run.attrs["start_unix_ms"]) / 1000.0, float(run.attrs["samples_per_second"]),
                                np.asarray(step, dtype=np.float64)))
    return runs


def lag_correlations(runs, edges):
    """[(low, high, pairs, correlation, same-launch share)] per lag bin of run starts."""
    by_config = collections.defaultdict(list)
    for r in runs:
        by_config[r.config].append(math.log(r.samples_per_s))
    centre = {c: float(np.mean(v)) for c, v in by_config.items()}
    t = np.array([r.start_s for r in runs])
    e = np.array([math.log(r.samples_per_s) - centre[r.config] for r in runs])
    launch = np.array([r.launch for r in runs])
    variance = float(np.mean(e * e))
    i, j = np.triu_indices(len(runs), 1)  # every pair once
    lag = np.abs(t[j] - t[i])
    product = e[i] * e[j]
    same_launch = launch[i] == launch[j]
    rows = []
    for low, high in zip(edges, edges[1:]):
        inside = (lag >= low) & (lag < high)
        n = int(inside.sum())
        corr = float(np.mean(product[inside]) / variance) if n and variance > 0 else float("nan")
        same = float(np.mean(same_launch[inside])) if n else float("nan")
        rows.append((low, high, n, corr, same))
    return rows


def comparisons(runs):
    """{N-rank config: (1-rank config, N)} for configurations whose twin differs only in "_wN_"."""
    configs = {r.config: r.world for r in runs}
    pairs = {}
    for config, world in configs.items():
        if world < 2:
            continue
        twin = WORLD.sub("_w1_", config, count=1)
        if twin in configs:
            pairs[config] = (twin, world)
    return pairs


def launch_log_speedups(runs, n_config, one_config, half=None):
    """Per launch present on both sides, in launch order: log(mean N / mean 1) of samples/s,
    or with half = 0 or 1 of 1 / mean step time over that half of each run's steps."""
    def per_launch(config):
        values = collections.defaultdict(list)
        for r in runs:
            if r.config != config:
                continue
            if half is None:
                values[r.launch].append(r.samples_per_s)
            else:
                middle = len(r.step_us) // 2
                part = r.step_us[:middle] if half == 0 else r.step_us[middle:]
                values[r.launch].append(1.0 / float(np.mean(part)))
        return {k: float(np.mean(v)) for k, v in values.items()}

    n_side, one_side = per_launch(n_config), per_launch(one_config)
    return np.array([math.log(n_side[k] / one_side[k]) for k in sorted(set(n_side) & set(one_side))])


def grouped_sd(values, size):
    """The standard deviation of the means of `size` consecutive values, times sqrt(size)
    (the sd of single values where they are independent); NaN with fewer than 3 groups."""
    groups = len(values) // size
    if groups < 3:
        return float("nan")
    means = np.asarray(values[: groups * size], dtype=np.float64).reshape(groups, size).mean(axis=1)
    return float(np.std(means, ddof=1) * math.sqrt(size))


def t975(df):
    """Student's t 0.975 quantile: exact for df = 1 (tan(0.475 pi)) and 2 (0.95 / sqrt(0.04875)),
    tabled for 3 and 4, and for df >= 5 the Cornish-Fisher series of Abramowitz and Stegun
    26.7.5 (within 3e-4 of the exact value there)."""
    exact = {1: math.tan(0.475 * math.pi), 2: 0.95 / math.sqrt(0.04875), 3: 3.182446305, 4: 2.776445105}
    if df < 1:
        return float("nan")
    if df in exact:
        return exact[df]
    z = 1.959963984540054
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4


def launches_for(sd, target, most=1000):
    """The least L >= 2 with t(0.975, L - 1) * sd / sqrt(L) <= asinh(target); None beyond most."""
    if not (sd > 0):
        return 2
    for launches in range(2, most + 1):
        if t975(launches - 1) * sd / math.sqrt(launches) <= math.asinh(target):
            return launches
    return None


def correlation(a, b):
    if len(a) < 3 or np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("study_dir")
    parser.add_argument("--lags", default="0,0.5,1,2,4,8,15,30,60,120,300", help="bin edges in seconds")
    parser.add_argument("--target", type=float, default=0.05, help="half-width of the speedup interval to size for")
    args = parser.parse_args(argv)
    runs = read_study(args.study_dir)
    if not runs:
        print(f"host_noise_timescale.py: no runs in {args.study_dir}", file=sys.stderr)
        return 2
    launches = sorted({r.launch for r in runs})
    span = max(r.start_s for r in runs) - min(r.start_s for r in runs)
    print(f"{args.study_dir}: {len(runs)} runs of {len({r.config for r in runs})} configurations, "
          f"{len(launches)} launches, {span:.0f} s from the first run's start to the last's")
    print("\nRuns against time: correlation of residuals (log samples/s minus the configuration's mean).\n")
    print("| time between starts (s) | pairs | correlation | pairs from one launch |")
    print("|---|---:|---:|---:|")
    edges = [float(x) for x in args.lags.split(",")]
    for low, high, n, corr, same in lag_correlations(runs, edges):
        if n:
            print(f"| {low:g}-{high:g} | {n} | {corr:.2f} | {same:.0%} |")
    print(f"\nPer comparison, paired by launch (log speedup); launches for ±{args.target:.0%} at that sd.\n")
    print("| comparison | launches | sd | sd(2)*√2 | sd(4)*√4 | halves | launches for the target |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for n_config, (one_config, world) in sorted(comparisons(runs).items()):
        logs = launch_log_speedups(runs, n_config, one_config)
        if len(logs) < 2:
            continue
        sd = float(np.std(logs, ddof=1))
        halves = correlation(launch_log_speedups(runs, n_config, one_config, 0),
                             launch_log_speedups(runs, n_config, one_config, 1))
        needed = launches_for(sd, args.target)
        print(f"| {n_config} | {len(logs)} | {sd:.3f} | {grouped_sd(logs, 2):.3f} | {grouped_sd(logs, 4):.3f} | "
              f"{halves:.2f} | {needed if needed else '> 1000'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
