#!/usr/bin/env python3
"""Trial (not run yet): does anything about ddpscale's *process* slow its captured lstm b128
step, rather than the step itself? The variant builds of this folder changed the model and the
graph's pool and moved nothing; what a one-rank ddpscale process has that PyTorch's has not is
MPI (mpirun, or MPI_Init as a singleton), the NVML sampler thread, and the step clock. This
runs, in rotation, ddpscale's graph step as gpu-benchmark.sh's sweep runs it (under mpirun),
as a singleton, without NVML sampling, and without phase timing, beside PyTorch's captured
step, and prints each one's median and its ratio to PyTorch round by round.
Usage: process-trial.py DDPSCALE_BINARY STOP_SECONDS [MODEL:BATCH]   (repository root, GPU machine)
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

STEPS = 300
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader", "-np", "1"]


def ddpscale_command(binary, model, batch, variant):
    train = [binary, "train", "-m", model, "-b", str(batch), "--exec", "graph", "--runs", "3", "--warmup", "10",
             "--steps", str(STEPS)]
    extra = {"mpirun": [], "singleton": [], "no-gpu-sampling": ["--no-gpu-sampling"],
             "no-phase-timing": ["--no-phase-timing"]}[variant]
    return (MPIRUN if variant == "mpirun" else []) + train + extra


def ddpscale_ms(binary, model, batch, variant):
    out = subprocess.run(ddpscale_command(binary, model, batch, variant), capture_output=True, text=True, check=True)
    # The summary's throughput (median over runs), which --no-phase-timing keeps too.
    match = re.search(r"^#\s+throughput\s+([0-9.]+) samples/s", out.stdout, re.M)
    if not match:
        raise SystemExit(f"no throughput in ddpscale's output:\n{out.stdout}\n{out.stderr}")
    return batch * 1000.0 / float(match.group(1))


def pytorch_ms(model, batch):
    script = os.path.join("scripts", "gpu", "pytorch_ddp_reference.py")
    out = subprocess.run([sys.executable, script, "--rows", f"{model}:{batch}", "--variant", "graph", "--steps",
                          str(STEPS)], capture_output=True, text=True, check=True)
    return json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][0])["ms_per_step"]


def main():
    binary, stop = sys.argv[1], time.time() + float(sys.argv[2])
    model, batch = (sys.argv[3] if len(sys.argv) > 3 else "lstm:128").split(":")
    batch = int(batch)
    sides = ["pytorch", "mpirun", "singleton", "no-gpu-sampling", "no-phase-timing"]
    times = {s: [] for s in sides}
    rnd = 0
    while time.time() < stop:
        order = sides[rnd % len(sides):] + sides[:rnd % len(sides)]  # rotate who goes first
        for side in order:
            ms = pytorch_ms(model, batch) if side == "pytorch" else ddpscale_ms(binary, model, batch, side)
            times[side].append(ms)
        rnd += 1
        print(f"round {rnd}: " + ", ".join(f"{s} {times[s][-1]:.4f}" for s in sides), file=sys.stderr, flush=True)
    for side in sides:
        ratios = [p / t for p, t in zip(times["pytorch"], times[side])]  # > 1: ddpscale's step is faster
        print(f"{model} b{batch} {side:16s} median {statistics.median(times[side]):.4f} ms  PyTorch/this median "
              f"{statistics.median(ratios):.4f} min {min(ratios):.4f} max {max(ratios):.4f}  rounds {len(ratios)}")


if __name__ == "__main__":
    main()
