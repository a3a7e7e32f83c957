#!/usr/bin/env python3
"""What a timing tool's bookkeeping costs a replayed CUDA-graph step.

ddpscale's graph step is the replay plus, per measured step, one CUDA event (the step's end)
and a copy of the loss (the run's loss trajectory). PyTorch's reference loop replays only.
This times PyTorch's own captured step (scripts/gpu/pytorch_ddp_reference.py, variant graph)
in four loops, interleaved over several rounds so drift favours none:
  replay            g.replay()
  replay+event      g.replay(); an event recorded (as ddpscale's step clock does)
  replay+clone      g.replay(); static loss cloned (as ddpscale keeps every step's loss)
  replay+both       both
and prints, per loop, the median microseconds per step over rounds and the difference to the
plain replay. Usage: graph_step_overheads.py [--rows mlp-medium:8 ...] [--rounds 5] [--steps 500]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_ddp_reference as ref  # noqa: E402


def loop(trainer, kind, steps, events):
    losses = []
    torch.cuda.synchronize()
    start = time.perf_counter()
    for s in range(steps):
        trainer.graph.replay()
        if kind in ("replay+event", "replay+both"):
            events[s].record()
        if kind in ("replay+clone", "replay+both"):
            losses.append(trainer.static_loss.clone())
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e6 / steps


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", nargs="+", default=["mlp-medium:8", "mlp-large:8", "lstm:32"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args()
    ref_args = argparse.Namespace(lr=1e-3, bucket_mb=25.0)
    device = torch.device("cuda", 0)
    kinds = ["replay", "replay+event", "replay+clone", "replay+both"]
    for row in args.rows:
        model, batch = row.split(":")
        trainer = ref.Trainer(model, int(batch), "graph", ref_args, device, 1, 0, 42)
        trainer.warm_up(10)
        events = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps)]
        times = {k: [] for k in kinds}
        for r in range(args.rounds):
            order = kinds if r % 2 == 0 else list(reversed(kinds))
            for kind in order:
                times[kind].append(loop(trainer, kind, args.steps, events))
        base = statistics.median(times["replay"])
        for kind in kinds:
            median = statistics.median(times[kind])
            print(json.dumps({"model": model, "batch": int(batch), "loop": kind, "us_per_step": round(median, 2),
                              "minus_replay_us": round(median - base, 2),
                              "rounds_us": [round(t, 2) for t in times[kind]]}), flush=True)


if __name__ == "__main__":
    main()
