#!/usr/bin/env python3
"""ddpscale's engine beside PyTorch DDP on the same TorchScript files, on 1 and N GPUs, in rounds.

Usage: engines_side_by_side.py --ddpscale BIN --manifest MANIFEST.json --rows MODEL:BATCH [...]
                               [--dtypes float32 bfloat16] [--world-size 2] [--rounds 4]
                               [--runs 2] [--warmup 5] [--steps 20] [--deadline SECONDS]
                               [--mpirun "mpirun --allow-run-as-root --bind-to none"] --out DIR
       engines_side_by_side.py --report DIR

MANIFEST is what scripts/export_model.py --manifest writes (each model's file, input and
classes); MODEL is a model named there. A round runs both engines once over every row and
dtype on 1 and on N GPUs:
  ddpscale     one `ddpscale sweep` (launches: 1) of all rows, dtypes and both world sizes, its
               configurations interleaved 1 GPU / N GPUs run by run; each configuration's
               samples/s is the median of its runs (summary.csv of `ddpscale report`)
  PyTorch DDP  scripts/gpu/pytorch_ddp_reference.py on the same file, flags and dtypes, one
               launch per model and world size (torchrun --nproc_per_node N for N GPUs)
The engines' order alternates between rounds, so a machine that drifts favours neither. Each
round is a fresh set of processes, so a round's figures are one draw of what a relaunch gives
(docs/methodology.md, "Launches"); the intervals are over rounds: a 95% t-interval of the
log of each round's ratio. A round that finished is kept (DIR/rounds.jsonl) and the next call
goes on from there; no round starts after --deadline seconds.

Writes DIR/rounds.jsonl (one line per engine, round, model, dtype and world size: samples/s)
and DIR/side-by-side.md: per model and dtype, each engine's samples/s on 1 and N GPUs, its
speedup with its interval, ddpscale over PyTorch on each world size with its interval, and
the verdicts "slower" (the ratio's whole interval below 1) and whether ddpscale's speedup lies
inside or above PyTorch DDP's interval. Standard library only.
"""
import argparse
import csv
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "pytorch_ddp_reference.py")
sys.path.insert(0, os.path.join(HERE, "..", "analysis"))
from paired_ratio import t975  # noqa: E402

ENGINES = ("ddpscale", "pytorch-ddp")


def read_rows(args):
    with open(args.manifest) as f:
        manifest = {entry["model"]: entry for entry in json.load(f)}
    rows = []
    for text in args.rows:
        model, _, batch = text.rpartition(":")
        if model not in manifest:
            sys.exit(f"engines_side_by_side.py: {model!r} is not in {args.manifest} ({', '.join(manifest)})")
        rows.append((manifest[model], int(batch)))
    return rows


def sweep_spec(rows, args, name):
    """The ddpscale side of a round: every row and dtype on 1 and N GPUs, one launch."""
    lines = [f"name: {name}", "models:"]
    for entry, _ in rows:
        key = "input_shape" if entry["input_flag"] == "--input-shape" else "input"
        lines.append(f'  - {{model: "torchscript:{entry["path"]}", {key}: "{entry["input"]}", '
                     f'classes: {entry["classes"]}}}')
    lines += [f"batch_sizes: [{rows[0][1]}]", f"world_sizes: [1, {args.world_size}]", "scaling: weak",
              f"dtype: [{', '.join(args.dtypes)}]", f"runs: {args.runs}", "launches: 1",
              f"warmup: {args.warmup}", f"steps: {args.steps}", "overrides:"]
    for entry, batch in rows:
        lines.append(f'  - {{models: ["torchscript:{entry["path"]}"], batch_sizes: [{batch}]}}')
    return "\n".join(lines) + "\n"


def run_logged(command, log_path, env=None):
    with open(log_path, "a") as log:
        log.write("$ " + " ".join(shlex.quote(c) for c in command) + "\n")
        log.flush()
        return subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env).returncode


