#!/usr/bin/env python3
"""ddpscale (eager and CUDA graph) beside PyTorch's Python DDP, measured on the same GPU machine.

Usage: compare_with_pytorch.py SUMMARY_CSV PYTORCH_JSONL [PYTORCH_JSONL ...]
SUMMARY_CSV is the summary.csv `ddpscale report` wrote for a study with exec eager and
graph (experiments/exec-modes.yaml); the JSONL files are what
scripts/gpu/pytorch_ddp_reference.py printed on 1 and 2 GPUs on the same machine.
Prints a markdown table: per (model, batch per GPU, GPUs), PyTorch's median samples/s over
its runs, ddpscale's median over runs in each mode and the ratios, the GPU-busy floor and
graph step / floor, and the 2-GPU weak-scaling efficiency of each. Medians on both sides,
as the issue's targets are stated. Standard library only.
"""
import csv
import json
import sys


def read_ddpscale(path):
    rows = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["model"], int(row["batch_per_rank"]), int(row["world_size"]), row["exec"])
            rows[key] = row
    return rows


# Lines written before the reference had variants timed Adam's default (foreach) with
# zero_grad(set_to_none=False): scripts/gpu/pytorch_ddp_reference.py calls that eager-foreach.
OLD_DEFAULT_VARIANT = "eager-foreach"


def read_pytorch_variants(paths):
    """{(model, batch per GPU, world size, variant): JSON line} from the reference's output."""
    rows = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.startswith("{"):
                    r = json.loads(line)
                    variant = r.get("variant", OLD_DEFAULT_VARIANT)
                    rows[(r["model"], int(r["batch_per_gpu"]), int(r["world_size"]), variant)] = r
    return rows


def read_pytorch(paths, variant=None):
    """{(model, batch per GPU, world size): JSON line} of one variant: the one asked for, else
    PyTorch's fastest eager step ("eager") where measured, else the old default."""
    rows = read_pytorch_variants(paths)
    if variant is None:
        variant = "eager" if any(k[3] == "eager" for k in rows) else OLD_DEFAULT_VARIANT
    return {k[:3]: r for k, r in rows.items() if k[3] == variant}


def number(row, column):
    try:
        return float(row[column])
    except (KeyError, TypeError, ValueError):
        return float("nan")


def fmt(value, digits=2, suffix=""):
    return "n/a" if value != value else f"{value:.{digits}f}{suffix}"


def main(summary_csv, pytorch_files):
    ours, theirs = read_ddpscale(summary_csv), read_pytorch(pytorch_files)
    print("| model | batch/GPU | GPUs | PyTorch DDP samples/s | eager samples/s | eager / PyTorch | graph samples/s | "
          "graph / PyTorch | graph step (ms) | GPU busy (ms) | graph step / busy |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (model, batch, world), ref in sorted(theirs.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1])):
        eager, graph = ours.get((model, batch, world, "eager")), ours.get((model, batch, world, "graph"))
        torch_sps = float(ref["samples_per_s"])
        eager_sps = number(eager, "samples_per_s_median") if eager else float("nan")
        graph_sps = number(graph, "samples_per_s_median") if graph else float("nan")
        graph_step_ms = number(graph, "step_us_median") / 1000 if graph else float("nan")
        # Either mode's floor can only over-state the kernel time (an NCCL kernel that waits
        # counts as busy), so the smaller is the tighter, as in the report's table.
        floors = [number(row, "gpu_busy_us") for row in (eager, graph) if row]
        floors = [f for f in floors if f == f]
        busy = min(floors) if floors else float("nan")
        busy_ms = busy / 1000
        print(f"| {model} | {batch} | {world} | {torch_sps:,.1f} | {fmt(eager_sps, 1)} | {fmt(eager_sps / torch_sps, 2, 'x')} | "
              f"{fmt(graph_sps, 1)} | {fmt(graph_sps / torch_sps, 2, 'x')} | {fmt(graph_step_ms, 3)} | {fmt(busy_ms, 3)} | "
              f"{fmt(graph_step_ms / busy_ms, 2, 'x')} |")
    print()
    print("| model | batch/GPU | PyTorch DDP 2-GPU efficiency | eager | graph |")
    print("|---|---:|---:|---:|---:|")
    for (model, batch, world), ref in sorted(theirs.items()):
        if world != 2 or (model, batch, 1) not in theirs:
            continue
        def efficiency(two, one):
            return two / (2 * one) if one == one and one > 0 else float("nan")
        cells = [efficiency(float(ref["samples_per_s"]), float(theirs[(model, batch, 1)]["samples_per_s"]))]
        for mode in ("eager", "graph"):
            two, one = ours.get((model, batch, 2, mode)), ours.get((model, batch, 1, mode))
            cells.append(efficiency(number(two, "samples_per_s_median"), number(one, "samples_per_s_median"))
                         if two and one else float("nan"))
        print(f"| {model} | {batch} | " + " | ".join(fmt(100 * c, 1, "%") for c in cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
