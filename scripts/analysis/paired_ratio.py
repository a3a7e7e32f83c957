#!/usr/bin/env python3
"""ddpscale against PyTorch, paired round by round (scripts/gpu/gpu-benchmark.sh).

Usage: paired_ratio.py [--target-eager 1.5] [--target-graph 1.0] ROUND_DIR|TURNS.jsonl [...]
Each ROUND_DIR holds one round: report/summary.csv (`ddpscale report` of that round's
ddpscale sweep) and pytorch-*.jsonl (scripts/gpu/pytorch_ddp_reference.py), measured back to
back. An eager step is host work, and on the GPU machine the host's speed drifts by up to
2.5x within minutes (docs/methodology.md, "Comparing with PyTorch's DDP"), so medians taken minutes apart compare
the drift, not the programs. Within a round both sides meet the same host; the rounds run in
the order ddpscale, PyTorch | PyTorch, ddpscale | ... so a steady drift favours neither side.

Judged comparisons: ddpscale's eager step against PyTorch's variant "eager" (fused Adam,
set_to_none; lines without a variant, from before variants existed, are "eager-foreach" and
are judged in its place when a round has no "eager" line) and, where the rounds have it,
against "eager-caller-thread" (the same with the backward on the calling thread, as
ddpscale runs it, and faster than "eager"), and ddpscale's graph step
(--exec graph) against PyTorch's "graph" (the whole step captured with torch.cuda.graph).
Per configuration (model, batch per GPU, GPUs) and round: r = ddpscale's median samples/s
over its runs / PyTorch's. Over rounds: the geometric mean of r with a 95% t-interval on
log r (df = rounds - 1). Verdict against the target: "yes" when the interval's lower end is
at or above it, "no" when its upper end is below, else "undecided"; for an undecided row, the
rounds in all after which the interval would clear the target if the geometric mean and the
log spread stayed as measured (a planning figure, not a verdict). Every other PyTorch
variant in the rounds (compile-*, eager-foreach) gets an unjudged table of the same ratios.
A TURNS.jsonl (scripts/gpu/take_turns.py) holds sets of processes that took turns on the GPU,
run by run; each set is one round here, its r the geometric mean over the set's turns of
ddpscale's ms per step over PyTorch's in the same turn, turn 0 left out (a process's first
run pays for its first CUDA calls). The t-interval is then over sets, not over turns: turns of
one set share their processes, so they are not independent draws of a process.
Standard library only.
"""
import argparse
import glob
import json
import math
import os
import re
import statistics
import sys

from compare_with_pytorch import OLD_DEFAULT_VARIANT, read_ddpscale, read_pytorch_variants  # this script's folder is on sys.path

# Two-sided 95% quantiles t(0.975, df), df = 1..30 (any statistics textbook's t table, e.g.
# NIST/SEMATECH e-Handbook 1.3.6.7.2); the normal 1.960 beyond.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df):
    return T975[df - 1] if df <= len(T975) else 1.960


def read_round(directory):
    """{(mode, variant): {(model, batch, world): (ours, theirs)}}: every pairing of ddpscale's
    exec mode with a PyTorch variant that both sides measured in this round."""
    ours = read_ddpscale(os.path.join(directory, "report", "summary.csv"))
    theirs = read_pytorch_variants(sorted(glob.glob(os.path.join(directory, "pytorch-*.jsonl"))))
    pairs = {}
    for (model, batch, world, variant), reference in theirs.items():
        for mode in ("eager", "graph"):
            row = ours.get((model, batch, world, mode))
            if row and row["samples_per_s_median"]:
                pairs.setdefault((mode, variant), {})[(model, batch, world)] = (
                    float(row["samples_per_s_median"]), float(reference["samples_per_s"]))
    return pairs


def read_turns(path):
    """rounds_of_turns over a take_turns.py turns.jsonl file, its rounds labelled PATH#setK."""
    with open(path) as f:
        return rounds_of_turns([json.loads(line) for line in f], path)


