#!/usr/bin/env python3
"""How well the node-sharing carry takes a machine's cost of sharing a node to a GPU
count it did not measure: one count of the entry is held out and predicted from the others.

The entry's `node_sharing` in an interconnects file holds costs measured at several GPU
counts (the relative errors of the predictor's model-only step, measured / predicted - 1).
The held-out count's cost is carried from the kept ones exactly as `ddpscale predict` carries
it (prediction/node_sharing.hpp; docs/methodology.md, "Predicted scaling"): the nearest kept
count's errors (below, else above), widened by their median's standard error and half the gap
between that median and a log2 N line through the kept counts' medians (through the origin
unless 1 GPU is kept). Then set against what was measured at the held-out count: the typical
step (median) the carried cost predicts against the measured one, and how many of the
measured errors lie inside the carried cost's 95% range. Beside it, the kept count's errors
as they are (not widened) for comparison.

With --study DIR (repeat), every configuration of the studies measured at the held-out
count is also predicted from its 1-GPU twin with the kept costs alone (`ddpscale predict`'s
"node sharing only" self-check, the named allreduce curve), and the throughput errors are
summarised: median absolute error, mean signed error, coverage, median half-width.

  scripts/check-node-sharing-model.py --interconnect h200-nvlink-4gpu --hold-out 4 --keep 1,2 \\
      [--study docs/results/h200x4/seed-study ...]

Needs PyYAML (python3-yaml); --study needs a built ddpscale; no GPU.
"""
import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
import tempfile

import yaml

# The three-point Gauss-Hermite rule as six equally likely points (weights 1/6, 2/3, 1/6).
GAUSS_HERMITE = [-math.sqrt(3), 0, 0, 0, 0, math.sqrt(3)]


def fail(message):
    sys.exit("check-node-sharing-model.py: " + message)


def log_median(errors):
    """The median of log(1 + error) and its standard error, sqrt(pi / 2) sd / sqrt(n) (0 for one)."""
    logs = [math.log1p(e) for e in errors]
    se = math.sqrt(math.pi / 2) * statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else 0.0
    return statistics.median(logs), se


def log2_line(costs, gpus):
    """The least-squares line in log2 N through the medians: its value at `gpus`, its standard error."""
    counts = sorted(costs)
    xs = [math.log2(n) for n in counts]
    x = math.log2(gpus)
    if 1 not in costs:
        sxx = sum(xk * xk for xk in xs)
        weights = [x * xk / sxx for xk in xs]
    else:
        mean_x = sum(xs) / len(xs)
        sxx = sum((xk - mean_x) ** 2 for xk in xs)
        if sxx <= 0:
            fail("the kept costs do not fix a line: keep a count of 2 or more GPUs")
        weights = [1 / len(xs) + (xk - mean_x) * (x - mean_x) / sxx for xk in xs]
    means = [log_median(costs[n]) for n in counts]
    centre = sum(w * m for w, (m, _) in zip(weights, means))
    sd = math.sqrt(sum((w * se) ** 2 for w, (_, se) in zip(weights, means)))
    return centre, sd


def carried(costs, gpus):
    """The cost carried to `gpus` from `costs` ({gpus: step errors}), as the predictor makes it."""
    if not any(n >= 2 for n in costs):
        fail("no kept cost at 2 or more GPUs to carry")
    below = [n for n in costs if 2 <= n < gpus]
    above = [n for n in costs if n >= 2 and n > gpus]
    source = max(below) if below else min(above)
    centre, fit_sd = log_median(costs[source])
    grown, _ = log2_line(costs, gpus)
    growth_sd = abs(grown - centre) / 2
    model_sd = math.hypot(fit_sd, growth_sd)
    errors = [math.expm1(math.log1p(e) + model_sd * z) for e in costs[source] for z in GAUSS_HERMITE]
    return {"errors": errors, "log_inflation": centre, "fit_sd": fit_sd, "growth_sd": growth_sd,
            "model_sd": model_sd, "spread_from": source}


def quantile(values, p):
    """R's type 7 (the predictor's percentile interval uses the same)."""
    ordered = sorted(values)
    h = (len(ordered) - 1) * p
    low = math.floor(h)
    return ordered[low] + (h - low) * (ordered[min(low + 1, len(ordered) - 1)] - ordered[low])


def costs_of(entry, path, name):
    """{gpus: step errors} from the entry's node_sharing, one block or a list of them."""
    block = entry.get("node_sharing")
    if block is None:
        fail(f"{path}: {name} has no node_sharing")
    blocks = block if isinstance(block, list) else [block]
    costs = {}
    for b in blocks:
        if not isinstance(b, dict) or "gpus" not in b or "step_errors" not in b:
            fail(f"{path}: {name}.node_sharing: each cost needs gpus and step_errors")
        costs[int(b["gpus"])] = [float(e) for e in b["step_errors"]]
    return costs


def cost_line(label, errors, measured):
    inside = sum(quantile(errors, 0.025) <= e <= quantile(errors, 0.975) for e in measured)
    predicted_step = 1 + statistics.median(errors)
    measured_step = 1 + statistics.median(measured)
    return (f"| {label} | {100 * statistics.median(errors):+.1f}% | {100 * (predicted_step / measured_step - 1):+.1f}% | "
            f"{inside} of {len(measured)} ({100 * inside / len(measured):.0f}%) |")


