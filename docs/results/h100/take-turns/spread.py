#!/usr/bin/env python3
"""Where the spread of take_turns.py's log ratios lies: between turns of one set, or between sets.

Usage: spread.py TURNS.jsonl [...]   (writes a markdown table to standard output)
For each row and PyTorch variant: the log ratio ln(PyTorch ms / ddpscale ms) of every turn >= 1;
"within" is the root of the mean of the sets' variances, "between" the standard deviation of
the sets' means, and "predicted" within / sqrt(turns a set): what the sets' means would spread
if turns were independent draws and a set added nothing. When that holds, between / predicted
falls 95% of the time in 0.27-1.77 with 4 sets (chi-square with 3 df: 0.216 and 9.348) and in
0.41-1.60 with 6 sets (5 df: 0.831 and 12.833; any chi-square table).
"""
import collections
import json
import math
import statistics
import sys


def main(paths):
    print("| model | batch | PyTorch variant | sets | turns a set | within | between | predicted | between / predicted |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for path in paths:
        turns = [json.loads(line) for line in open(path)]
        ms = collections.defaultdict(dict)
        for t in turns:
            if t["turn"] >= 1:
                ms[(t["model"], t["batch"], t["set"], t["turn"])][t["program"]] = t["ms_per_step"]
        variants = sorted({t["program"] for t in turns if t["program"] != "ddpscale"})
        rows = sorted({(t["model"], t["batch"]) for t in turns})
        for (model, batch) in rows:
            for variant in variants:
                sets = collections.defaultdict(list)
                for (m, b, s, _), programs in ms.items():
                    if (m, b) == (model, batch):
                        sets[s].append(math.log(programs[variant] / programs["ddpscale"]))
                n = min(len(v) for v in sets.values())
                within = math.sqrt(statistics.fmean(statistics.variance(v) for v in sets.values()))
                between = statistics.stdev(statistics.fmean(v) for v in sets.values())
                predicted = within / math.sqrt(n)
                print(f"| {model} | {batch} | {variant.split(':', 1)[1]} | {len(sets)} | {n} | {within:.3f} | "
                      f"{between:.3f} | {predicted:.3f} | {between / predicted:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
