#!/usr/bin/env python3
"""scripts/gpu/take_turns.py on the CPU: `ddpscale train --take-turns` and
pytorch_ddp_reference.py --take-turns, 2 sets of mlp-medium b8, 3 turns of 5 steps.

Usage: test_take_turns.py DDPSCALE_BINARY
- Every turn is recorded: 2 sets x 3 turns x 2 programs = 12 lines, each with a positive time,
  the core its process's main thread ended on (0 to os.cpu_count() - 1) and a count of its
  involuntary context switches during the run and the host's steal time meanwhile (neither
  negative).
- Turns alternate: in each set turn 0 runs ddpscale then PyTorch, turn 1 PyTorch then ddpscale,
  turn 2 (rotated by one) PyTorch then ddpscale (the order is read from the start times). With
  three programs A B C the first six turns are ABC, CBA, BCA, ACB, CAB, BAC: each program takes
  each place twice (written out by hand).
- Only one program works at a time: no turn starts before the one before it has ended.
- Each ddpscale log holds 3 run lines, then its summary ("3 of 3 runs ok"), from a process
  launched for 4 runs ("4 runs x"): it waited for "stop" instead of ending on its own, so no
  process's exit runs beside another's turn.
- take-turns.md gives each set's ratio as the geometric mean over turns 1 and 2 of PyTorch's ms
  over ddpscale's, recomputed here from turns.jsonl.
- The waiting check, on hand-made turns of one set (order D P | P D | D P | P D | D P): ddpscale
  waits before turns 1 and 3 (2 and 2e^0.2 ms) and runs right after itself in turns 2 and 4
  (1 and e^0.2 ms): logs ln 2 + {0, 0.2} against {0, 0.2}, ratio exp(ln 2) = 2.000; each group's
  variance 0.02, Welch's standard error sqrt(0.02/2 + 0.02/2) = 0.141421, t(0.975, 1) = 12.706,
  half width 1.796900 -> [2 e^-1.796900, 2 e^1.796900] = [0.332, 12.062] (by hand).
- --process-shifts, on hand-made turns (the ratio is PyTorch's ms over ddpscale's, turn 0 left
  out): set 0 (0 MiB) 2/1 and 4/2 -> 2.000; set 1 (20 MiB) 1.5/1 and 3/2 -> 1.500; set 2 (0 MiB)
  0.5/1 twice -> 0.500; so 0 MiB's sets 2.000, 0.500 with geometric mean sqrt(2 x 0.5) = 1.000,
  20 MiB's 1.500 (by hand). Every process of set k gets `--process-shift` shifts[k mod n], and
  the driver refuses --process-shifts on the CPU.
- --start-together, 2 sets of mlp-medium b8 and b16, 3 turns: 24 turns recorded; in each set
  the four turn 0s are marked "together" and share one start (every process was ready before
  any ran); every judged turn starts after the last turn 0 of its set ended, none overlaps
  another, the rows take turns one after the other, b8 first in set 0 and b16 first in set 1
  (the order rotates with the set), and each row's order is turn 1 PyTorch then ddpscale, turn
  2 PyTorch then ddpscale in set 0, and the reverse in set 1 (odd sets take the programs in
  reverse, so the one right after itself alternates); each ddpscale process still ends with "3 of 3 runs
  ok" after "stop", and take-turns.md judges both rows.
- `ddpscale train --take-turns` refuses 2 ranks (exit 2, naming the option), and a line that is
  neither 'go' nor 'stop' (exit 2).
Exit 0 pass, 1 fail, 77 skipped (no PyTorch for this Python).
"""
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "..", "scripts", "gpu", "take_turns.py")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader"]


def check_turns(turns):
    failures = []
    if len(turns) != 12:
        failures.append(f"{len(turns)} turns recorded, expected 12")
    if any(t["ms_per_step"] <= 0 for t in turns):
        failures.append("a turn with a time that is not positive")
    if not all(0 <= t["cpu"] < os.cpu_count() and t["preempted"] >= 0 and t["host_steal_ms"] >= 0 for t in turns):
        failures.append("a turn without its core (cpu), or with a negative preempted count or host_steal_ms")
    for set_index in (0, 1):
        order = [(t["turn"], t["program"]) for t in sorted(turns, key=lambda t: t["start_s"]) if t["set"] == set_index]
        expected = [(0, "ddpscale"), (0, "pytorch:eager"), (1, "pytorch:eager"), (1, "ddpscale"),
                    (2, "pytorch:eager"), (2, "ddpscale")]
        if order != expected:
            failures.append(f"set {set_index} ran in the order {order}, expected {expected}")
    by_start = sorted(turns, key=lambda t: t["start_s"])
    for before, after in zip(by_start, by_start[1:]):
        if after["start_s"] < before["end_s"]:
            failures.append(f"turn {after} started before {before} ended")
    return failures


