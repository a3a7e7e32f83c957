#!/usr/bin/env python3
"""Trial: is the persistent LSTM kernel's time a matter of where its buffers sit in memory?
Same launch shape on both sides, same time whatever the trained state (state-trial.py), and
moving ddpscale's in-graph buffers did not move it (shift-*.patch); the parameters live
outside the graph and were never moved. Here PyTorch's reference runs with a kept dummy CUDA
allocation of 0, 2 MiB, 20 MiB or 256 MiB made before anything else, which moves every later
buffer (weights first), beside ddpscale's graph step, in rotation.
Usage: placement-trial.py DDPSCALE_BINARY STOP_SECONDS [MODEL:BATCH]   (repository root, GPU machine)
       placement-trial.py --run-reference BYTES ARGS...   (internal: one shifted reference run)
"""
import importlib.util
import json
import os
import runpy
import statistics
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
SHIFTS = {"pytorch": 0, "pytorch-2MiB": 2 << 20, "pytorch-20MiB": 20 << 20, "pytorch-256MiB": 256 << 20}


def run_shifted_reference(shift, argv):
    import torch
    kept = torch.empty(shift, dtype=torch.uint8, device="cuda") if shift else None  # noqa: F841 (kept alive)
    sys.argv = [os.path.join("scripts", "gpu", "pytorch_ddp_reference.py")] + argv
    runpy.run_path(sys.argv[0], run_name="__main__")


def pytorch_ms(model, batch, shift):
    out = subprocess.run([sys.executable, __file__, "--run-reference", str(shift), "--rows", f"{model}:{batch}",
                          "--variant", "graph", "--steps", "300"], capture_output=True, text=True, check=True)
    return json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][0])["ms_per_step"]


def main():
    if sys.argv[1] == "--run-reference":
        return run_shifted_reference(int(sys.argv[2]), sys.argv[3:])
    spec = importlib.util.spec_from_file_location("state_trial", os.path.join(here, "state-trial.py"))
    state = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(state)
    binary, stop = sys.argv[1], time.time() + float(sys.argv[2])
    model, batch = (sys.argv[3] if len(sys.argv) > 3 else "lstm:128").split(":")
    batch = int(batch)
    sides = {name: (lambda s=shift: pytorch_ms(model, batch, s)) for name, shift in SHIFTS.items()}
    sides["ddpscale"] = lambda: state.ddpscale_ms(binary, model, batch, "1e-3")
    names = list(sides)
    times = {s: [] for s in names}
    rnd = 0
    while time.time() < stop:
        for side in names[rnd % len(names):] + names[:rnd % len(names)]:
            times[side].append(sides[side]())
        rnd += 1
        print(f"round {rnd}: " + ", ".join(f"{s} {times[s][-1]:.4f}" for s in names), file=sys.stderr, flush=True)
    for side in names:
        ratios = [p / t for p, t in zip(times["pytorch"], times[side])]  # > 1: faster than unshifted PyTorch
        print(f"{model} b{batch} {side:16s} median {statistics.median(times[side]):.4f} ms  PyTorch/this median "
              f"{statistics.median(ratios):.4f} min {min(ratios):.4f} max {max(ratios):.4f}  rounds {len(ratios)}")


if __name__ == "__main__":
    main()
