#!/usr/bin/env python3
"""PyTorch on the same models, batch sizes, optimizer and data as `ddpscale train`, so the two
can be measured side by side on one machine (scripts/gpu/gpu-benchmark.sh pairs them).

Launch (one process per GPU):
    python3 scripts/gpu/pytorch_ddp_reference.py --model lstm transformer --batch 32 128 \
        --variant eager graph
    torchrun --standalone --nproc_per_node 2 scripts/gpu/pytorch_ddp_reference.py --model mlp-large
World size 1 trains without the DDP wrapper, as ddpscale does. Prints one JSON line per
(model, batch, variant, dtype): median over runs of ms/step and samples/s, with every run's value,
and each run's per-step times on every rank (run_records), which `ddpscale import-pytorch` turns
into configurations of the pytorch-ddp engine beside ddpscale's own in a study folder:
    python3 scripts/gpu/pytorch_ddp_reference.py --model torchscript:m.pt --input-shape 3x64x64 \
        --classes 10 --batch 32 > pytorch.jsonl
    ddpscale import-pytorch studies/mine pytorch.jsonl

Several exported files in one process, each with its own input flags (scripts/export_model.py
--manifest), as one ddpscale sweep launch trains every configuration:
    python3 scripts/gpu/pytorch_ddp_reference.py --manifest models-out/real/manifest.json \
        --rows resnet50:32 gpt2-small:16 --dtype float32 bfloat16

Your own model, as `ddpscale train --model torchscript:PATH` takes it (the same flags):
    torchrun --standalone --nproc_per_node 2 scripts/gpu/pytorch_ddp_reference.py \
        --model torchscript:models-out/resnet50.pt --input-shape 3x224x224 --classes 1000 --batch 32 \
        --dtype float32 bfloat16
The file is loaded with torch.jit.load and trained under DistributedDataParallel with ddpscale's
settings: Adam (fused on GPUs), 25 MB buckets, rank 0's buffers broadcast before each forward
(--no-broadcast-buffers: each rank keeps its own), cross-entropy on synthetic data of the
declared shape; bfloat16 is autocast around forward and loss, as ddpscale's --dtype bfloat16.

Variants (what a PyTorch user who cares about speed can run):
  eager                    Adam(fused=True), zero_grad(set_to_none=True): PyTorch's fastest eager step
  eager-caller-thread      eager with torch.autograd.set_multithreading_enabled(False): the backward
                           runs on the calling thread, not autograd's per-GPU thread, as ddpscale's does
  eager-foreach            Adam's default (foreach) and zero_grad(set_to_none=False): PyTorch's
                           default eager step
  graph                    the whole step (forward, backward, fused capturable Adam) captured once
                           with torch.cuda.graph and replayed (1 GPU only)
  compile-default          torch.compile(model), fused Adam
  compile-reduce-overhead  torch.compile(model, mode="reduce-overhead") (CUDA graphs inside), fused Adam
The compile variants report their compile time (first steps) apart from the measured steps.
--kernels PREFIX writes, per (model, batch, variant), the GPU time of every kernel in 20 more
steps, in the format of `ddpscale train --gpu-kernels` (scripts/analysis/kernel_side_by_side.py
puts the two side by side); with --trace, also their Chrome trace (PREFIX-*.json), as
`ddpscale train --gpu-trace` writes it (scripts/analysis/kernel_launches.py compares launch shapes).
"""
import argparse
import csv
import gc
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

# Widths that give exactly the seed study's parameter counts (models/README.md).
MLP_SHAPES = {
    "mlp-medium": (799, [256, 128, 64], 192, 0.2),        # 258,432 parameters
    "mlp-large": (4608, [1024, 1024, 512, 512, 256], 768, 0.3),  # 6,885,376 parameters
}
# models/model_shapes.hpp: RecurrentShape and TransformerShape defaults.
RECURRENT = dict(features=32, hidden=160, layers=2, classes=10, seq_len=64, dropout=0.2)
TRANSFORMER = dict(vocab=1000, seq_len=64, d_model=128, heads=4, ff=512, layers=8, classes=10, dropout=0.1)
MODELS = ["mlp-medium", "mlp-large", "lstm", "gru", "transformer"]
VARIANTS = ["eager", "eager-caller-thread", "eager-foreach", "graph", "compile-default", "compile-reduce-overhead"]