def set_ratio(turns, set_index):
    ms = {(t["turn"], t["program"]): t["ms_per_step"] for t in turns if t["set"] == set_index}
    logs = [math.log(ms[(k, "pytorch:eager")] / ms[(k, "ddpscale")]) for k in (1, 2)]
    return math.exp(sum(logs) / len(logs))


def check_three_program_order():
    sys.path.insert(0, os.path.dirname(DRIVER))
    from take_turns import turn_order
    orders = ["".join(turn_order(list("ABC"), turn)) for turn in range(6)]
    expected = ["ABC", "CBA", "BCA", "ACB", "CAB", "BAC"]
    return [] if orders == expected else [f"three programs took turns in the orders {orders}, expected {expected}"]


def check_waiting():
    sys.path.insert(0, os.path.dirname(DRIVER))
    from take_turns import waiting_check
    ddpscale_ms = {1: 2.0, 2: 1.0, 3: 2.0 * math.exp(0.2), 4: math.exp(0.2)}
    turns = []
    for turn in range(5):
        order = ["ddpscale", "pytorch:eager"] if turn % 2 == 0 else ["pytorch:eager", "ddpscale"]
        for program in order:
            ms = ddpscale_ms.get(turn, 1.0) if program == "ddpscale" else 1.0
            turns.append({"set": 0, "model": "mlp", "batch": 8, "exec": "eager", "program": program, "turn": turn,
                          "ms_per_step": ms})
    expected = "| mlp | 8 | ddpscale | 2 | 2 | 2.000 [0.332, 12.062] |"
    lines = waiting_check(turns)
    return [] if expected in lines else [f"waiting check gave {lines}, expected the row {expected}"]


def check_process_shifts(binary):
    sys.path.insert(0, os.path.dirname(DRIVER))
    from take_turns import commands, parse_arguments, process_shift_of_set, shift_lines
    ms = {0: ({1: 1.0, 2: 2.0}, {1: 2.0, 2: 4.0}), 1: ({1: 1.0, 2: 2.0}, {1: 1.5, 2: 3.0}),
          2: ({1: 1.0, 2: 1.0}, {1: 0.5, 2: 0.5})}
    shifts = {0: 0, 1: 20, 2: 0}
    lines = []
    for set_index, (ours, theirs) in ms.items():
        for turn in range(3):
            for program, times in (("ddpscale", ours), ("pytorch:graph", theirs)):
                lines.append({"set": set_index, "model": "lstm", "batch": 128, "exec": "graph", "program": program,
                              "turn": turn, "ms_per_step": times.get(turn, 9.0), "process_shift_mib": shifts[set_index]})
    failures = []
    rows = shift_lines(lines)
    for expected in ("| lstm | 128 | graph | 0 | 2.000, 0.500 | 1.000 |", "| lstm | 128 | graph | 20 | 1.500 | 1.500 |"):
        if expected not in rows:
            failures.append(f"shift table {rows} lacks {expected}")
    args = parse_arguments(["--ddpscale", binary, "--rows", "lstm:128", "--exec", "graph", "--variants", "graph",
                            "--process-shifts", "0", "20", "--out", "x"])
    for set_index, mib in ((0, "0"), (1, "20"), (2, "0"), (3, "20")):
        shift = process_shift_of_set(args, set_index)
        for name, command in commands(args, "lstm", 128, 100, shift).items():
            if command[-2:] != ["--process-shift", mib]:
                failures.append(f"set {set_index}: {name} was launched without --process-shift {mib}: {command}")
    refused = subprocess.run([sys.executable, DRIVER, "--ddpscale", binary, "--rows", "mlp-medium:8", "--device", "cpu",
                              "--process-shifts", "20", "--out", "x"], capture_output=True, text=True, timeout=60)
    if refused.returncode != 2 or "--process-shifts: GPU only" not in refused.stderr:
        failures.append(f"--process-shifts on the CPU was not refused (exit {refused.returncode}): {refused.stderr[-300:]}")
    return failures