def check_studies(args, entry_catalog, kept_blocks):
    """The held-out count's configurations predicted with the kept costs alone."""
    with tempfile.TemporaryDirectory() as scratch:
        catalog = dict(entry_catalog)
        catalog["interconnects"] = dict(catalog["interconnects"])
        entry = dict(catalog["interconnects"][args.interconnect])
        entry["node_sharing"] = kept_blocks
        catalog["interconnects"][args.interconnect] = entry
        path = os.path.join(scratch, "kept.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(catalog, f, sort_keys=False)
        rows = []
        for k, study in enumerate(args.study):
            out = os.path.join(scratch, f"predict-{k}")
            command = [args.ddpscale, "predict", study, "--gpus", str(args.hold_out), "--allreduce",
                       args.interconnect, "--interconnects", path, "--no-plots", "--out", out]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                fail(f"{' '.join(command)} failed:\n{done.stderr}")
            with open(os.path.join(out, "validation.csv")) as f:
                for r in csv.DictReader(f):
                    if int(r["world_size"]) == args.hold_out and r["node_sharing"]:
                        point, low, high = (float(r[c]) for c in ("node_sharing", "node_sharing_low",
                                                                   "node_sharing_high"))
                        rows.append({"error": float(r["node_sharing_error"]),
                                     "covered": r["node_sharing_covered"] == "true",
                                     "half_width": (high - low) / 2 / point})
    if not rows:
        fail(f"the studies have no {args.hold_out}-GPU configuration with its 1-GPU twin")
    covered = sum(r["covered"] for r in rows)
    print(f"\nThe studies' {args.hold_out}-GPU configurations predicted from their 1-GPU twins with the kept costs "
          "alone:\n")
    print("| configurations | median abs. error | mean signed error | inside the 95% interval | median half-width |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {len(rows)} | {100 * statistics.median(abs(r['error']) for r in rows):.1f}% | "
          f"{100 * statistics.fmean(r['error'] for r in rows):+.1f}% | {covered} of {len(rows)} "
          f"({100 * covered / len(rows):.0f}%) | {100 * statistics.median(r['half_width'] for r in rows):.1f}% |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interconnect", required=True, help="the entry's name")
    parser.add_argument("--hold-out", type=int, default=4, help="the GPU count to predict (default 4)")
    parser.add_argument("--keep", help="the GPU counts to predict it from, e.g. 1,2 (default: every count below it)")
    parser.add_argument("--interconnects", default=os.path.join(os.path.dirname(__file__), "..", "experiments",
                                                                "interconnects.yaml"))
    parser.add_argument("--study", action="append", default=[], metavar="DIR",
                        help="a study measured at the held-out count, predicted with the kept costs (repeat)")
    parser.add_argument("--ddpscale", default=os.path.join(os.path.dirname(__file__), "..", "build", "trainer",
                                                           "ddpscale"))
    args = parser.parse_args()
    with open(args.interconnects) as f:
        catalog = yaml.safe_load(f)
    entry = catalog.get("interconnects", {}).get(args.interconnect)
    if entry is None:
        fail(f"{args.interconnect} is not in {args.interconnects}")
    costs = costs_of(entry, args.interconnects, args.interconnect)
    if args.hold_out not in costs:
        fail(f"{args.interconnect} has no cost measured at {args.hold_out} GPUs to hold out "
             f"(it has {sorted(costs)})")
    keep = sorted(int(n) for n in args.keep.split(",")) if args.keep else sorted(n for n in costs if n < args.hold_out)
    missing = [n for n in keep if n not in costs]
    if missing or args.hold_out in keep:
        fail(f"--keep {keep}: the entry has {sorted(costs)}, and the held-out {args.hold_out} cannot be kept")
    kept = {n: costs[n] for n in keep}
    measured = costs[args.hold_out]
    carry = carried(kept, args.hold_out)
    nearest = carry["spread_from"]

    print(f"{args.interconnect}: the cost at {args.hold_out} GPUs ({len(measured)} configurations, measured median "
          f"step error {100 * statistics.median(measured):+.1f}%) predicted from "
          f"{', '.join(str(n) for n in keep)} GPUs only.\n")
    print(f"Carried: median log(1 + error) {carry['log_inflation']:.4f} against {log_median(measured)[0]:.4f} measured; "
          f"model sd {carry['model_sd']:.4f} (its median's {carry['fit_sd']:.4f}, half the gap to log2 N "
          f"{carry['growth_sd']:.4f}).\n")
    print(f"| cost used at {args.hold_out} GPUs | median step error | typical step, predicted / measured - 1 | "
          "measured errors inside its 95% range |")
    print("|---|---:|---:|---:|")
    print(cost_line(f"carried from {', '.join(str(n) for n in keep)}: the {nearest}-GPU cost, widened", carry["errors"],
                    measured))
    print(cost_line(f"the {nearest}-GPU cost as measured, not widened", kept[nearest], measured))
    if args.study:
        blocks = [b for b in (entry["node_sharing"] if isinstance(entry["node_sharing"], list)
                              else [entry["node_sharing"]]) if int(b["gpus"]) in kept]
        check_studies(args, catalog, blocks)


if __name__ == "__main__":
    main()