def build_mlp(name):
    inputs, hidden, outputs, dropout = MLP_SHAPES[name]
    layers, width = [], inputs
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU(), nn.Dropout(dropout)]
        width = h
    layers.append(nn.Linear(width, outputs))
    return nn.Sequential(*layers)


class Recurrent(nn.Module):
    """ddpscale's RecurrentModel: 2 stacked layers, dropout between them, head on the last step."""

    def __init__(self, cell):
        super().__init__()
        layer = nn.LSTM if cell == "lstm" else nn.GRU
        s = RECURRENT
        self.rnn = layer(s["features"], s["hidden"], num_layers=s["layers"], batch_first=True, dropout=s["dropout"])
        self.head = nn.Linear(s["hidden"], s["classes"])

    def forward(self, x):
        sequence, _ = self.rnn(x)
        return self.head(sequence[:, -1])


class Transformer(nn.Module):
    """ddpscale's TransformerModel: token + position embeddings, post-norm ReLU encoder layers
    (PyTorch's own, whose attention is scaled_dot_product_attention in training), mean-pool, head."""

    def __init__(self):
        super().__init__()
        s = TRANSFORMER
        self.tokens = nn.Embedding(s["vocab"], s["d_model"])
        self.positions = nn.Embedding(s["seq_len"], s["d_model"])
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(s["d_model"], s["heads"], s["ff"], s["dropout"], batch_first=True)
            for _ in range(s["layers"]))
        self.head = nn.Linear(s["d_model"], s["classes"])

    def forward(self, x):
        positions = torch.arange(x.size(1), device=x.device)
        h = self.tokens(x) + self.positions(positions)
        for block in self.blocks:
            h = block(h)
        return self.head(h.mean(1))


TORCHSCRIPT = "torchscript:"


def torchscript_input(args):
    """(feature shape, vocab or 0) from --input-shape 3x224x224 or --input tokens:VOCAB:SEQ."""
    if bool(args.input_shape) == bool(args.input):
        sys.exit("pytorch_ddp_reference.py: a torchscript:PATH model needs one of --input-shape (e.g. 3x224x224) "
                 "and --input tokens:VOCAB:SEQ, as ddpscale train")
    if args.input:
        parts = args.input.split(":")
        if len(parts) != 3 or parts[0] != "tokens":
            sys.exit(f"pytorch_ddp_reference.py: --input {args.input!r} is not tokens:VOCAB:SEQ")
        return [int(parts[2])], int(parts[1])
    return [int(v) for v in args.input_shape.split("x")], 0


class ScriptedModel:
    """A torchscript:PATH file: the module, its input and its labels' shape and classes, found as
    ddpscale's probe finds them (one forward on 2 samples)."""

    def __init__(self, name, args, device):
        self.path = name[len(TORCHSCRIPT):]
        # As ddpscale (models/torchscript_model.cpp): autocast through the dispatcher, not the
        # JIT's own rewrite of the graph.
        torch._C._jit_set_autocast_mode(False)
        self.shape, self.vocab = torchscript_input(args)
        # The probe runs on a copy of its own, as ddpscale's does: the graph executor plans a
        # module's method from its first calls, and a first call in eval mode without gradients
        # would leave the trained module with a plan that has no autograd specialisation (on
        # PyTorch 1.13, bert-base's planned graph: plain aten::dropout and aten::linear after
        # such a probe, the autograd-specialised one without it), not the plan ddpscale's
        # module, or a training job that never probed, runs.
        probe = torch.jit.load(self.path, map_location=device)
        probe.eval()
        with torch.no_grad():
            out = probe(self.inputs(2, torch.Generator().manual_seed(0)).to(device))
        del probe
        self.module = torch.jit.load(self.path, map_location=device)
        self.module.train()
        self.label_shape = list(out.shape[1:-1])
        self.classes = args.classes or out.shape[-1]

    def inputs(self, batch, generator):
        if self.vocab:
            return torch.randint(0, self.vocab, [batch] + self.shape, generator=generator)
        return torch.randn([batch] + self.shape, generator=generator)

    def batch(self, batch, generator):
        x = self.inputs(batch, generator)
        return x, torch.randint(0, self.classes, [batch] + self.label_shape, generator=generator)