def check_start_together(binary):
    out = tempfile.mkdtemp()
    run = subprocess.run([sys.executable, DRIVER, "--ddpscale", binary, "--rows", "mlp-medium:8", "mlp-medium:16",
                          "--variants", "eager", "--sets", "2", "--turns", "3", "--steps", "5", "--warmup", "1",
                          "--device", "cpu", "--start-together", "--out", out], capture_output=True, text=True,
                         timeout=600)
    if run.returncode != 0:
        return [f"--start-together failed with exit {run.returncode}: {run.stderr[-600:]}"]
    with open(os.path.join(out, "turns.jsonl")) as f:
        turns = [json.loads(line) for line in f]
    failures = [] if len(turns) == 24 else [f"--start-together recorded {len(turns)} turns, expected 24"]
    for set_index in (0, 1):
        in_set = [t for t in turns if t["set"] == set_index]
        firsts = [t for t in in_set if t["turn"] == 0]
        judged = sorted((t for t in in_set if t["turn"] >= 1), key=lambda t: t["start_s"])
        if len(firsts) != 4 or not all(t.get("together") for t in firsts) or len({t["start_s"] for t in firsts}) != 1:
            failures.append(f"set {set_index}: turn 0s {firsts} are not four marked 'together' with one start")
        if judged and firsts and judged[0]["start_s"] < max(t["end_s"] for t in firsts):
            failures.append(f"set {set_index}: a judged turn started before the last turn 0 ended")
        for before, after in zip(judged, judged[1:]):
            if after["start_s"] < before["end_s"]:
                failures.append(f"set {set_index}: turn {after} started before {before} ended")
        order = [(t["batch"], t["turn"], t["program"]) for t in judged]
        batches = (8, 16) if set_index == 0 else (16, 8)  # the rows' order rotates with the set
        programs = ("pytorch:eager", "ddpscale") if set_index == 0 else ("ddpscale", "pytorch:eager")
        expected = [(b, turn, p) for b in batches for turn in (1, 2) for p in programs]
        if order != expected:
            failures.append(f"set {set_index}: judged turns ran in the order {order}, expected {expected}")
        for batch in (8, 16):
            with open(os.path.join(out, "logs", f"set{set_index}-mlp-medium-b{batch}-ddpscale.txt")) as f:
                log = f.read()
            if "3 of 3 runs ok" not in log or "4 runs x" not in log:
                failures.append(f"set {set_index} b{batch}: ddpscale's log lacks '4 runs x' or '3 of 3 runs ok'")
    with open(os.path.join(out, "take-turns.md")) as f:
        table = f.read()
    for batch in (8, 16):
        if f"| mlp-medium | {batch} | 1 | 2 |" not in table:
            failures.append(f"take-turns.md under --start-together does not judge mlp-medium b{batch} over 2 sets")
    return failures


def check_refusals(binary):
    failures = []
    two = subprocess.run(MPIRUN + ["-np", "2", binary, "train", "--take-turns", "--runs", "1"], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    if "--take-turns hands one process its runs through standard input: launch 1 rank, not 2" not in two.stderr + two.stdout:
        failures.append(f"2 ranks were not refused by name (exit {two.returncode}): {two.stderr[-400:]}")
    bad = subprocess.run([binary, "train", "--take-turns", "--runs", "2", "--steps", "2", "--warmup", "0"],
                         input="go\nplease\n", capture_output=True, text=True, timeout=120)
    if bad.returncode != 2 or "expects 'go' or 'stop' on standard input, got 'please'" not in bad.stderr:
        failures.append(f"an unreadable line was not refused (exit {bad.returncode}): {bad.stderr[-400:]}")
    return failures


def main():
    try:
        import torch  # noqa: F401
    except ImportError:
        print("no PyTorch for", sys.executable)
        return 77
    binary = sys.argv[1]
    out = tempfile.mkdtemp()
    run = subprocess.run([sys.executable, DRIVER, "--ddpscale", binary, "--rows", "mlp-medium:8", "--variants", "eager",
                          "--sets", "2", "--turns", "3", "--steps", "5", "--warmup", "1", "--device", "cpu",
                          "--out", out], capture_output=True, text=True, timeout=600)
    print(run.stderr)
    if run.returncode != 0:
        print("take_turns.py failed with exit", run.returncode)
        return 1
    with open(os.path.join(out, "turns.jsonl")) as f:
        turns = [json.loads(line) for line in f]
    failures = check_turns(turns)
    for set_index in (0, 1):
        with open(os.path.join(out, "logs", f"set{set_index}-mlp-medium-b8-ddpscale.txt")) as f:
            log = f.read()
        runs = [line for line in log.splitlines() if line.startswith("run ")]
        if len(runs) != 3 or "3 of 3 runs ok" not in log or "4 runs x" not in log:
            failures.append(f"set {set_index}: ddpscale's log has {len(runs)} run lines, not 3 of 4 runs "
                            f"launched with '3 of 3 runs ok'")
    with open(os.path.join(out, "take-turns.md")) as f:
        table = f.read()
    print(table)
    ratios = ", ".join(f"{set_ratio(turns, s):.3f}" for s in (0, 1))
    if f"| mlp-medium | 8 | 1 | 2 | {ratios} |" not in table:
        failures.append(f"take-turns.md lacks the per-set ratios {ratios}")
    failures += check_three_program_order()
    failures += check_waiting()
    failures += check_process_shifts(binary)
    failures += check_start_together(binary)
    failures += check_refusals(binary)
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
