#!/usr/bin/env python3
"""Does taking turns measure what separate launches measure? One row on this machine's CPU, both ways.

Usage: check.py DDPSCALE_BINARY OUT_DIR [ROUNDS]   (Python with PyTorch; run on an idle machine)
- turns: scripts/gpu/take_turns.py --device cpu, mlp-medium b8, one set of 10 turns a round.
- launches: one `ddpscale train` launch (9 runs) and one pytorch_ddp_reference.py launch (9 runs)
  back to back a round, the order alternating, each side's median run.
The methods alternate round by round (turns, launches | launches, turns | ...), so a drift of
the machine over the minutes this takes favours neither.
Both: 5 warm-up and 50 measured steps a run, PyTorch variant "eager". Prints both geometric
means with their 95% t-intervals (scripts/analysis/paired_ratio.py's paired_ratio) and each
side's median ms per step under each method, and take_turns.py's waiting check over all sets.
"""
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "analysis"))
from paired_ratio import paired_ratio  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu"))
from take_turns import waiting_check  # noqa: E402

RUN = ["--warmup", "5", "--steps", "50"]


def ddpscale_launch(binary):
    out = subprocess.run([binary, "train", "-m", "mlp-medium", "-b", "8", "--runs", "9", "--device", "cpu", *RUN],
                         capture_output=True, text=True, check=True).stdout
    sps = [float(m.group(1)) for m in re.finditer(r"^run\s+\d+\s+([\d.]+) samples/s", out, re.M)]
    return 8 * 1000.0 / statistics.median(sps)


def pytorch_launch():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gpu", "pytorch_ddp_reference.py"),
                          "--device", "cpu", "--rows", "mlp-medium:8", "--runs", "9", *RUN],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["ms_per_step"]


def turns_set(binary, out, k):
    """One set of take_turns.py: the geometric mean over turns >= 1 of PyTorch's ms over ddpscale's,
    and the turns."""
    folder = os.path.join(out, f"turns-{k}")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gpu", "take_turns.py"), "--ddpscale", binary,
                    "--rows", "mlp-medium:8", "--variants", "eager", "--sets", "1", "--turns", "10",
                    "--device", "cpu", "--out", folder, *RUN], check=True, capture_output=True)
    turns = [json.loads(line) for line in open(os.path.join(folder, "turns.jsonl"))]
    ms = {}
    for t in turns:
        if t["turn"] >= 1:
            ms.setdefault(t["turn"], {})[t["program"]] = t["ms_per_step"]
    return statistics.geometric_mean(m["pytorch:eager"] / m["ddpscale"] for m in ms.values()), turns


def launch_round(binary, k):
    if k % 2 == 0:
        ours, theirs = ddpscale_launch(binary), pytorch_launch()
    else:
        theirs, ours = pytorch_launch(), ddpscale_launch(binary)
    return ours, theirs


def main(binary, out, rounds):
    set_ratios, launches, turns = [], [], []
    for k in range(rounds):
        if k % 2 == 0:
            ratio, these = turns_set(binary, out, k)
            launches.append(launch_round(binary, k))
        else:
            launches.append(launch_round(binary, k))
            ratio, these = turns_set(binary, out, k)
        set_ratios.append(ratio)
        turns += [{**t, "set": k} for t in these]
    launch_ratios = [theirs / ours for ours, theirs in launches]
    lines = []
    for name, ratios in (("turns (sets)", set_ratios), ("launches (rounds)", launch_ratios)):
        mean, low, high = paired_ratio(ratios)
        lines.append(f"{name}: ddpscale / PyTorch {mean:.3f}x [{low:.3f}, {high:.3f}] over {len(ratios)}: "
                     + ", ".join(f"{r:.3f}" for r in ratios))
    ms = {p: statistics.median(t["ms_per_step"] for t in turns if t["program"] == p and t["turn"] >= 1)
          for p in ("ddpscale", "pytorch:eager")}
    lines.append(f"median ms per step, turns: ddpscale {ms['ddpscale']:.3f}, PyTorch {ms['pytorch:eager']:.3f}; "
                 f"launches: ddpscale {statistics.median(o for o, _ in launches):.3f}, "
                 f"PyTorch {statistics.median(t for _, t in launches):.3f}")
    lines.append("waiting check over all sets (after a wait / right after itself):")
    lines += waiting_check(turns)
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 6)