def display_name(name):
    return os.path.splitext(os.path.basename(name))[0] if name.startswith(TORCHSCRIPT) else name


def build_model(name):
    if name in MLP_SHAPES:
        return build_mlp(name)
    if name in ("lstm", "gru"):
        return Recurrent(name)
    return Transformer()


def synthetic_batch(name, batch, generator):
    """ddpscale's make_synthetic_batch shapes: (inputs, labels) on the CPU."""
    if name in MLP_SHAPES:
        inputs, _, classes, _ = MLP_SHAPES[name]
        x = torch.randn(batch, inputs, generator=generator)
    elif name in ("lstm", "gru"):
        classes = RECURRENT["classes"]
        x = torch.randn(batch, RECURRENT["seq_len"], RECURRENT["features"], generator=generator)
    else:
        classes = TRANSFORMER["classes"]
        x = torch.randint(0, TRANSFORMER["vocab"], (batch, TRANSFORMER["seq_len"]), generator=generator)
    return x, torch.randint(0, classes, (batch,), generator=generator)


def parameter_count(name):
    return sum(p.numel() for p in build_model(name).parameters())


def make_optimizer(params, variant, lr, device):
    if variant == "eager-foreach" or device.type != "cuda":
        return torch.optim.Adam(params, lr=lr)
    return torch.optim.Adam(params, lr=lr, fused=True, capturable=(variant == "graph"))


class Trainer:
    """One model, batch and variant: step() runs one training step (a replay for `graph`)."""

    def __init__(self, name, batch, variant, args, device, world, rank, seed, dtype="float32"):
        torch.manual_seed(seed)
        scripted = ScriptedModel(name, args, device) if name.startswith(TORCHSCRIPT) else None
        model = scripted.module if scripted else build_model(name).to(device)
        self.parameters = sum(p.numel() for p in model.parameters())
        if variant.startswith("compile-"):
            model = torch.compile(model, mode=variant[len("compile-"):])
        if world > 1:
            model = nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None,
                                                        bucket_cap_mb=args.bucket_mb,
                                                        broadcast_buffers=not args.no_broadcast_buffers)
        self.model, self.variant = model, variant
        self.optimizer = make_optimizer(model.parameters(), variant, args.lr, device)
        self.loss_fn = nn.CrossEntropyLoss()
        self.autocast_bf16 = dtype == "bfloat16"
        if scripted:  # as ddpscale (trainer/engine/training_session.cpp): bfloat16 runs the file op by op
            torch._C._set_graph_executor_optimize(not self.autocast_bf16)
        generator = torch.Generator().manual_seed(seed)
        x, y = scripted.batch(batch * world, generator) if scripted else synthetic_batch(name, batch * world, generator)
        self.x = x[rank * batch:(rank + 1) * batch].to(device)
        self.y = y[rank * batch:(rank + 1) * batch].to(device)
        self.set_to_none = variant != "eager-foreach"
        self.graph = None

    def loss(self):
        """Cross-entropy over every label (a label per position flattens, as ddpscale's loss)."""
        with torch.autocast(self.x.device.type, dtype=torch.bfloat16, enabled=self.autocast_bf16):
            logits = self.model(self.x)
            return self.loss_fn(logits.reshape(-1, logits.shape[-1]), self.y.reshape(-1))

    def eager_step(self):
        self.optimizer.zero_grad(set_to_none=self.set_to_none)
        loss = self.loss()
        loss.backward()
        self.optimizer.step()
        return loss

    def warm_up(self, steps):
        """Eager steps; for `graph`, on a side stream as torch.cuda.graph needs, then the capture
        and one replay (a graph's first launch also uploads it)."""
        if self.variant != "graph":
            for _ in range(steps):
                self.eager_step()
            return
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(steps):
                self.eager_step()
        torch.cuda.current_stream().wait_stream(side)
        self.optimizer.zero_grad(set_to_none=True)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.static_loss = self.loss()
            self.static_loss.backward()
            self.optimizer.step()
        self.graph.replay()

    def step(self):
        if self.graph is not None:
            self.graph.replay()
        else:
            self.eager_step()


