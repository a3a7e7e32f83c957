#!/usr/bin/env python3
"""Each side's ms per step at each --process-shifts amount, from take_turns.py's turns.jsonl:
which side moves with the layout. Medians over the turns >= 1 of every set with that shift.
Usage: per_shift_ms.py TURNS.jsonl... > per-shift-ms.md"""
import json
import statistics
import sys

for path in sys.argv[1:]:
    times = {}
    with open(path) as f:
        for line in f:
            t = json.loads(line)
            if t["turn"] >= 1:
                key = (t["model"], t["batch"], t["process_shift_mib"])
                times.setdefault(key, {}).setdefault(t["program"], []).append(t["ms_per_step"])
    print(f"### {path}\n\n| model | batch | MiB held first | turns | ddpscale ms (median) | PyTorch graph ms (median) "
          f"| PyTorch / ddpscale |\n|---|---:|---:|---:|---:|---:|---:|")
    for (model, batch, shift), sides in sorted(times.items()):
        ours, theirs = statistics.median(sides["ddpscale"]), statistics.median(sides["pytorch:graph"])
        print(f"| {model} | {batch} | {shift} | {len(sides['ddpscale'])} | {ours:.4f} | {theirs:.4f} | {theirs / ours:.3f} |")
    print()