def ddpscale_round(rows, args, round_index, mpirun):
    folder = os.path.join(args.out, f"round-{round_index}")
    os.makedirs(folder, exist_ok=True)
    spec = os.path.join(folder, "spec.yaml")
    with open(spec, "w") as f:
        f.write(sweep_spec(rows, args, f"side-by-side-round-{round_index}"))
    log = os.path.join(folder, "ddpscale.log")
    study, report = os.path.join(folder, "study"), os.path.join(folder, "report")
    status = run_logged(mpirun + ["-np", str(args.world_size), args.ddpscale, "sweep", spec, "--out", study,
                                  "--overwrite", "--no-commbench"], log)
    if status not in (0, 3):
        sys.exit(f"engines_side_by_side.py: ddpscale sweep failed (exit {status}); see {log}")
    if run_logged([args.ddpscale, "report", study, "--out", report], log) != 0:
        sys.exit(f"engines_side_by_side.py: ddpscale report failed; see {log}")
    by_path = {f"torchscript:{entry['path']}": entry["model"] for entry, _ in rows}
    results = []
    with open(os.path.join(report, "summary.csv")) as f:
        for row in csv.DictReader(f):
            model = by_path.get(row["model"], os.path.splitext(os.path.basename(row["model"]))[0])
            results.append({"engine": "ddpscale", "model": model, "dtype": row["dtype"],
                            "world_size": int(row["world_size"]), "batch": int(row["batch_per_rank"]),
                            "samples_per_s": float(row["samples_per_s_median"]),
                            "parameters": int(row["parameters"])})
    return results


def pytorch_round(rows, args, round_index):
    folder = os.path.join(args.out, f"round-{round_index}")
    os.makedirs(folder, exist_ok=True)
    log = os.path.join(folder, "pytorch.log")
    results = []
    for entry, batch in rows:
        for world in (1, args.world_size):
            command = [sys.executable, REFERENCE] if world == 1 else [
                "torchrun", "--standalone", f"--nproc_per_node={world}", REFERENCE]
            command += ["--rows", f"torchscript:{entry['path']}:{batch}", entry["input_flag"], entry["input"],
                        "--classes", str(entry["classes"]), "--dtype", *args.dtypes, "--runs", str(args.runs),
                        "--warmup", str(args.warmup), "--steps", str(args.steps)]
            output = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            with open(log, "a") as f:
                f.write("$ " + " ".join(shlex.quote(c) for c in command) + "\n" + output.stdout)
            if output.returncode != 0:
                sys.exit(f"engines_side_by_side.py: the PyTorch DDP reference failed on {entry['model']} "
                         f"(exit {output.returncode}); see {log}")
            for line in output.stdout.splitlines():
                if line.startswith("{") and '"tool": "pytorch"' in line:
                    r = json.loads(line)
                    results.append({"engine": "pytorch-ddp", "model": entry["model"], "dtype": r["dtype"],
                                    "world_size": r["world_size"], "batch": r["batch_per_gpu"],
                                    "samples_per_s": r["samples_per_s"], "parameters": r["parameters"]})
    return results


def interval(logs):
    """Geometric mean and 95% t-interval from per-round logs of a ratio."""
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), float("nan"), float("nan")
    half = t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def fmt(value, low, high, digits=3):
    if math.isnan(low):
        return f"{value:.{digits}g}"
    return f"{value:.{digits}g} [{low:.{digits}g}, {high:.{digits}g}]"