def rounds_of_turns(turns, label):
    """One round per set of take_turns.py's turns: {(mode, variant): {(model, batch, 1): (ours,
    theirs)}}, ours and theirs in samples/s from the geometric means of the set's turns >= 1,
    so ours / theirs is the geometric mean of the per-turn ratios; and each round's label,
    LABEL#setK."""
    per_set = {}
    for t in turns:
        if t["turn"] == 0:
            continue
        key = (t["set"], t["model"], t["batch"], t["exec"])
        per_set.setdefault(key, {}).setdefault(t["turn"], {})[t["program"]] = t["ms_per_step"]
    rounds = {}
    for (set_index, model, batch, mode), turns in per_set.items():
        variants = {p.split(":", 1)[1] for times in turns.values() for p in times if p.startswith("pytorch:")}
        for variant in sorted(variants):
            pairs = [(times["ddpscale"], times["pytorch:" + variant]) for times in turns.values()
                     if "ddpscale" in times and "pytorch:" + variant in times]
            if not pairs:
                continue
            ours_ms = math.exp(statistics.fmean(math.log(a) for a, _ in pairs))
            theirs_ms = math.exp(statistics.fmean(math.log(b) for _, b in pairs))
            rounds.setdefault(set_index, {}).setdefault((mode, variant), {})[(model, batch, 1)] = (
                batch * 1000.0 / ours_ms, batch * 1000.0 / theirs_ms)
    return [rounds[k] for k in sorted(rounds)], [f"{label}#set{k}" for k in sorted(rounds)]


def log_mean_sd(ratios):
    """Mean and standard deviation of the log ratios (NaN sd for one round)."""
    logs = [math.log(r) for r in ratios]
    return statistics.fmean(logs), statistics.stdev(logs) if len(logs) > 1 else float("nan")


def interval(mean, sd, rounds):
    """exp of the log mean and of its 95% t-interval over that many rounds."""
    half = t975(rounds - 1) * sd / math.sqrt(rounds)
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def paired_ratio(ratios):
    """Geometric mean of the ratios and its 95% t-interval (NaN bounds for one round)."""
    mean, sd = log_mean_sd(ratios)
    if len(ratios) < 2:
        return math.exp(mean), float("nan"), float("nan")
    return interval(mean, sd, len(ratios))


def rounds_to_decide(ratios, target, most=1000):
    """The fewest rounds whose 95% t-interval would clear the target (verdict yes or no) if the
    rounds' geometric mean and log spread stayed what they are, and that verdict; (None, reason)
    where no number of rounds can say (one round, or a mean on the target)."""
    if len(ratios) < 2:
        return None, "unknown (one round)"
    mean, sd = log_mean_sd(ratios)
    for n in range(2, most + 1):
        answer = verdict(*interval(mean, sd, n)[1:], target)
        if answer != "undecided":
            return n, answer
    return None, f"more than {most}"


def verdict(low, high, target):
    if low != low:
        return "undecided (one round)"
    if low >= target:
        return "yes"
    if high < target:
        return "no"
    return "undecided"


def judged_pairings(rounds):
    """The (mode, PyTorch variant) pairs to judge: eager against "eager" (else the old default
    "eager-foreach" for rounds measured before variants existed) and "eager-caller-thread",
    graph against "graph"."""
    present = set().union(*rounds)
    eager_reference = "eager" if ("eager", "eager") in present else OLD_DEFAULT_VARIANT
    candidates = (("eager", eager_reference), ("eager", "eager-caller-thread"), ("graph", "graph"))
    return [p for p in candidates if p in present]


def round_of(directory):
    """The round a folder belongs to: gpu-benchmark.sh's PAIRING=row writes each row of round K
    to round-K/MODEL-bBATCH, which is one round, not one per row."""
    directory = os.path.normpath(directory)
    if re.fullmatch(r".+-b\d+", os.path.basename(directory)):
        return os.path.dirname(directory)
    return directory


