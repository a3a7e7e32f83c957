#!/usr/bin/env python3
"""Reads a study's paired blocks (HDF5 group /paired, docs/hdf5-schema.md) with h5py and
checks them against the design (docs/methodology.md, "The paired speedup"):

    check_paired_blocks.py STUDY_DIR

Every N-rank configuration file of a twin holds /paired for its own launch and no 1-rank file
does; each launch ran whole rounds of 10 pairs, 8 speedup pairs and one A/A pair of each kind
per round; every block took a positive time; blocks have at least 2 steps; the pilot's
autocorrelations lie in [-1, 1]; pairs are stored in the order they ran; the 1-rank blocks
took turns over the N ranks (/paired/one_rank: each round's speedup pairs, in the order they
ran, on ranks round, round + 1, ... mod N, its 1-rank A/A pair on rank round mod N, an N-rank
A/A pair on 0); where a launch's speedups measured in one window (/paired window_speedups > 1),
their pairs took turns: the spans of start_s of at least two of its files overlap.

Exit status: 0 right, 1 wrong (each problem printed), 77 h5py/numpy missing.
"""
import glob
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # reported as skipped by CTest, never as passed
    print(f"SKIPPED: {e} (Debian: python3-h5py python3-numpy)")
    sys.exit(77)

PAIRS_PER_ROUND, SPEEDUP_PAIRS_PER_ROUND, MIN_BLOCK_STEPS = 10, 8, 2


def check_file(path, problems, windows):
    with h5py.File(path, "r") as f:
        world = int(f["params"].attrs["world_size"])
        if world == 1:
            if "paired" in f:
                problems.append(f"{path}: a 1-rank configuration holds /paired")
            return 0
        if "paired" not in f:
            problems.append(f"{path}: an N-rank twin without /paired")
            return 0
        g = f["paired"]
        if int(g.attrs["launch"]) != int(f.attrs["launch"]):
            problems.append(f"{path}: /paired launch {g.attrs['launch']} in the file of launch {f.attrs['launch']}")
        kinds, a_us, b_us, start = g["kind"][:], g["a_us"][:], g["b_us"][:], g["start_s"][:]
        n = len(kinds)
        if not (len(a_us) == len(b_us) == len(start) == len(g["a_first"][:]) == n):
            problems.append(f"{path}: /paired arrays of different lengths")
            return 0
        if n == 0 or n % PAIRS_PER_ROUND:
            problems.append(f"{path}: {n} pairs, not whole rounds of {PAIRS_PER_ROUND}")
        rounds = n // PAIRS_PER_ROUND
        counts = [int(np.sum(kinds == k)) for k in (0, 1, 2)]
        if counts != [SPEEDUP_PAIRS_PER_ROUND * rounds, rounds, rounds]:
            problems.append(f"{path}: pair kinds {counts} over {rounds} rounds")
        if not (np.all(a_us > 0) and np.all(b_us > 0)):
            problems.append(f"{path}: a block with no positive time")
        if np.any(np.diff(start) < 0):
            problems.append(f"{path}: pairs not in the order they ran")
        if "one_rank" not in g or len(g["one_rank"][:]) != n:
            problems.append(f"{path}: /paired/one_rank missing or of another length")
        else:
            one_rank = g["one_rank"][:]
            for r in range(rounds):
                span = slice(r * PAIRS_PER_ROUND, (r + 1) * PAIRS_PER_ROUND)
                k, ranks = kinds[span], one_rank[span]
                expected = [(r + j) % world for j in range(SPEEDUP_PAIRS_PER_ROUND)]
                if list(ranks[k == 0]) != expected or list(ranks[k == 1]) != [r % world] or list(ranks[k == 2]) != [0]:
                    problems.append(f"{path}: round {r}: 1-rank blocks on ranks {list(ranks)} for kinds {list(k)}")
                    break
        if int(g.attrs["block_steps"]) < MIN_BLOCK_STEPS:
            problems.append(f"{path}: blocks of {g.attrs['block_steps']} steps")
        window = int(g.attrs.get("window_speedups", 1))
        if window < 1:
            problems.append(f"{path}: window_speedups {window}")
        if window > 1 and n:
            windows.setdefault(int(g.attrs["launch"]), []).append((float(start[0]), float(start[-1])))
        acf = g["autocorrelation"][:]
        if len(acf) == 0 or np.any(np.abs(acf[np.isfinite(acf)]) > 1 + 1e-12):
            problems.append(f"{path}: pilot autocorrelation {acf[:5]}")
        return n


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    problems = []
    files = [p for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.h5"))) if os.path.basename(p) != "study.h5"]
    windows = {}  # launch -> (first, last) start_s of each file measured in a window of several
    pairs = sum(check_file(p, problems, windows) for p in files)
    for launch, spans in windows.items():
        overlapping = any(a[0] < b[1] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1:])
        if len(spans) > 1 and not overlapping:
            problems.append(f"launch {launch}: {len(spans)} speedups in windows, but their pairs did not take turns "
                            f"(start_s spans {spans})")
    for problem in problems:
        print("FAIL:", problem)
    if problems or pairs == 0:
        print(f"FAIL: {len(problems)} problem(s); {pairs} pairs in {len(files)} files")
        return 1
    print(f"PASSED: {pairs} pairs in {len(files)} files match the paired design")
    return 0


if __name__ == "__main__":
    sys.exit(main())