def hold_device_memory(mib, device):
    """`ddpscale train --placement-shifts` (held before the run's model is made) and
    `--process-shift` (held for the process's life): MiB of device memory, so later buffers land
    elsewhere (docs/methodology.md, "Where the buffers land")."""
    return torch.empty(mib << 20, dtype=torch.uint8, device=device) if mib > 0 else None


def granted_a_turn():
    """--take-turns, as `ddpscale train --take-turns`: True on the line "go", False on "stop" or
    the end of input."""
    line = sys.stdin.readline()
    if line in ("", "stop\n", "stop"):
        return False
    if line.strip() != "go":
        sys.exit(f"pytorch_ddp_reference.py: --take-turns expects 'go' or 'stop' on standard input, got {line.strip()!r}")
    return True


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(name, batch, variant, args, device, world, rank, dtype):
    if variant != "eager-caller-thread":
        return measure_variant(name, batch, variant, args, device, world, rank, dtype)
    # Thread-local (PyTorch 2.0 on): off for this thread, the one that calls backward.
    with torch.autograd.set_multithreading_enabled(False):
        return measure_variant(name, batch, variant, args, device, world, rank, dtype)


def measure_variant(name, batch, variant, args, device, world, rank, dtype):
    step_ms, warmup_s, run_records = [], [], []
    trainer = shift = None
    for run in range(args.runs):
        if args.take_turns and not granted_a_turn():
            break
        if args.placement_shifts:
            trainer = shift = None  # as ddpscale: the previous run's buffers are gone before the shift
            gc.collect()  # a captured graph's Python objects can hold a cycle
            torch.cuda.empty_cache()  # else the freed blocks serve the new run at the same addresses
            shift = hold_device_memory(args.placement_shifts[run % len(args.placement_shifts)], device)
        trainer = Trainer(name, batch, variant, args, device, world, rank, args.seed + run, dtype)
        start = time.perf_counter()
        trainer.warm_up(args.warmup)
        synchronize(device)
        warmup_s.append(time.perf_counter() - start)
        if world > 1:
            dist.barrier()
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        start_unix_ms = int(time.time() * 1000)
        marks = StepMarks(args.steps, device)
        start = time.perf_counter()
        marks.mark(0)
        for step in range(args.steps):
            trainer.step()
            marks.mark(step + 1)
        synchronize(device)
        elapsed = time.perf_counter() - start
        slowest = torch.tensor([elapsed], device=device)
        if world > 1:
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        step_ms.append(slowest.item() * 1000.0 / args.steps)
        run_records.append(run_record(run, args, batch * world, start_unix_ms, slowest.item(), {
            "step_us": marks.step_us(), "wall_seconds": elapsed, "process_id": os.getpid(),
            "peak_memory_bytes": torch.cuda.max_memory_allocated(device) if device.type == "cuda" else 0}, world))
        if args.take_turns:
            print(json.dumps({"turn": run, "ms_per_step": round(step_ms[-1], 5)}), flush=True)
    if not step_ms:
        sys.exit("pytorch_ddp_reference.py: no run was started (standard input ended before the first 'go')")
    if args.kernels:
        stem = f"{args.kernels}-{display_name(name)}-b{batch}-{variant}-{dtype}"
        write_kernel_table(trainer, stem + ".csv", args.kernel_steps, device, stem + ".json" if args.trace else None)
    median_ms = statistics.median(step_ms)
    return {
        "tool": "pytorch", "variant": variant, "torch": torch.__version__, "model": display_name(name), "dtype": dtype,
        "broadcast_buffers": not args.no_broadcast_buffers,
        "parameters": trainer.parameters, "batch_per_gpu": batch, "world_size": world,
        "ms_per_step": round(median_ms, 4), "samples_per_s": round(batch * world * 1000.0 / median_ms, 1),
        "runs_ms": [round(v, 4) for v in step_ms], "warmup_s": [round(v, 3) for v in warmup_s],
        "placement_shifts_mib": args.placement_shifts or [],
        "process_shift_mib": args.process_shift,
        "warmup": args.warmup, "steps": args.steps, "bucket_mb": args.bucket_mb,
        "optimizer": "adam" if variant == "eager-foreach" or device.type != "cuda" else "adam-fused", "lr": args.lr,
        "seed": args.seed, "device": device.type, "input": model_input(name, args),
        "model_sha256": file_sha256(name[len(TORCHSCRIPT):]) if name.startswith(TORCHSCRIPT) else "",
        "nccl_variables": {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")},
        "run_records": run_records,
    }


class StepMarks:
    """Each measured step's time, as ddpscale's step clock takes it: a CUDA event on the compute
    stream at every step boundary (an enqueue, no synchronisation), read after the loop; on the
    CPU, the host clock, which waits for every operation anyway."""

    def __init__(self, steps, device):
        self.cuda = device.type == "cuda"
        self.events = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)] if self.cuda else None
        self.times = [0.0] * (steps + 1)

    def mark(self, boundary):
        if self.cuda:
            self.events[boundary].record()
        else:
            self.times[boundary] = time.perf_counter()

    def step_us(self):
        if self.cuda:
            return [round(a.elapsed_time(b) * 1000.0, 2) for a, b in zip(self.events, self.events[1:])]
        return [round((b - a) * 1e6, 2) for a, b in zip(self.times, self.times[1:])]


