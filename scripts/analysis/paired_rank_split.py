#!/usr/bin/env python3
"""How far a study's paired speedups move from launch to launch, by which 1-rank blocks count.

    python3 scripts/analysis/paired_rank_split.py STUDY_DIR [--launches]

The 1-rank blocks of the paired design take turns over the N ranks (/paired/one_rank,
docs/hdf5-schema.md). For every N-rank configuration this prints the spread (sample sd) of
its launches' mean log speedup three ways: from all speedup pairs; from the pairs whose 1-rank
block ran on rank 0 (what the 1-rank side samples when rank 0 runs it alone); and from a random
half of the pairs (the same count as rank 0's, so the difference between the last two is the
ranks' doing, not the count's; mean over 200 draws). Then the medians over configurations.
--launches adds, per launch, the speedup from each estimate and the median step of rank 0's
and rank 1's 1-rank blocks and of the N-rank blocks.
Needs h5py and numpy.
"""
import glob
import os
import sys

import h5py
import numpy as np


def launches_of(study):
    by_config = {}
    for path in sorted(glob.glob(os.path.join(study, "*.h5"))):
        if os.path.basename(path) == "study.h5":
            continue
        with h5py.File(path, "r") as f:
            if "paired" not in f or int(f["params"].attrs["world_size"]) < 2:
                continue
            g = f["paired"]
            kind, a, b = g["kind"][:], g["a_us"][:], g["b_us"][:]
            rank = g["one_rank"][:] if "one_rank" in g else np.zeros_like(kind)
            world, steps = int(f["params"].attrs["world_size"]), int(g.attrs["block_steps"])
            scale = world if f["params"].attrs.get("scaling", "weak") != "strong" else 1
            speedup = kind == 0
            by_config.setdefault(f.attrs["id"] if "id" in f.attrs else os.path.basename(path).split(".launch")[0],
                                 []).append((int(g.attrs["launch"]), np.log(a[speedup] / b[speedup]), rank[speedup],
                                             a[speedup] / steps, b[speedup] / steps, scale))
    return by_config


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    per_launch = "--launches" in argv
    draw = np.random.default_rng(1)
    rows = []
    print("| configuration | launches | all pairs | rank 0's 1-rank blocks | a random half |\n|---|---:|---:|---:|---:|")
    for config, launches in sorted(launches_of(argv[0]).items()):
        launches.sort(key=lambda item: item[0])
        if len(launches) < 2:
            continue
        every = np.std([x.mean() for _, x, *_ in launches], ddof=1)
        rank0 = np.std([x[r == 0].mean() for _, x, r, *_ in launches], ddof=1)
        half = np.mean([np.std([x[draw.random(len(x)) < 0.5].mean() for _, x, *_ in launches], ddof=1)
                        for _ in range(200)])
        rows.append((every, rank0, half))
        print(f"| {config} | {len(launches)} | {every:.3f} | {rank0:.3f} | {half:.3f} |")
        if per_launch:
            for launch, x, r, one_us, n_us, scale in launches:
                steps = [f"{np.median(one_us[r == k]):.0f}" for k in sorted(set(r.tolist()))]
                print(f"|   launch {launch} | | {scale * np.exp(x.mean()):.3f} | {scale * np.exp(x[r == 0].mean()):.3f} | "
                      f"1-rank us/step by rank {', '.join(steps)}; N-rank {np.median(n_us):.0f} |")
    if rows:
        m = np.median(np.array(rows), axis=0)
        print(f"\nMedian over {len(rows)} speedups of the launches' sd of the log speedup: all pairs {m[0]:.3f}, "
              f"rank 0's 1-rank blocks {m[1]:.3f}, a random half {m[2]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
