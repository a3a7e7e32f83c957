#!/usr/bin/env python3
"""Trial, after placement-trial.py found PyTorch's own lstm b128 graph step 1.7% slower with a
20 MiB dummy allocated first: how does the step move with the shift, on both sides? PyTorch's
reference with a kept dummy of 0, 20, 40 or 60 MiB made first, and ddpscale built with
shift-all-mib.patch (DDPSCALE_TRIAL_SHIFT_MIB: the same dummy, made before the initial model)
unshifted and at 20 and 40 MiB, in rotation.
Usage: shift-trial.py PATCHED_DDPSCALE STOP_SECONDS [MODEL:BATCH]   (repository root, GPU machine)
"""
import importlib.util
import os
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))


def load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(here, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


placement, state = load("placement_trial", "placement-trial.py"), load("state_trial", "state-trial.py")


def ddpscale_shifted_ms(binary, model, batch, mib):
    os.environ.pop("DDPSCALE_TRIAL_SHIFT_MIB", None)
    if mib:
        os.environ["DDPSCALE_TRIAL_SHIFT_MIB"] = str(mib)
    try:
        return state.ddpscale_ms(binary, model, batch, "1e-3")
    finally:
        os.environ.pop("DDPSCALE_TRIAL_SHIFT_MIB", None)


def main():
    binary, stop = sys.argv[1], time.time() + float(sys.argv[2])
    model, batch = (sys.argv[3] if len(sys.argv) > 3 else "lstm:128").split(":")
    batch = int(batch)
    sides = {}
    for mib in (0, 20, 40, 60):
        sides[f"pytorch-{mib}MiB"] = lambda m=mib: placement.pytorch_ms(model, batch, m << 20)
    for mib in (0, 20, 40):
        sides[f"ddpscale-{mib}MiB"] = lambda m=mib: ddpscale_shifted_ms(binary, model, batch, m)
    names = list(sides)
    times = {s: [] for s in names}
    rnd = 0
    while time.time() < stop:
        for side in names[rnd % len(names):] + names[:rnd % len(names)]:
            times[side].append(sides[side]())
        rnd += 1
        print(f"round {rnd}: " + ", ".join(f"{s} {times[s][-1]:.4f}" for s in names), file=sys.stderr, flush=True)
    base = names[0]
    for side in names:
        ratios = [p / t for p, t in zip(times[base], times[side])]  # > 1: faster than unshifted PyTorch
        print(f"{model} b{batch} {side:16s} median {statistics.median(times[side]):.4f} ms  PyTorch/this median "
              f"{statistics.median(ratios):.4f} min {min(ratios):.4f} max {max(ratios):.4f}  rounds {len(ratios)}")


if __name__ == "__main__":
    main()
