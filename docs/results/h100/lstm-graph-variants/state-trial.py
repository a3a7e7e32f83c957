#!/usr/bin/env python3
"""Trial: does the LSTM's persistent kernel run slower in ddpscale because of the *values* it
computes on (trained weights, activations), not its launch? The two sides launch
RNN_blockPersist_fp_LSTM with the same grid, block, registers and shared memory
(kernel_launches.py, call 6), yet ddpscale's calls take 827 us against PyTorch's 781. Here
both sides run with the default learning rate and with 1e-12 (the weights stay at their
initial values: Adam's step is about lr whatever the gradient), in rotation, and each one's
median is printed with its ratio to PyTorch at the default rate, round by round.
Usage: state-trial.py DDPSCALE_BINARY STOP_SECONDS [MODEL:BATCH]   (repository root, GPU machine)
"""
import importlib.util
import os
import statistics
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("process_trial", os.path.join(here, "process-trial.py"))
trial = importlib.util.module_from_spec(spec)
spec.loader.exec_module(trial)
FROZEN = "1e-12"


def pytorch_ms(model, batch, lr):
    import json
    script = os.path.join("scripts", "gpu", "pytorch_ddp_reference.py")
    out = subprocess.run([sys.executable, script, "--rows", f"{model}:{batch}", "--variant", "graph", "--steps",
                          str(trial.STEPS), "--lr", lr], capture_output=True, text=True, check=True)
    return json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][0])["ms_per_step"]


def ddpscale_ms(binary, model, batch, lr):
    command = trial.MPIRUN + [binary, "train", "-m", model, "-b", str(batch), "--exec", "graph", "--runs", "3",
                              "--warmup", "10", "--steps", str(trial.STEPS), "--lr", lr]
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    match = trial.re.search(r"^#\s+throughput\s+([0-9.]+) samples/s", out.stdout, trial.re.M)
    if not match:
        raise SystemExit(f"no throughput in ddpscale's output:\n{out.stdout}\n{out.stderr}")
    return batch * 1000.0 / float(match.group(1))


def main():
    binary, stop = sys.argv[1], time.time() + float(sys.argv[2])
    model, batch = (sys.argv[3] if len(sys.argv) > 3 else "lstm:128").split(":")
    batch = int(batch)
    sides = {"pytorch": lambda: pytorch_ms(model, batch, "1e-3"),
             "pytorch-frozen": lambda: pytorch_ms(model, batch, FROZEN),
             "ddpscale": lambda: ddpscale_ms(binary, model, batch, "1e-3"),
             "ddpscale-frozen": lambda: ddpscale_ms(binary, model, batch, FROZEN)}
    names = list(sides)
    times = {s: [] for s in names}
    rnd = 0
    while time.time() < stop:
        for side in names[rnd % len(names):] + names[:rnd % len(names)]:
            times[side].append(sides[side]())
        rnd += 1
        print(f"round {rnd}: " + ", ".join(f"{s} {times[s][-1]:.4f}" for s in names), file=sys.stderr, flush=True)
    for side in names:
        ratios = [p / t for p, t in zip(times["pytorch"], times[side])]  # > 1: faster than PyTorch at 1e-3
        print(f"{model} b{batch} {side:16s} median {statistics.median(times[side]):.4f} ms  PyTorch/this median "
              f"{statistics.median(ratios):.4f} min {min(ratios):.4f} max {max(ratios):.4f}  rounds {len(ratios)}")


if __name__ == "__main__":
    main()
