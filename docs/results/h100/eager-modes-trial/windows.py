#!/usr/bin/env python3
"""Trial, second part: does a longer measured window narrow the spread between processes?

trial.py found ddpscale's eager mlp-medium b8 step anywhere from 0.45 to 1.05 ms from one
process to the next, whatever core, launcher or address layout, while the runs inside a
process mostly agree. If the host's slow spells last about a run of 100 steps (60 ms), a
window of 2000 steps averages over several and the processes agree better; if a process
keeps its speed for life, they do not. Conditions in rotation, mlp-medium b8, 3 runs each:
  dd-100 / dd-2000   ddpscale eager, 100 or 2000 steps a run
  py-100 / py-2000   PyTorch eager-caller-thread, 100 or 2000 steps a run
Each line also gives the steal time the guest's CPUs reported while the process ran
(/proc/stat: time the hypervisor ran something else on them), summed over all CPUs.
Usage: windows.py BINARY STOP_SECONDS > windows.txt
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trial  # noqa: E402  (its loop runs only as a script)


def steal_seconds():
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK")


def command(side, steps):
    if side == "dd":
        return [sys.argv[1]] + trial.TRAIN[:-4] + ["--steps", str(steps), "--warmup", "10"]
    return trial.PYTHON[:-2] + ["--steps", str(steps)]


stop = time.time() + float(sys.argv[2])
while time.time() < stop:
    for side, steps in (("dd", 100), ("py", 100), ("dd", 2000), ("py", 2000)):
        if time.time() >= stop:
            break
        before = steal_seconds()
        trial.measure(f"{side}-{steps}", command(side, steps), trial.ddpscale_ms if side == "dd" else trial.pytorch_ms)
        print(f"  steal {steal_seconds() - before:.2f} s", flush=True)
