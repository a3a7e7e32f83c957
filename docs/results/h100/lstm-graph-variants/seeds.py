#!/usr/bin/env python3
"""Trial: does PyTorch's own captured lstm step take a different time with a different seed
(other initial weights, other synthetic batch, other dropout masks)? ddpscale's three runs of a
configuration use seeds 42, 43, 44 (training_session.cpp: run_seed = seed + run index); the
reference's graph variant uses 42 only. If the step's time moves with the seed by as much as
ddpscale's 2% gap on lstm b128, the two sides are not timing the same work.
Times each seed's replays in rotation inside one process, on the reference's own Trainer.
Usage: seeds.py STOP_SECONDS [MODEL:BATCH ...]   (run from the repository root)
"""
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.getcwd(), "scripts", "gpu"))
import pytorch_ddp_reference as ref  # noqa: E402

SEEDS = [42, 43, 44, 45, 46]


class Args:
    lr, bucket_mb = 1e-3, 25.0


def replay_ms(name, batch, seed, steps=300):
    trainer = ref.Trainer(name, batch, "graph", Args(), torch.device("cuda"), 1, 0, seed)
    trainer.warm_up(10)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        trainer.step()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1000.0 / steps


def main():
    stop = time.time() + float(sys.argv[1])
    rows = [(r.split(":")[0], int(r.split(":")[1])) for r in (sys.argv[2:] or ["lstm:128"])]
    times = {}
    rnd = 0
    while time.time() < stop:
        order = SEEDS[rnd % len(SEEDS):] + SEEDS[:rnd % len(SEEDS)]  # rotate who goes first
        for name, batch in rows:
            for seed in order:
                times.setdefault((name, batch, seed), []).append(replay_ms(name, batch, seed))
        rnd += 1
        print(f"round {rnd} done", file=sys.stderr, flush=True)
    for name, batch in rows:
        base = times[(name, batch, 42)]
        for seed in SEEDS:
            t = times[(name, batch, seed)]
            ratios = [b / x for b, x in zip(base, t)]  # > 1: this seed's step is faster than seed 42's
            print(f"{name} b{batch} seed {seed} median {statistics.median(t):.4f} ms  seed42/this "
                  f"median {statistics.median(ratios):.4f} min {min(ratios):.4f} max {max(ratios):.4f}  rounds {len(t)}")


if __name__ == "__main__":
    main()
