#!/usr/bin/env python3
"""Kernels per step, GPU-busy time and step time per configuration (scripts/gpu/step-anatomy.sh).

Usage: step_anatomy.py FOLDER [FOLDER ...]
Each FOLDER holds NAME.log (`ddpscale train` output) and NAME.rank0.csv (its --gpu-kernels
table) per configuration, NAME = MODEL-bBATCH-MODE. Prints one markdown table over all
folders: kernels launched per step (the sum of calls_per_step), GPU busy per step, the median
step, and step / kernels, which in an eager step bound by the host is what the host spends
per launch (the framework's work for one op plus the launch itself). Standard library only.
"""
import os
import re
import sys

from kernel_side_by_side import read_table  # this script's folder is on sys.path

STEP = re.compile(r"^#\s+step\s+([0-9.]+) us", re.M)


def read_step_us(path):
    with open(path) as f:
        match = STEP.search(f.read())
    return float(match.group(1)) if match else float("nan")


def rows_of(folder):
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".rank0.csv"):
            continue
        config = name[: -len(".rank0.csv")]
        model, batch, mode = re.match(r"(.+?)-b(\d+)-(.+)$", config).groups()
        kernels, busy = read_table(os.path.join(folder, name))
        launches = sum(calls for calls, _ in kernels.values())
        step = read_step_us(os.path.join(folder, config + ".log"))
        yield model, int(batch), mode, os.path.basename(os.path.normpath(folder)), launches, busy, step


def main(folders):
    rows = [row for folder in folders for row in rows_of(folder)]
    rows.sort(key=lambda r: (r[2], r[0], r[1], r[3]))
    print("| model | batch | exec | build | kernels per step | GPU busy (us) | step (us) | step / kernels (us) |")
    print("|---|---:|---|---|---:|---:|---:|---:|")
    for model, batch, mode, label, launches, busy, step in rows:
        print(f"| {model} | {batch} | {mode} | {label} | {launches:.0f} | {busy:.1f} | {step:.1f} | {step / launches:.2f} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