def write_report(out):
    with open(os.path.join(out, "rounds.jsonl")) as f:
        records = [json.loads(line) for line in f if line.strip()]
    world = max(r["world_size"] for r in records)
    rounds = sorted({r["round"] for r in records})
    table = {(r["round"], r["engine"], r["model"], r["dtype"], r["world_size"]): r for r in records}
    keys = sorted({(r["model"], r["dtype"]) for r in records})
    lines = [f"# ddpscale beside PyTorch DDP: {len(rounds)} rounds, 1 and {world} GPUs", "",
             "samples/s: geometric mean over rounds; speedup = N GPUs over 1 of the same engine and round; "
             "ratio = ddpscale over PyTorch DDP in the same round; [95% t-interval over rounds].", "",
             f"| model | dtype | batch/GPU | ddpscale 1 GPU | PyTorch 1 GPU | ddpscale {world} GPUs | "
             f"PyTorch DDP {world} GPUs | ddpscale speedup | PyTorch DDP speedup | ratio 1 GPU | ratio {world} GPUs | "
             "verdict |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for model, dtype in keys:
        def series(engine, w):
            return [table[(k, engine, model, dtype, w)]["samples_per_s"] for k in rounds
                    if (k, engine, model, dtype, w) in table]

        complete = [k for k in rounds if all((k, e, model, dtype, w) in table for e in ENGINES for w in (1, world))]
        if not complete:
            continue

        def value(k, engine, w):
            return table[(k, engine, model, dtype, w)]["samples_per_s"]

        speed = {e: interval([math.log(value(k, e, world) / value(k, e, 1)) for k in complete]) for e in ENGINES}
        ratio = {w: interval([math.log(value(k, "ddpscale", w) / value(k, "pytorch-ddp", w)) for k in complete])
                 for w in (1, world)}
        slower = [f"{w} GPU{'s' if w > 1 else ''}" for w in (1, world) if ratio[w][2] < 1]
        verdict = ("slower on " + ", ".join(slower)) if slower else "not slower"
        pytorch_low = speed["pytorch-ddp"][1]
        inside = math.isnan(pytorch_low) or speed["ddpscale"][0] >= pytorch_low
        verdict += "; speedup " + ("inside or above PyTorch DDP's interval" if inside else "BELOW PyTorch DDP's interval")
        throughput = {(e, w): interval([math.log(v) for v in series(e, w)])[0] for e in ENGINES for w in (1, world)}
        batch = table[(complete[0], "ddpscale", model, dtype, 1)]["batch"]
        lines.append(f"| {model} | {dtype} | {batch} | {throughput[('ddpscale', 1)]:,.0f} | "
                     f"{throughput[('pytorch-ddp', 1)]:,.0f} | {throughput[('ddpscale', world)]:,.0f} | "
                     f"{throughput[('pytorch-ddp', world)]:,.0f} | {fmt(*speed['ddpscale'])} | "
                     f"{fmt(*speed['pytorch-ddp'])} | {fmt(*ratio[1])} | {fmt(*ratio[world])} | {verdict} |")
    lines += ["", f"Rounds with both engines on every world size: {len(rounds)}. Data: rounds.jsonl beside this file."]
    with open(os.path.join(out, "side-by-side.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ddpscale")
    parser.add_argument("--manifest")
    parser.add_argument("--rows", nargs="+", metavar="MODEL:BATCH")
    parser.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"], choices=["float32", "bfloat16"])
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--deadline", type=float, default=float("inf"), help="no round starts after this many seconds")
    parser.add_argument("--mpirun", default="mpirun --allow-run-as-root --bind-to none")
    parser.add_argument("--out")
    parser.add_argument("--report", metavar="DIR", help="write DIR/side-by-side.md from DIR/rounds.jsonl and exit")
    args = parser.parse_args()
    if args.report:
        write_report(args.report)
        return
    if not (args.ddpscale and args.manifest and args.rows and args.out):
        parser.error("--ddpscale, --manifest, --rows and --out are needed (or --report DIR)")
    rows = read_rows(args)
    os.makedirs(args.out, exist_ok=True)
    journal = os.path.join(args.out, "rounds.jsonl")
    done = set()
    if os.path.exists(journal):
        with open(journal) as f:
            done = {json.loads(line)["round"] for line in f if line.strip()}
    start = time.monotonic()
    for k in range(args.rounds):
        if k in done:
            continue
        if time.monotonic() - start > args.deadline:
            print(f"deadline: round {k} not started; run the same command again to go on", flush=True)
            break
        order = ENGINES if k % 2 == 0 else tuple(reversed(ENGINES))
        results = []
        for engine in order:
            began = time.monotonic()
            part = ddpscale_round(rows, args, k, shlex.split(args.mpirun)) if engine == "ddpscale" else \
                pytorch_round(rows, args, k)
            print(f"round {k}: {engine} {time.monotonic() - began:.0f} s", flush=True)
            results += part
        with open(journal, "a") as f:
            for r in results:
                f.write(json.dumps(dict(r, round=k)) + "\n")
    write_report(args.out)


if __name__ == "__main__":
    main()
