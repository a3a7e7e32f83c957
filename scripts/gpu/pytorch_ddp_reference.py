#!/usr/bin/env python3
"""PyTorch's own DistributedDataParallel on the same models, batch sizes, optimizer and
bucket size as `ddpscale train`, so the two can be measured side by side in one session.

Launch (one process per GPU):
    torchrun --standalone --nproc_per_node 2 scripts/gpu/pytorch_ddp_reference.py \
        --model mlp-large --batch 8 16 32 64 128 --runs 3
World size 1 trains without the DDP wrapper, as ddpscale does. Prints one JSON line per
(model, batch): median over runs of ms/step and samples/s, with every run's value.
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn as nn

# Widths that give exactly the seed study's parameter counts (models/README.md).
MLP_SHAPES = {
    "mlp-medium": (799, [256, 128, 64], 192, 0.2),        # 258,432 parameters
    "mlp-large": (4608, [1024, 1024, 512, 512, 256], 768, 0.3),  # 6,885,376 parameters
}


def build_mlp(name):
    inputs, hidden, outputs, dropout = MLP_SHAPES[name]
    layers, width = [], inputs
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU(), nn.Dropout(dropout)]
        width = h
    layers.append(nn.Linear(width, outputs))
    return nn.Sequential(*layers), inputs, outputs


def measure(model_name, batch, args, device, world, rank):
    step_ms = []
    for run in range(args.runs):
        torch.manual_seed(args.seed + run)
        model, inputs, classes = build_mlp(model_name)
        model = model.to(device)
        if world > 1:
            model = nn.parallel.DistributedDataParallel(model, device_ids=[device.index], bucket_cap_mb=args.bucket_mb)
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
        loss_fn = nn.CrossEntropyLoss()
        generator = torch.Generator().manual_seed(args.seed + run)
        x = torch.randn(batch * world, inputs, generator=generator)[rank * batch:(rank + 1) * batch].to(device)
        y = torch.randint(0, classes, (batch * world,), generator=generator)[rank * batch:(rank + 1) * batch].to(device)

        def step():
            optimizer.zero_grad(set_to_none=False)
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()

        for _ in range(args.warmup):
            step()
        torch.cuda.synchronize(device)
        if world > 1:
            dist.barrier()
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        torch.cuda.synchronize(device)
        elapsed = time.perf_counter() - start
        slowest = torch.tensor([elapsed], device=device)
        if world > 1:
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        step_ms.append(slowest.item() * 1000.0 / args.steps)
    median_ms = statistics.median(step_ms)
    return {
        "tool": "pytorch-ddp", "torch": torch.__version__, "model": model_name, "batch_per_gpu": batch,
        "world_size": world, "ms_per_step": round(median_ms, 4),
        "samples_per_s": round(batch * world * 1000.0 / median_ms, 1), "runs_ms": [round(v, 4) for v in step_ms],
        "warmup": args.warmup, "steps": args.steps, "bucket_mb": args.bucket_mb, "optimizer": "adam", "lr": args.lr,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", nargs="+", default=["mlp-medium", "mlp-large"], choices=sorted(MLP_SHAPES))
    parser.add_argument("--batch", nargs="+", type=int, default=[8, 16, 32, 64, 128], help="batch per GPU")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--bucket-mb", type=float, default=25.0)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    torch.cuda.set_device(device)
    if world > 1:
        dist.init_process_group("nccl", device_id=device)
    for model_name in args.model:
        for batch in args.batch:
            result = measure(model_name, batch, args, device, world, rank)
            if rank == 0:
                print(json.dumps(result), flush=True)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
