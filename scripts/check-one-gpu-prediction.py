#!/usr/bin/env python3
"""How well a study of one GPU is predicted on N GPUs from a named interconnect profile.

Studies measured on 1 and N GPUs of one kind of machine are grouped by lease (one machine,
one host state). Each lease in turn is held out: the profile's cost of sharing a node is
built from the other leases' studies only (their model errors, `ddpscale predict`'s
node-sharing.yaml), and every N-GPU configuration of the held-out lease is predicted from its
1-GPU twin, the named allreduce curve and that cost alone, as a user with one GPU would be
told; then compared with what was measured. Prints the median absolute error, the mean
signed error (bias), the coverage of the 95% intervals and their median half-width per model
family, per lease, per GPU count and overall, and the profile pooled from every lease (the
node_sharing block for the entry in experiments/interconnects.yaml: one cost per GPU count
measured, a list of them where the studies measured several). Leases given with --test are
held out of every profile and predicted from the one pooled from all --lease leases: an
out-of-sample check of that profile.

  scripts/check-one-gpu-prediction.py --interconnect h100-nvlink-2gpu \\
      --lease seed=docs/results/h100x2/seed-study \\
      --lease repro1=docs/results/h100x2/reproducibility/study-i,docs/results/h100x2/reproducibility/study-j ...

Each DIR is a study folder (`ddpscale sweep --out`) or a report folder (summary.csv).
Needs PyYAML (python3-yaml) and a built ddpscale; no GPU.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile

import yaml

FAMILIES = [("cnn", ("resnet",)), ("transformer", ("transformer", "gpt2", "bert", "vit")),
            ("rnn", ("lstm", "gru")), ("mlp", ("mlp",))]


def family_of(model):
    name = os.path.basename(model).lower()
    for family, stems in FAMILIES:
        if any(stem in name for stem in stems):
            return family
    return "other"


def predict(ddpscale, study, interconnect, catalog, out):
    command = [ddpscale, "predict", study, "--gpus", "2", "--allreduce", interconnect, "--interconnects", catalog,
               "--no-plots", "--out", out]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"check-one-gpu-prediction.py: {' '.join(command)} failed:\n{done.stderr}")


def model_errors(ddpscale, studies, interconnect, catalog, scratch, with_steps):
    """The model-only step errors of the studies' N-GPU configurations, each with the 1-GPU
    step its prediction started from (None where not recorded), per N: {N: [(error, step_us)]}."""
    errors = {}
    for k, study in enumerate(studies):
        out = os.path.join(scratch, f"errors-{k}")
        predict(ddpscale, study, interconnect, catalog, out)
        path = os.path.join(out, "node-sharing.yaml")
        if not os.path.exists(path):
            sys.exit(f"check-one-gpu-prediction.py: {study} has no N-GPU configuration with its 1-GPU twin")
        with open(path) as f:
            block = yaml.safe_load(f)["node_sharing"]
        for cost in block if isinstance(block, list) else [block]:
            steps = cost.get("one_gpu_step_us") if with_steps else None
            steps = steps or [None] * len(cost["step_errors"])
            # float(): PyYAML reads yaml-cpp's "2e+04" (no dot) as a string.
            errors.setdefault(cost["gpus"], []).extend(
                (float(e), None if step is None else float(step)) for e, step in zip(cost["step_errors"], steps))
    return errors


def pooled(errors_per_lease):
    """{N: errors} of several leases, in lease order."""
    errors = {}
    for per_count in errors_per_lease:
        for gpus, values in per_count.items():
            errors.setdefault(gpus, []).extend(values)
    return dict(sorted(errors.items()))


def node_sharing_block(errors, source):
    """One cost as a map, several (one per GPU count) as a list; with one_gpu_step_us where
    every error has its step."""
    costs = []
    for gpus, values in sorted(errors.items()):
        cost = {"gpus": gpus, "source": source, "step_errors": [round(e, 4) for e, _ in values]}
        if all(step is not None for _, step in values):
            cost["one_gpu_step_us"] = [round(step, 1) for _, step in values]
        costs.append(cost)
    return costs[0] if len(costs) == 1 else costs


def catalog_with(base_catalog, interconnect, errors, source, path):
    with open(base_catalog) as f:
        catalog = yaml.safe_load(f)
    if interconnect not in catalog["interconnects"]:
        sys.exit(f"check-one-gpu-prediction.py: {interconnect} is not in {base_catalog}")
    catalog["interconnects"][interconnect]["node_sharing"] = node_sharing_block(errors, source)
    with open(path, "w") as f:
        yaml.safe_dump(catalog, f, sort_keys=False)


def checked_rows(ddpscale, studies, interconnect, catalog, scratch, lease):
    rows = []
    for k, study in enumerate(studies):
        out = os.path.join(scratch, f"check-{lease}-{k}")
        predict(ddpscale, study, interconnect, catalog, out)
        with open(os.path.join(out, "validation.csv")) as f:
            for r in csv.DictReader(f):
                if r["node_sharing"]:
                    # The speedup's interval: the 1-GPU twin's own spread, which a speedup cancels,
                    # widens the throughput's.
                    point, low, high = (float(r[k]) for k in ("node_sharing_speedup", "node_sharing_speedup_low",
                                                              "node_sharing_speedup_high"))
                    rows.append({"lease": lease, "study": study, "model": r["model"], "family": family_of(r["model"]),
                                 "gpus": int(r["world_size"]),
                                 "error": float(r["node_sharing_error"]), "covered": r["node_sharing_covered"] == "true",
                                 "half_width": (high - low) / 2 / point})
    return rows


def summary_line(name, rows):
    errors = [abs(r["error"]) for r in rows]
    covered = sum(r["covered"] for r in rows)
    half_width = statistics.median(r["half_width"] for r in rows)
    bias = statistics.fmean(r["error"] for r in rows)
    return (f"| {name} | {len(rows)} | {100 * statistics.median(errors):.1f}% | {100 * bias:+.1f}% | "
            f"{covered} of {len(rows)} ({100 * covered / len(rows):.0f}%) | {100 * half_width:.1f}% |")


def named_leases(parser, flag, items):
    """{NAME: [DIR, ...]} from NAME=DIR[,DIR...] arguments."""
    leases = {}
    for item in items:
        name, _, dirs = item.partition("=")
        if not dirs:
            parser.error(f"{flag} {item}: give NAME=DIR[,DIR...]")
        leases[name] = dirs.split(",")
    return leases


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interconnect", required=True, help="the entry's name, e.g. h100-nvlink-2gpu")
    parser.add_argument("--lease", action="append", required=True, metavar="NAME=DIR[,DIR...]",
                        help="the studies of one lease (repeat; at least two leases)")
    parser.add_argument("--test", action="append", default=[], metavar="NAME=DIR[,DIR...]",
                        help="a lease predicted from the profile pooled from every --lease lease (repeat)")
    parser.add_argument("--interconnects", default=os.path.join(os.path.dirname(__file__), "..", "experiments",
                                                                "interconnects.yaml"))
    parser.add_argument("--ddpscale", default=os.path.join(os.path.dirname(__file__), "..", "build", "trainer",
                                                           "ddpscale"))
    parser.add_argument("--without-steps", action="store_true",
                        help="pool the errors without their 1-GPU steps: each used as measured, not moved to "
                             "the predicted configuration's step")
    args = parser.parse_args()
    leases = named_leases(parser, "--lease", args.lease)
    tests = named_leases(parser, "--test", args.test)
    if set(leases) & set(tests):
        parser.error(f"a lease is both --lease and --test: {', '.join(sorted(set(leases) & set(tests)))}")
    if len(leases) < 2:
        parser.error("give at least two leases: each is checked against a profile built from the others")

    with tempfile.TemporaryDirectory() as scratch:
        errors_of = {}
        for name, studies in leases.items():
            errors_of[name] = model_errors(args.ddpscale, studies, args.interconnect, args.interconnects,
                                           os.path.join(scratch, name), not args.without_steps)
        rows = []
        for held_out, studies in leases.items():
            others = [n for n in leases if n != held_out]
            catalog = os.path.join(scratch, f"catalog-without-{held_out}.yaml")
            catalog_with(args.interconnects, args.interconnect, pooled(errors_of[n] for n in others),
                         "leases " + ", ".join(others), catalog)
            rows += checked_rows(args.ddpscale, studies, args.interconnect, catalog, scratch, held_out)
        tested = []
        if tests:
            catalog = os.path.join(scratch, "catalog-of-every-lease.yaml")
            catalog_with(args.interconnects, args.interconnect, pooled(errors_of[n] for n in leases),
                         "leases " + ", ".join(leases), catalog)
            for name, studies in tests.items():
                tested += checked_rows(args.ddpscale, studies, args.interconnect, catalog, scratch, name)

    print("Each lease predicted from a profile built from the other leases only.\n")
    print("| model family | configurations | median abs. error | mean signed error | inside the 95% interval | "
          "median half-width |")
    print("|---|---:|---:|---:|---:|---:|")
    for family, _ in FAMILIES + [("other", ())]:
        picked = [r for r in rows if r["family"] == family]
        if picked:
            print(summary_line(family, picked))
    for lease in leases:
        print(summary_line(f"lease {lease}", [r for r in rows if r["lease"] == lease]))
    counts = sorted({r["gpus"] for r in rows})
    if len(counts) > 1:
        for gpus in counts:
            print(summary_line(f"{gpus} GPUs", [r for r in rows if r["gpus"] == gpus]))
    print(summary_line("all", rows))
    if tested:
        print("\nOut of sample: each --test lease predicted from the profile pooled from every --lease lease.\n")
        print("| lease and GPUs | configurations | median abs. error | mean signed error | inside the 95% interval | "
              "median half-width |")
        print("|---|---:|---:|---:|---:|---:|")
        for lease in tests:
            for gpus in sorted({r["gpus"] for r in tested if r["lease"] == lease}):
                print(summary_line(f"{lease}, {gpus} GPUs", [r for r in tested if r["lease"] == lease and r["gpus"] == gpus]))
    source = "leases " + ", ".join(f"{n} ({' '.join(leases[n])})" for n in leases)
    print("\nThe profile pooled from every lease (for the entry's node_sharing):\n")
    print(yaml.safe_dump({"node_sharing": node_sharing_block(pooled(errors_of[n] for n in leases), source)},
                         sort_keys=False, width=100, default_flow_style=None))


if __name__ == "__main__":
    main()