def run_record(run, args, global_batch, start_unix_ms, slowest_seconds, rank_timings, world):
    """One run for `ddpscale import-pytorch`: every rank's step times (gathered here, after the
    measured loop), its samples/s over the slowest rank's wall time, when it started."""
    ranks = [rank_timings]
    if world > 1:
        ranks = [None] * world
        dist.all_gather_object(ranks, rank_timings)
    return {"index": run, "seed": args.seed + run, "start_unix_ms": start_unix_ms,
            "samples_per_second": global_batch * args.steps / slowest_seconds,
            "ranks": [dict(timings, rank=r) for r, timings in enumerate(ranks)]}


def model_input(name, args):
    """The input as ddpscale records it for a TorchScript file ("3x224x224", "tokens:VOCAB:SEQ")."""
    return (args.input or args.input_shape) if name.startswith(TORCHSCRIPT) else ""


def file_sha256(path):
    import hashlib
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def busy_union_us(intervals):
    """Length of the union of (start, end) intervals: kernels that overlap count once."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def concurrent_each(intervals):
    """For each (start, end) interval, in order, how long at least one other ran at the same
    time, as ddpscale's concurrent_ns_each (trainer/engine/gpu_busy.cpp) counts it: touching
    intervals do not overlap; empty ones are nothing."""
    edges = []
    for i, (start, end) in enumerate(intervals):
        if end > start:
            edges += [(start, 1, i), (end, 0, i)]  # at one instant, ends (0) before starts (1)
    concurrent, running, previous = [0] * len(intervals), set(), 0
    for at, starts, i in sorted(edges):
        if len(running) >= 2:
            for j in running:
                concurrent[j] += at - previous
        previous = at
        if starts:
            running.add(i)
        else:
            running.discard(i)
    return concurrent


def write_kernel_table(trainer, path, steps, device, trace_path=None):
    """GPU time per kernel name over `steps` more steps, as `ddpscale train --gpu-kernels` writes it:
    kernel, calls_per_step, us_per_step, share_of_busy (of the union of all kernels' intervals),
    concurrent_us_per_step (the kernel's time with other GPU work beside it)."""
    from torch.profiler import ProfilerActivity, profile
    if device.type != "cuda":
        raise SystemExit("--kernels needs a CUDA device")
    synchronize(device)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            trainer.step()
        synchronize(device)
    if trace_path:
        prof.export_chrome_trace(trace_path)  # as `ddpscale train --gpu-trace` writes it
    names, intervals = [], []
    for event in prof.events():
        if event.device_type != torch.autograd.DeviceType.CUDA:
            continue
        names.append(event.name)
        intervals.append((event.time_range.start, event.time_range.end))
    calls, total_us, concurrent_us = {}, {}, {}
    for name, (start, end), beside in zip(names, intervals, concurrent_each(intervals)):
        calls[name] = calls.get(name, 0) + 1
        total_us[name] = total_us.get(name, 0.0) + (end - start)
        concurrent_us[name] = concurrent_us.get(name, 0.0) + beside
    busy = busy_union_us(intervals) / steps
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["kernel", "calls_per_step", "us_per_step", "share_of_busy", "concurrent_us_per_step"])
        for name in sorted(total_us, key=lambda n: (-total_us[n], n)):
            us = total_us[name] / steps
            writer.writerow([name, f"{calls[name] / steps:g}", f"{us:g}", f"{us / busy:g}" if busy > 0 else "0",
                             f"{concurrent_us[name] / steps:g}"])


def manifest_rows(rows, args, parser):
    """--manifest: each row's model is a name in the manifest; it becomes (torchscript:PATH, batch,
    the options with that file's --input-shape or --input and --classes), as `ddpscale train`
    takes the file. One process then trains every row, as one ddpscale sweep launch does."""
    if not args.rows:
        parser.error("--manifest: name its models with --rows NAME:BATCH")
    if args.input_shape or args.input or args.classes:
        parser.error("--manifest gives each model its own input and classes: leave out --input-shape, --input "
                     "and --classes")
    try:
        with open(args.manifest) as f:
            entries = {e["model"]: e for e in json.load(f)}
    except (OSError, ValueError, KeyError, TypeError) as e:
        parser.error(f"--manifest {args.manifest}: not a manifest scripts/export_model.py writes ({e})")
    resolved = []
    for name, batch in rows:
        entry = entries.get(name)
        if entry is None:
            parser.error(f"--manifest {args.manifest} has no model '{name}'; it has {', '.join(entries)}")
        flag = {"--input-shape": "input_shape", "--input": "input"}.get(entry.get("input_flag"))
        if flag is None:
            parser.error(f"--manifest {args.manifest}: '{name}' has no --input-shape or --input")
        row_args = argparse.Namespace(**vars(args))
        row_args.input_shape = row_args.input = ""
        setattr(row_args, flag, str(entry["input"]))
        row_args.classes = int(entry.get("classes") or 0)
        resolved.append((TORCHSCRIPT + entry["path"], batch, row_args))
    return resolved


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", nargs="+", default=["mlp-medium", "mlp-large"], metavar="MODEL",
                        help=f"{', '.join(MODELS)} or torchscript:PATH (with --input-shape or --input)")
    parser.add_argument("--input-shape", default="", help="a torchscript:PATH model's float input per sample, e.g. 3x224x224")
    parser.add_argument("--input", default="", help="a torchscript:PATH model's token input, tokens:VOCAB:SEQ")
    parser.add_argument("--classes", type=int, default=0,
                        help="a torchscript:PATH model's label classes (0: the output's last axis)")
    parser.add_argument("--dtype", nargs="+", default=["float32"], choices=["float32", "bfloat16"],
                        help="bfloat16: autocast forward and loss, fp32 weights, gradients and optimizer")
    parser.add_argument("--no-broadcast-buffers", action="store_true",
                        help="DDP's broadcast_buffers=False: each rank keeps its own buffers")
    parser.add_argument("--batch", nargs="+", type=int, default=[8, 16, 32, 64, 128], help="batch per GPU")
    parser.add_argument("--rows", nargs="+", metavar="MODEL:BATCH",
                        help="exact (model, batch) pairs instead of --model x --batch, e.g. lstm:32 mlp-large:128")
    parser.add_argument("--manifest", metavar="JSON",
                        help="what scripts/export_model.py --manifest wrote: --rows then name its models "
                             "(resnet50:32 gpt2-small:16), each trained from its file with its own input flags, "
                             "all in this one process")
    parser.add_argument("--variant", nargs="+", default=["eager"], choices=VARIANTS)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--bucket-mb", type=float, default=25.0)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda", help="cpu: eager variants only, for tests")
    parser.add_argument("--kernels", metavar="PREFIX", help="write each configuration's kernel table to PREFIX-*.csv")
    parser.add_argument("--trace", action="store_true",
                        help="with --kernels: also write the profiled steps' Chrome trace to PREFIX-*.json")
    parser.add_argument("--kernel-steps", type=int, default=20)
    parser.add_argument("--placement-shifts", type=lambda text: [int(v) for v in text.split(",")], metavar="MIB,...",
                        help="run k first holds the (k mod n)-th of these MiB of GPU memory, as ddpscale's option")
    parser.add_argument("--process-shift", type=int, default=0, metavar="MIB",
                        help="hold MIB of GPU memory from the start to the end of the process, before anything else "
                             "is made on the GPU, as ddpscale train --process-shift")
    parser.add_argument("--take-turns", action="store_true",
                        help="one row and variant: each run starts on a line 'go' on standard input and ends with a "
                             "JSON line {turn, ms_per_step}; 'stop' or the end of input ends early "
                             "(scripts/gpu/take_turns.py alternates these runs with ddpscale's)")
    parser.add_argument("--counts", action="store_true", help="print each model's parameter count as JSON and exit")
    args = parser.parse_args()

    if args.counts:
        print(json.dumps({name: parameter_count(name) for name in MODELS}))
        return
    if args.placement_shifts and (args.device != "cuda" or min(args.placement_shifts) < 0
                                  or args.runs % len(args.placement_shifts)):
        parser.error("--placement-shifts: GPU only, each 0 or more MiB, and --runs a multiple of their number")
    if args.process_shift and (args.device != "cuda" or not 0 <= args.process_shift <= 65536):
        parser.error("--process-shift: GPU only, 0 to 65536 MiB")
    rows = ([(r.rsplit(":", 1)[0], int(r.rsplit(":", 1)[1])) for r in args.rows] if args.rows
            else [(m, b) for m in args.model for b in args.batch])
    rows = manifest_rows(rows, args, parser) if args.manifest else [(m, b, args) for m, b in rows]
    for model, _, _ in rows:
        if model not in MODELS and not model.startswith(TORCHSCRIPT):
            parser.error(f"unknown model '{model}'; choose from {', '.join(MODELS)} or torchscript:PATH")
        if model.startswith(TORCHSCRIPT) and not os.path.isfile(model[len(TORCHSCRIPT):]):
            parser.error(f"{model[len(TORCHSCRIPT):]}: no such file (write it with scripts/export_model.py)")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if args.take_turns and (len(rows) != 1 or len(args.variant) != 1 or len(args.dtype) != 1 or world != 1):
        parser.error("--take-turns: one row, one variant, one dtype and one process (no torchrun)")
    if args.device == "cpu":
        device = torch.device("cpu")
        cuda_only = [v for v in args.variant if v == "graph" or v.startswith("compile-")]
        if cuda_only:
            parser.error(f"variant(s) {', '.join(cuda_only)} need a CUDA GPU")
    else:
        if not torch.cuda.is_available():
            parser.error("no CUDA GPU visible; use --device cpu for the eager variants")
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    process_shift = hold_device_memory(args.process_shift, device)  # noqa: F841 (held to the end)
    if world > 1 and "graph" in args.variant:
        parser.error("the graph variant captures one GPU's step; run it without torchrun")
    if world > 1:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo",
                                **({"device_id": device} if device.type == "cuda" else {}))
    if args.take_turns:
        # The CUDA context and its libraries load on first use, 6 s on an H100: here, while the other programs start too, not in turn 0.
        torch.ones(1, device=device).mul_(2)
        synchronize(device)
        print("# ready for turns: send 'go' for each run, 'stop' to end", flush=True)
    for variant in args.variant:
        for dtype in args.dtype:
            for model, batch, row_args in rows:
                result = measure(model, batch, variant, row_args, device, world, rank, dtype)
                if rank == 0:
                    print(json.dumps(result), flush=True)
                gc.collect()  # the row's model and DDP wrapper are gone before the next row's
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
