#!/usr/bin/env python3
"""Issue 19's one-call runs side by side: each call's verdicts (paired_ratio.py over its turns),
the same rows from the ninth session's per-row sets (take-turns-f36376d), where each call's set
time went, and what the host did during the judged turns (cpu, preempted, host_steal_ms: the first two
from call 2 on, steal from call 4 on).

Usage: python3 summary.py > summary.md   (from this folder; standard library only)
"""
import collections
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "scripts", "analysis"))
from paired_ratio import paired_ratio, rounds_of_turns, verdict  # noqa: E402
PER_ROW = os.path.join(HERE, "..", "take-turns-f36376d")
CALLS = ["call1-f36376d", "call2-f36376d", "call4-e1e41fd", "call5-e1e41fd", "call6-67a76a7"]
EARLIER = {"eager": ["call4-eager", "call5-eager-caller-thread", "call7-eager-recurrent"], "graph": ["call3-graph"]}
ROWS = [("mlp-medium", 8), ("mlp-medium", 128), ("mlp-large", 8), ("mlp-large", 128), ("lstm", 32), ("lstm", 128),
        ("gru", 32), ("gru", 128), ("transformer", 32), ("transformer", 128)]


def read(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def verdicts(turns, variant, target):
    """{(model, batch): 'ratio [lo, hi] verdict (sets)'}: paired_ratio.py's judgement of one
    PyTorch variant over the sets of `turns`."""
    mode = turns[0]["exec"]
    rounds, _ = rounds_of_turns(turns, "turns")
    per_row = {}
    for round_ in rounds:
        for (model, batch, _), (ours, theirs) in round_.get((mode, variant), {}).items():
            per_row.setdefault((model, batch), []).append(ours / theirs)
    found = {}
    for key, ratios in per_row.items():
        mean, low, high = paired_ratio(ratios)
        found[key] = f"{mean:.3f}x [{low:.3f}, {high:.3f}] {verdict(low, high, target)} ({len(ratios)})"
    return found


def sets_of(verdict):
    """The number of sets in a verdict's text, 'ratio [lo, hi] verdict (sets)'."""
    return int(verdict.split("(")[1].split(")")[0])


def set_times(turns):
    """Mean seconds from one set's start to the next's, turn 0 together, and the judged turns."""
    by_set = collections.defaultdict(list)
    for t in turns:
        by_set[t["set"]].append(t)
    starts = [min(t["start_s"] for t in ts) for _, ts in sorted(by_set.items())]
    turn0 = [max(t["end_s"] for t in ts if t["turn"] == 0) - min(t["start_s"] for t in ts if t["turn"] == 0)
             for ts in by_set.values()]
    judged = [sum(t["end_s"] - t["start_s"] for t in ts if t["turn"] >= 1) for ts in by_set.values()]
    period = statistics.fmean(b - a for a, b in zip(starts, starts[1:])) if len(starts) > 1 else float("nan")
    return period, statistics.fmean(turn0), statistics.fmean(judged)


def host_lines(turns, call):
    judged = [t for t in turns if t["turn"] >= 1 and "cpu" in t]
    if not judged:
        return []
    steal = (f"{sum(t['host_steal_ms'] for t in judged) / sum(t['end_s'] - t['start_s'] for t in judged):.1f}"
             if all("host_steal_ms" in t for t in judged) else "not recorded")
    by_row = collections.defaultdict(list)
    for t in judged:
        by_row[(t["model"], t["batch"], t["program"])].append(t["ms_per_step"])
    median = {k: statistics.median(v) for k, v in by_row.items()}
    slow = [t for t in judged if t["ms_per_step"] > 1.25 * median[(t["model"], t["batch"], t["program"])]]
    by_core = collections.defaultdict(list)
    for t in judged:
        by_core[t["cpu"]].append(math.log(t["ms_per_step"] / median[(t["model"], t["batch"], t["program"])]))
    cores = [math.exp(statistics.fmean(v)) for v in by_core.values()]
    return [f"| {call} | {len(judged)} | {len(slow)} | {statistics.fmean(t['preempted'] for t in judged):.2f} | "
            f"{steal} | {len(by_core)} | "
            f"{min(cores):.3f}-{max(cores):.3f} |"]


def main():
    print("# Issue 19's grid in one device call: the calls side by side\n")
    print("Written by `python3 summary.py` from each call's turns.jsonl (README.md has the commands).\n")
    for mode, variant, target in (("eager", "eager-caller-thread", 1.5), ("graph", "graph", 1.0)):
        calls = [c for c in CALLS if os.path.exists(os.path.join(HERE, c, mode, "turns.jsonl"))]
        judged = {c: verdicts(read(os.path.join(HERE, c, mode, "turns.jsonl")), variant, target) for c in calls}
        earlier = {}  # the call with the most sets of that row
        for folder in EARLIER[mode]:
            for key, text in verdicts(read(os.path.join(PER_ROW, folder, "turns.jsonl")), variant, target).items():
                if key not in earlier or sets_of(text) > sets_of(earlier[key]):
                    earlier[key] = f"{text}, {folder.split('-')[0]}"
        print(f"## {mode}: ddpscale / PyTorch {variant}, judged against {target:g}x (sets in brackets)\n")
        print("| row | " + " | ".join(calls) + " | ninth session, per-row sets (the call with most sets) |")
        print("|---|" + "---|" * (len(calls) + 1))
        for model, batch in ROWS:
            print(f"| {model} b{batch} | " + " | ".join(judged[c].get((model, batch), "-") for c in calls) +
                  f" | {earlier.get((model, batch), '-')} |")
        print()
    print("## Call 2 without turn 3\n")
    print("In calls 1 and 2 every set ran a row's judged turns in one order, so ddpscale alone ran right after "
          "its own previous turn, in turn 3 (e1e41fd reverses the order in odd sets). Call 2's eager verdicts with "
          "turn 3 left out:\n")
    print("| row | ddpscale / PyTorch eager-caller-thread, turns 1, 2 and 4 |")
    print("|---|---|")
    without = verdicts([t for t in read(os.path.join(HERE, "call2-f36376d", "eager", "turns.jsonl")) if t["turn"] != 3],
                       "eager-caller-thread", 1.5)
    for model, batch in ROWS:
        print(f"| {model} b{batch} | {without[(model, batch)]} |")
    print()
    print("## Where a set's time went (s, means over sets)\n")
    print("| call | mode | sets | from one set's start to the next | turn 0, all processes together | judged turns |")
    print("|---|---|---:|---:|---:|---:|")
    for call in CALLS:
        for mode in ("graph", "eager"):
            turns = read(os.path.join(HERE, call, mode, "turns.jsonl"))
            period, turn0, judged = set_times(turns)
            print(f"| {call} | {mode} | {len({t['set'] for t in turns})} | {period:.1f} | {turn0:.1f} | {judged:.1f} |")
    print("\n## The host during the eager judged turns (cores and preemption recorded from call 2 on, steal from call 4 on)\n")
    print("A slow turn: over 1.25x its row and program's median. preempted: the process's main thread's "
          "involuntary context switches during its run; steal: /proc/stat's steal time, all cores, per second "
          "of judged turn; cores: how many the main threads ended their runs on, and the range of each core's "
          "geometric mean of ms over the row's median.\n")
    print("| call | judged turns | slow turns | preempted a turn | steal ms/s | cores | each core's turns / median |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for call in CALLS:
        for line in host_lines(read(os.path.join(HERE, call, "eager", "turns.jsonl")), call):
            print(line)


if __name__ == "__main__":
    main()