def print_table(rounds, pairing, target, names):
    """One table of per-round ratios for a (mode, variant) pairing, with verdicts when judged;
    names[i] is the folder of rounds[i]."""
    per_round = [r.get(pairing, {}) for r in rounds]
    round_count = len({round_of(name) for name, r in zip(names, per_round) if r})
    keys = sorted(set().union(*per_round), key=lambda k: (k[0], k[2], k[1]))
    judged = target is not None
    verdict_column = f" at least {target:g}x? |" if judged else ""
    print(f"| model | batch/GPU | GPUs | rounds | ddpscale / PyTorch per round | geometric mean [95% CI] |{verdict_column}")
    print("|---|---:|---:|---:|---|---|" + ("---|" if judged else ""))
    counts, to_decide = {}, []
    for key in keys:
        ratios = [r[key][0] / r[key][1] for r in per_round if key in r]
        mean, low, high = paired_ratio(ratios)
        # Three decimals: a graph row 0.7% behind and one 2.5% behind both read 0.98 at two.
        interval = "n/a" if low != low else f"[{low:.3f}, {high:.3f}]"
        cells = f"| {key[0]} | {key[1]} | {key[2]} | {len(ratios)} | {', '.join(f'{r:.3f}' for r in ratios)} | " \
                f"{mean:.3f}x {interval} |"
        if judged:
            answer = verdict(low, high, target)
            counts[answer.split(" ")[0]] = counts.get(answer.split(" ")[0], 0) + 1
            cells += f" {answer} |"
            if answer.startswith("undecided"):
                n, outcome = rounds_to_decide(ratios, target)
                rounds_text = f"{n} rounds ({outcome})" if n else outcome
                to_decide.append(f"{key[0]} b{key[1]} on {key[2]} GPU{'s' if key[2] != 1 else ''}: {rounds_text}")
        print(cells)
    print()
    if judged:
        print(f"{len(keys)} configurations over {round_count} rounds: " +
              ", ".join(f"{counts.get(k, 0)} {k}" for k in ("yes", "no", "undecided")))
        print()
        if to_decide:
            print("Rounds in all that would decide the undecided rows, were their mean and spread to hold: " +
                  "; ".join(to_decide) + ".")
            print()


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rounds", nargs="+", help="round folders (report/summary.csv and pytorch-*.jsonl in each), "
                                                  "or take_turns.py's turns.jsonl files (one round per set)")
    parser.add_argument("--target-eager", type=float, default=1.5,
                        help="eager ratio to judge against (default 1.5)")
    parser.add_argument("--target-graph", type=float, default=1.0,
                        help="graph ratio to judge against (default 1.0: not behind)")
    args = parser.parse_args(argv)
    rounds, names = [], []
    for directory in args.rounds:
        try:
            if directory.endswith(".jsonl"):
                sets, set_names = read_turns(directory)
                rounds += sets
                names += set_names
                continue
            rounds.append(read_round(directory))
            names.append(directory)
        except OSError as e:
            print(f"paired_ratio: skipping round {directory}: {e}", file=sys.stderr)
    if not rounds or not any(rounds):
        print("paired_ratio: no readable round", file=sys.stderr)
        return 1
    targets = {"eager": args.target_eager, "graph": args.target_graph}
    judged = judged_pairings(rounds)
    for mode, variant in judged:
        print(f"### ddpscale {mode} against PyTorch {variant} (judged: at least {targets[mode]:g}x)")
        print()
        print_table(rounds, (mode, variant), targets[mode], names)
    for pairing in sorted(set().union(*rounds) - set(judged)):
        print(f"### ddpscale {pairing[0]} against PyTorch {pairing[1]} (not judged)")
        print()
        print_table(rounds, pairing, None, names)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
