#!/usr/bin/env python3
"""Trial: on an H100, ddpscale's captured lstm b128 step was 0.7% behind PyTorch's, every
round, where on an H200 it led; the kernel table put it all in cuDNN's persistent forward
kernel (RNN_blockPersist_fp_LSTM, +85 us of 1.56 ms), same kernels otherwise. ddpscale's
recurrent model differs from the reference in two ways: its batch is stored time-major, and
it passes one kept zero tensor as both h0 and c0 (PyTorch's nn.LSTM makes two new ones).
This puts each difference into PyTorch's own model, graph-captured as the reference captures
it, and times them in rotation inside one process:
  reference       batch_first input, no initial state (scripts/gpu/pytorch_ddp_reference.py)
  time-major      the batch stored time-major, fed as a contiguous [sequence, batch, features]
  shared-zeros    batch_first, one kept zero tensor as both h0 and c0
  ddpscale-like   time-major and one shared kept zero tensor, as ddpscale's model
  separate-zeros  time-major, two kept zero tensors
Usage: layout.py STOP_SECONDS [MODEL:BATCH ...]   (run from the repository root)
"""
import os
import statistics
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.getcwd(), "scripts", "gpu"))
import pytorch_ddp_reference as ref  # noqa: E402


class Layout(nn.Module):
    def __init__(self, cell, time_major, zeros):
        super().__init__()
        s = ref.RECURRENT
        layer = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = layer(s["features"], s["hidden"], num_layers=s["layers"], batch_first=not time_major,
                         dropout=s["dropout"])
        self.head = nn.Linear(s["hidden"], s["classes"])
        self.cell, self.time_major, self.zeros, self.kept = cell, time_major, zeros, None

    def state(self, x):
        if self.zeros == "none":
            return None
        if self.kept is None:
            shape = (self.rnn.num_layers, x.size(0), self.rnn.hidden_size)
            h = torch.zeros(shape, device=x.device)
            c = h if self.zeros == "shared" else torch.zeros(shape, device=x.device)
            self.kept = (h, c) if self.cell == "lstm" else h
        return self.kept

    def forward(self, x):  # x: [batch, sequence, features], possibly stored time-major
        hx = self.state(x)
        if self.time_major:
            sequence, _ = self.rnn(x.transpose(0, 1), hx)
            return self.head(sequence[-1])
        sequence, _ = self.rnn(x, hx)
        return self.head(sequence[:, -1])


VARIANTS = {"reference": (False, "none"), "time-major": (True, "none"), "shared-zeros": (False, "shared"),
            "ddpscale-like": (True, "shared"), "separate-zeros": (True, "separate")}


class Args:
    lr, bucket_mb = 1e-3, 25.0


def replay_ms(cell, batch, variant, steps=300):
    time_major, zeros = VARIANTS[variant]
    ref.build_model = lambda name: Layout(cell, time_major, zeros)
    trainer = ref.Trainer(cell, batch, "graph", Args(), torch.device("cuda"), 1, 0, 42)
    if time_major:
        trainer.x = trainer.x.transpose(0, 1).contiguous().transpose(0, 1)
    trainer.warm_up(10)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        trainer.step()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1000.0 / steps


def main():
    stop = time.time() + float(sys.argv[1])
    rows = [(r.split(":")[0], int(r.split(":")[1])) for r in (sys.argv[2:] or ["lstm:128", "lstm:32"])]
    times = {}
    names = list(VARIANTS)
    rnd = 0
    while time.time() < stop:
        order = names[rnd % len(names):] + names[:rnd % len(names)]  # rotate who goes first
        for cell, batch in rows:
            for v in order:
                times.setdefault((cell, batch, v), []).append(replay_ms(cell, batch, v))
        rnd += 1
        print(f"round {rnd} done", file=sys.stderr, flush=True)
    for cell, batch in rows:
        base = times[(cell, batch, "reference")]
        for v in names:
            t = times[(cell, batch, v)]
            ratios = [b / x for b, x in zip(base, t)]  # > 1: this variant is faster than the reference
            print(f"{cell} b{batch} {v:15s} median {statistics.median(t):.4f} ms  reference/this "
                  f"median {statistics.median(ratios):.4f} min {min(ratios):.4f} max {max(ratios):.4f}  rounds {len(t)}")


if __name__ == "__main__":
    main()
