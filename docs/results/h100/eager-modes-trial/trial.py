#!/usr/bin/env python3
"""Trial: what puts an eager process in its slow mode? (docs/benchmarks.md, 2026-11-25)

An eager step's time is bimodal from process to process, ddpscale's and PyTorch's alike,
while the runs inside one process agree within a few percent. Each line here is one
process of mlp-medium b8 eager in the grid's shape (3 runs x 100 steps after 10 warm-up),
under one condition, taken in rotation so a drift of the host touches every condition:
  free        as the grid runs it, no pinning
  mpirun      under mpirun -np 1 --bind-to none, as gpu-benchmark.sh launches a sweep
  core-K      taskset -c K: the whole process on one core, K = 0..15 in turn
  noaslr      setarch -R: the same address layout in every process
  py-free     PyTorch's eager-caller-thread step, no pinning
  py-core-K   PyTorch pinned to one core
Per process: the median ms per step over its runs, each run's, and the child's wall, user
and system seconds and voluntary/involuntary context switches (getrusage), which tell a
busy slow thread (user ~ wall) from a waiting one.
Usage: trial.py BINARY STOP_SECONDS > trial.txt
"""
import json
import os
import re
import resource
import subprocess
import sys
import time

root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
reference = os.path.join(root, "scripts", "gpu", "pytorch_ddp_reference.py")
TRAIN = ["train", "-m", "mlp-medium", "-b", "8", "--runs", "3", "--steps", "100", "--warmup", "10"]
PYTHON = ["python3", reference, "--rows", "mlp-medium:8", "--variant", "eager-caller-thread", "--runs", "3",
          "--steps", "100"]
mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader",
          "-np", "1"]


def ddpscale_ms(text):
    runs = [float(m) / 1000.0 for m in re.findall(r"^run .*step\s+([0-9.]+) us", text, re.M)]
    return runs


def pytorch_ms(text):
    for line in text.splitlines():
        if line.startswith("{"):
            return json.loads(line)["runs_ms"]
    return []


def measure(name, command, parse):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.time() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    runs = parse(done.stdout)
    median = sorted(runs)[len(runs) // 2] if runs else float("nan")
    print(f"{name:10s} ms {median:7.3f} runs {','.join(f'{r:.3f}' for r in runs):24s} wall {wall:6.2f} "
          f"user {after.ru_utime - before.ru_utime:6.2f} sys {after.ru_stime - before.ru_stime:6.2f} "
          f"vcsw {after.ru_nvcsw - before.ru_nvcsw:7d} ivcsw {after.ru_nivcsw - before.ru_nivcsw:6d} rc {done.returncode}",
          flush=True)
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)


def main(binary, stop):
    train, python = [binary] + TRAIN, PYTHON
    i = 0
    while time.time() < stop:
        k = i % 16
        for name, command, parse in (
                ("free", train, ddpscale_ms),
                (f"core-{k}", ["taskset", "-c", str(k)] + train, ddpscale_ms),
                ("mpirun", mpirun + train, ddpscale_ms),
                ("noaslr", ["setarch", "-R"] + train, ddpscale_ms),
                ("py-free", python, pytorch_ms),
                (f"py-core-{k}", ["taskset", "-c", str(k)] + python, pytorch_ms)):
            if time.time() >= stop:
                break
            measure(name, command, parse)
        i += 1


if __name__ == "__main__":
    main(sys.argv[1], time.time() + float(sys.argv[2]))
