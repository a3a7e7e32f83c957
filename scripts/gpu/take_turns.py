#!/usr/bin/env python3
"""ddpscale against PyTorch with both programs alive at once, taking turns on the GPU run by run.

Usage: take_turns.py --ddpscale BIN --rows MODEL:BATCH [...] [--exec eager|graph]
                     [--variants eager eager-caller-thread] [--sets 4] [--turns 12]
                     [--steps 100 | --steps MODEL=N ...] [--warmup 10] [--deadline SECONDS]
                     [--process-shifts MIB ...] [--start-together] [--device cuda|cpu] --out DIR

Why: an eager step is host work, and on the GPU machine the host's speed moves by up to 2x
between processes seconds apart and by 15% between runs of one process (measured on an
H100). gpu-benchmark.sh pairs whole launches, tens of seconds apart, so
one round's ratio is close to a ratio of two independent draws. Here a set starts one
`ddpscale train --take-turns` and one `pytorch_ddp_reference.py --take-turns` per PyTorch
variant, waits until every process is ready, then hands out runs one at a time: turn t runs
each program's run t, the order of turn t+1 the reverse of turn t's for even t, so
neighbouring runs of the programs are a fraction of a second apart and a drift favours none
(turn_order). Every second turn the programs' order also rotates by one, so with three
programs the middle place, which always comes after a wait, goes to each in turn. Only one
process works at a time: the others wait on their standard input.

Each set is a fresh group of processes, so a process's own luck (where its buffers land, which
core it starts on) varies between sets. scripts/analysis/paired_ratio.py judges the sets: a
set's ratio is the geometric mean over its turns >= 1 (turn 0 pays for the first CUDA calls),
and the 95% t-interval is over sets.

Where a process's buffers land can move a kernel by as much as the two programs differ (cuDNN's
persistent LSTM on an H100: 2% between layouts, docs/methodology.md, "Where the buffers land"), and a fresh
process lands on the same layout every time. --process-shifts MIB... gives set k's processes,
both programs', `--process-shift` shifts[k mod n]: each holds that much GPU memory before it makes
anything else, so the sets sample layouts and the interval over sets covers them; take-turns.md
then also gives each shift's ratio.

Most of a set's time is not judged: on one H200 the sets spent
28-39% of the wall starting and stopping processes and 39-47% in turn 0 (the first CUDA calls),
19-25% in the turns judged. --start-together starts all rows' processes of a set at once and
gives every one its turn 0 at the same time, so both costs are paid once per set, overlapped,
instead of once per row; turns 1 and on still run one process at a time, row after row (the
rows' order rotating by one each set), and the processes all stay alive (idle, holding their GPU
memory) until the set's last turn.

Waiting changes nothing, or the ratios would favour whichever program waits less: with the
order reversed every other turn, the last program of an even turn runs again right away at
the start of the next, the others after a wait; the rotation spreads both over the programs. take-turns.md checks it on the data: each
program's ms per step after others' turns over its ms right after its own previous turn
(geometric means, turns >= 1, with a 95% interval), which should hold 1.

Writes DIR/turns.jsonl (one line per turn: set, model, batch, exec, program, turn, ms_per_step,
start_s and end_s on this script's monotonic clock; for turns run one at a time also cpu, the core
the process's main thread was on when its run ended, and preempted, how many times that thread
was switched out against its will during the run, and host_steal_ms, the time all cores waited
for the hypervisor meanwhile), each process's output in DIR/logs/, and
DIR/take-turns.md (paired_ratio.py's tables, then the waiting check). No set starts after
--deadline seconds, so a device call ends with a verdict on the sets that finished.
`--report DIR` writes take-turns.md again from DIR/turns.jsonl without running anything.
Standard library only.
"""
import argparse
import json
import math
import os
import queue
import re
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "pytorch_ddp_reference.py")
PAIRED_RATIO = os.path.join(HERE, "..", "analysis", "paired_ratio.py")
sys.path.insert(0, os.path.dirname(PAIRED_RATIO))
from paired_ratio import rounds_of_turns, t975  # noqa: E402
READY = "# ready for turns"
# `ddpscale train`'s run line (trainer/study/run_summary.cpp, print_run_line).
DDPSCALE_RUN = re.compile(r"^run\s+(\d+)\s+(?:([\d.]+) samples/s|FAILED: (.*))")


class TurnTaker:
    """One process that runs a run per "go" on its standard input."""

    def __init__(self, name, command, log_path):
        self.name = name
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.log, text=True, bufsize=1)
        # A thread reads the output, so a wait for a line can time out (select() does not see
        # lines already in the pipe object's buffer). None marks the end of the output.
        self.lines = queue.Queue()
        threading.Thread(target=self._read_output, daemon=True).start()

    def _read_output(self):
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def read_line(self, timeout_s):
        """The process's next line of output, or an error naming it if it ends or stays silent."""
        try:
            line = self.lines.get(timeout=timeout_s)
        except queue.Empty:
            raise RuntimeError(f"{self.name}: no output for {timeout_s:.0f} s (see {self.log.name})") from None
        if line is None:
            raise RuntimeError(f"{self.name} ended (exit {self.process.wait()}; see {self.log.name})")
        self.log.write(line)
        return line.rstrip("\n")

    def wait_until_ready(self, timeout_s):
        while not self.read_line(timeout_s).startswith(READY):
            pass

    def take_turn(self, turn, batch, timeout_s):
        """Runs one run; returns its ms per step and what the host did meanwhile: the core its
        main thread ended on and how often that thread was preempted (cpu_state), and the
        hypervisor's steal over all cores (host_steal_ms)."""
        before, steal_before = self.cpu_state(), host_steal_ms()
        self.start_run()
        ms = self.run_result(turn, batch, timeout_s)
        after, steal_after = self.cpu_state(), host_steal_ms()
        return ms, {"cpu": after[0], "preempted": after[1] - before[1],
                    "host_steal_ms": round(steal_after - steal_before, 1)}

    def cpu_state(self):
        """(the core the main thread last ran on, its involuntary context switches so far), from
        /proc (Linux); why: an eager step is host work, and a run's time may depend on its core
        and on whether something else took that core from it."""
        pid = self.process.pid
        with open(f"/proc/{pid}/stat") as f:
            # Field 39 is `processor`; split after the command name, which may hold spaces.
            processor = int(f.read().rsplit(")", 1)[1].split()[36])
        with open(f"/proc/{pid}/status") as f:
            preempted = next(int(line.split()[1]) for line in f if line.startswith("nonvoluntary_ctxt_switches"))
        return processor, preempted

    def start_run(self):
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def run_result(self, turn, batch, timeout_s):
        """Waits for the run started last; its ms per step."""
        while True:
            line = self.read_line(timeout_s)
            ms = self.turn_result(line, turn, batch)
            if ms is not None:
                return ms

    def turn_result(self, line, turn, batch):
        if self.name == "ddpscale":
            match = DDPSCALE_RUN.match(line)
            if not match:
                return None
            if match.group(3) is not None:
                raise RuntimeError(f"ddpscale run {turn} failed: {match.group(3)}")
            return batch * 1000.0 / float(match.group(2))
        if line.startswith("{") and '"turn"' in line:
            return json.loads(line)["ms_per_step"]
        return None

    def ask_to_stop(self):
        """Lets the process write its summary and end (stop_all waits for it)."""
        try:
            self.process.stdin.write("stop\n")
            self.process.stdin.close()
        except BrokenPipeError:
            pass  # it ended already

    def wait_until_ended(self, timeout_s):
        """Waits for the process asked to stop, killing it after timeout_s. Its exit code."""
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        while (line := self.lines.get()) is not None:
            self.log.write(line)
        self.log.close()
        return self.process.returncode


def host_steal_ms():
    """Milliseconds all cores' virtual CPUs have so far waited for the hypervisor (/proc/stat's
    steal), which a guest's own context-switch counts do not show."""
    with open("/proc/stat") as f:
        fields = f.readline().split()  # cpu user nice system idle iowait irq softirq steal ...
    return int(fields[8]) * 1000.0 / os.sysconf("SC_CLK_TCK")


def steps_for(model, steps_arguments):
    """--steps N, or MODEL=N items with an optional bare N as the default for other models."""
    default, per_model = 100, {}
    for item in steps_arguments:
        if "=" in item:
            name, value = item.split("=", 1)
            per_model[name] = int(value)
        else:
            default = int(item)
    return per_model.get(model, default)


def process_shift_of_set(args, set_index):
    """--process-shifts: the MiB set `set_index`'s processes hold first (cycling); None without."""
    return args.process_shifts[set_index % len(args.process_shifts)] if args.process_shifts else None


def commands(args, model, batch, steps, process_shift=None):
    # One run more than there are turns: a process whose runs were all done would exit at once,
    # and its exit (Python's teardown, the CUDA context's) would run beside the next program's
    # turn; this way each waits for "stop", sent when every turn is over. On this machine's 2
    # cores the exits had made ddpscale's last turn 3x slower.
    runs = str(args.turns + 1)
    ddpscale = [args.ddpscale, "train", "-m", model, "-b", str(batch), "--exec", args.exec,
                "--runs", runs, "--warmup", str(args.warmup), "--steps", str(steps), "--take-turns",
                "--device", args.device]
    python = args.python or sys.executable
    references = {f"pytorch:{v}": [python, REFERENCE, "--rows", f"{model}:{batch}", "--variant", v,
                                   "--runs", runs, "--warmup", str(args.warmup), "--steps", str(steps),
                                   "--device", args.device, "--take-turns"]
                  for v in args.variants}
    if process_shift is not None:
        for command in (ddpscale, *references.values()):
            command += ["--process-shift", str(process_shift)]
    return {"ddpscale": ddpscale, **references}


def turn_order(programs, turn):
    """The order of `turn`: `programs` rotated left by (turn // 2) mod n, reversed for odd turns.
    Two programs: A B | B A | B A | A B | A B ...; three: A B C | C B A | B C A | A C B | C A B |
    B A C, so each program takes each place equally often and the middle one (after a wait)
    is not always the same program (with the order only reversed, the second of three would
    always run in the middle)."""
    shift = (turn // 2) % len(programs)
    order = programs[shift:] + programs[:shift]
    return order if turn % 2 == 0 else order[::-1]


def start_takers(args, set_index, model, batch, steps, shift):
    logs = os.path.join(args.out, "logs")
    return [TurnTaker(name, command, os.path.join(logs, f"set{set_index}-{model}-b{batch}-{name.replace(':', '-')}.txt"))
            for name, command in commands(args, model, batch, steps, shift).items()]


def record_turn(turns_file, row, taker, turn, ms, start, end, together=False, host=None):
    """One line of turns.jsonl. `row` holds the set, model, batch, exec, steps and shift; `host`,
    what the host did during the run (TurnTaker.take_turn)."""
    set_index, model, batch, exec_mode, steps, shift = row
    turns_file.write(json.dumps({"set": set_index, "model": model, "batch": batch, "exec": exec_mode,
                                 "program": taker.name, "turn": turn, "ms_per_step": round(ms, 5),
                                 "steps": steps, "start_s": round(start, 4), "end_s": round(end, 4),
                                 **({} if shift is None else {"process_shift_mib": shift}),
                                 **({"together": True} if together else {}), **(host or {})}) + "\n")
    turns_file.flush()


def turns_one_at_a_time(args, row, takers, first_turn, clock_start, turns_file):
    batch = row[2]
    for turn in range(first_turn, args.turns):
        for taker in turn_order(takers, turn):
            start = time.monotonic() - clock_start
            ms, host = taker.take_turn(turn, batch, args.timeout)
            record_turn(turns_file, row, taker, turn, ms, start, time.monotonic() - clock_start, host=host)


def stop_all(takers, timeout_s):
    """Asks every process to stop before waiting for any, so their exits overlap. The logs of those
    that failed, with their exit codes."""
    for taker in takers:
        taker.ask_to_stop()
    codes = {taker.log.name: taker.wait_until_ended(timeout_s) for taker in takers}
    return {name: code for name, code in codes.items() if code != 0}


def run_set(args, set_index, model, batch, clock_start, turns_file):
    """One row's set: its processes start, then every turn runs one process at a time."""
    steps = steps_for(model, args.steps)
    shift = process_shift_of_set(args, set_index)
    row = (set_index, model, batch, args.exec, steps, shift)
    takers = start_takers(args, set_index, model, batch, steps, shift)
    try:
        for taker in takers:
            taker.wait_until_ready(args.timeout)
        turns_one_at_a_time(args, row, takers, 0, clock_start, turns_file)
    finally:
        failed = stop_all(takers, args.timeout)
    if failed:
        raise RuntimeError(f"set {set_index} {model} b{batch}: exit codes {failed}")


def programs_of_set(takers, set_index):
    """--start-together: the programs' order for a set's judged turns, reversed in odd sets. Why:
    turn 0 runs apart from the judged turns, so turns 1-4 (B A | B A | A B | A B) let only the
    first program run right after its own previous turn (in turn 3), and a program that runs
    faster straight after itself would gain in every set (measured on an H200: ddpscale's
    mlp-medium b8 eager step 5.8% slower after a wait).
    Reversed every other set, each program gets that place equally often."""
    return takers if set_index % 2 == 0 else takers[::-1]


def run_set_together(args, set_index, rows, clock_start, turns_file):
    """--start-together: every row's processes of the set start at once and run turn 0 (left out of
    the ratios) all at the same time; then each row's turns 1 and on run one process at a time, as
    in run_set. All stay alive until the set's last turn, so no exit runs beside a judged turn."""
    shift = process_shift_of_set(args, set_index)
    groups = []
    try:
        for model, batch in rows:
            steps = steps_for(model, args.steps)
            groups.append(((set_index, model, batch, args.exec, steps, shift),
                           start_takers(args, set_index, model, batch, steps, shift)))
        for _, takers in groups:
            for taker in takers:
                taker.wait_until_ready(args.timeout)
        print(f"take_turns: set {set_index + 1}/{args.sets}: {sum(len(t) for _, t in groups)} processes ready, "
              f"turn 0 together ({time.monotonic() - clock_start:.0f} s)", file=sys.stderr, flush=True)
        start = time.monotonic() - clock_start
        for _, takers in groups:
            for taker in takers:
                taker.start_run()
        # A turn 0's end_s is when its result was read, in launch order: an upper bound.
        for row, takers in groups:
            for taker in takers:
                ms = taker.run_result(0, row[2], args.timeout)
                record_turn(turns_file, row, taker, 0, ms, start, time.monotonic() - clock_start, together=True)
        # The rows' order rotates with the set, so no row always comes first after the loaded
        # turn 0, or last after the longest idle wait.
        shift_rows = set_index % len(groups)
        for row, takers in groups[shift_rows:] + groups[:shift_rows]:
            print(f"take_turns: set {set_index + 1}/{args.sets} {row[1]} b{row[2]} "
                  f"({time.monotonic() - clock_start:.0f} s)", file=sys.stderr, flush=True)
            turns_one_at_a_time(args, row, programs_of_set(takers, set_index), 1, clock_start, turns_file)
    finally:
        failed = stop_all([taker for _, takers in groups for taker in takers], args.timeout)
    if failed:
        raise RuntimeError(f"set {set_index}: exit codes {failed}")


def waiting_check(turns):
    """Markdown rows: per row and program, ms per step after other programs' turns over ms right
    after its own previous turn, with a 95% interval (Welch's standard error on the logs,
    t with the smaller group's df, to be conservative)."""
    groups = {}
    previous = None
    for t in turns:  # in the order they ran
        key = (t["set"], t["model"], t["batch"], t["exec"])
        if t["turn"] >= 1:
            waited = previous != (key, t["program"])
            groups.setdefault((t["model"], t["batch"], t["program"]), {True: [], False: []})[waited].append(
                math.log(t["ms_per_step"]))
        previous = (key, t["program"])
    lines = []
    for (model, batch, program), split in sorted(groups.items()):
        waited, direct = split[True], split[False]
        if len(waited) < 2 or len(direct) < 2:
            lines.append(f"| {model} | {batch} | {program} | {len(waited)} | {len(direct)} | n/a (never "
                         f"{'right after itself' if len(direct) < 2 else 'after a wait'}) |")
            continue
        diff = statistics.fmean(waited) - statistics.fmean(direct)
        se = math.sqrt(statistics.variance(waited) / len(waited) + statistics.variance(direct) / len(direct))
        half = t975(min(len(waited), len(direct)) - 1) * se
        lines.append(f"| {model} | {batch} | {program} | {len(waited)} | {len(direct)} | "
                     f"{math.exp(diff):.3f} [{math.exp(diff - half):.3f}, {math.exp(diff + half):.3f}] |")
    return lines


def shift_lines(turns):
    """Markdown rows: per row, PyTorch variant and --process-shifts amount, the sets' ratios
    (PyTorch's ms over ddpscale's, geometric mean over turns >= 1, as paired_ratio.py) and their
    geometric mean. Empty without shifts."""
    shift_of_set = {t["set"]: t["process_shift_mib"] for t in turns if "process_shift_mib" in t}
    if not shift_of_set:
        return []
    rounds, labels = rounds_of_turns(turns, "turns")
    ratios = {}
    for label, round_ in zip(labels, rounds):
        shift = shift_of_set[int(label.rsplit("#set", 1)[1])]
        for (_, variant), rows in round_.items():
            for (model, batch, _), (ours, theirs) in rows.items():
                ratios.setdefault((model, batch, variant, shift), []).append(ours / theirs)
    return [f"| {model} | {batch} | {variant} | {shift} | {', '.join(f'{r:.3f}' for r in values)} | "
            f"{math.exp(statistics.fmean(math.log(r) for r in values)):.3f} |"
            for (model, batch, variant, shift), values in sorted(ratios.items())]


def write_report(out):
    """take-turns.md from out/turns.jsonl: paired_ratio.py's verdicts, then the waiting check."""
    turns_path = os.path.join(out, "turns.jsonl")
    with open(turns_path) as f:
        turns = [json.loads(line) for line in f]
    if not turns:
        print(f"take_turns: {turns_path} has no turns", file=sys.stderr)
        return 1
    note = (f"Processes taking turns run by run (scripts/gpu/take_turns.py): {len({t['set'] for t in turns})} set(s) "
            f"per row, {max(t['turn'] for t in turns) + 1} turns each, turn 0 left out; a round below is a set.")
    judged = subprocess.run([sys.executable, PAIRED_RATIO, turns_path], capture_output=True, text=True)
    if judged.returncode != 0:
        print(judged.stderr, file=sys.stderr)
        return 1
    with open(os.path.join(out, "take-turns.md"), "w") as md:
        md.write(note + "\n\n" + judged.stdout)
        md.write("### Does waiting for a turn change a program's step?\n\n"
                 "ms per step after other programs' turns over ms right after its own previous turn (geometric "
                 "means over turns >= 1, 95% interval); 1 means waiting changes nothing.\n\n"
                 "| model | batch/GPU | program | turns after a wait | turns right after itself | "
                 "after a wait / right after itself |\n|---|---:|---|---:|---:|---|\n")
        md.write("\n".join(waiting_check(turns)) + "\n")
        by_shift = shift_lines(turns)
        if by_shift:
            md.write("\n### Each process shift's sets\n\n"
                     "Set k's processes held the k-th of --process-shifts MiB first (cycling); the ratio is "
                     "PyTorch's ms per step over ddpscale's (> 1: ddpscale faster), per set and their geometric "
                     "mean. The verdicts above are over all sets, so over these layouts.\n\n"
                     "| model | batch/GPU | PyTorch variant | MiB held first | sets' ratios | geometric mean |\n"
                     "|---|---:|---|---:|---|---:|\n")
            md.write("\n".join(by_shift) + "\n")
    return 0


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--report", metavar="DIR", help="only write DIR/take-turns.md again from DIR/turns.jsonl")
    parser.add_argument("--ddpscale", help="the ddpscale binary")
    parser.add_argument("--rows", nargs="+", metavar="MODEL:BATCH")
    parser.add_argument("--exec", choices=["eager", "graph"], default="eager", help="ddpscale's step (default eager)")
    parser.add_argument("--variants", nargs="+", default=["eager", "eager-caller-thread"],
                        help="PyTorch variants, one process each (pytorch_ddp_reference.py --variant)")
    parser.add_argument("--sets", type=int, default=4, help="fresh groups of processes per row (default 4)")
    parser.add_argument("--turns", type=int, default=12, help="runs per process in a set (default 12)")
    parser.add_argument("--steps", nargs="+", default=["100"], metavar="N|MODEL=N",
                        help="measured steps a run: N, and/or MODEL=N per model (default 100)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--deadline", type=float, default=float("inf"), help="no set starts after these seconds")
    parser.add_argument("--timeout", type=float, default=300, help="seconds a process may stay silent")
    parser.add_argument("--process-shifts", nargs="+", type=int, metavar="MIB",
                        help="set k's processes hold the (k mod n)-th of these MiB of GPU memory first (--process-shift "
                             "on both programs), so the sets sample where buffers land; e.g. 0 20 40 60")
    parser.add_argument("--start-together", action="store_true",
                        help="start all rows' processes of a set at once and run their turn 0 (left out) at the same "
                             "time; the judged turns still run one process at a time. Every process of a set holds "
                             "its GPU memory until the set ends")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--python", help="the Python with PyTorch for the reference (default: this one)")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if args.report:
        return args
    if not (args.ddpscale and args.rows and args.out):
        parser.error("--ddpscale, --rows and --out are needed (or --report DIR)")
    if args.sets < 1 or args.turns < 2:
        parser.error("--sets must be at least 1 and --turns at least 2 (turn 0 is left out of the ratio)")
    if args.process_shifts and (args.device != "cuda" or not all(0 <= mib <= 65536 for mib in args.process_shifts)):
        parser.error("--process-shifts: GPU only, each 0 to 65536 MiB")
    for row in args.rows:
        if not re.fullmatch(r"[\w-]+:\d+", row):
            parser.error(f"--rows: '{row}' is not MODEL:BATCH")
    return args


def main(argv):
    args = parse_arguments(argv)
    if args.report:
        return write_report(args.report)
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    turns_path = os.path.join(args.out, "turns.jsonl")
    clock_start = time.monotonic()
    rows = [(row.split(":")[0], int(row.split(":")[1])) for row in args.rows]
    sets_done = 0
    with open(turns_path, "w") as turns_file:
        # Set-major: every row's set k before any row's set k+1, so a deadline leaves each row
        # with as many sets as the others.
        for set_index in range(args.sets):
            if time.monotonic() - clock_start > args.deadline:
                print(f"take_turns: deadline reached after {sets_done} set(s) per row", file=sys.stderr)
                break
            if args.start_together:
                run_set_together(args, set_index, rows, clock_start, turns_file)
            else:
                for model, batch in rows:
                    print(f"take_turns: set {set_index + 1}/{args.sets} {model} b{batch} "
                          f"({time.monotonic() - clock_start:.0f} s)", file=sys.stderr, flush=True)
                    run_set(args, set_index, model, batch, clock_start, turns_file)
            sets_done += 1
    if write_report(args.out) != 0:
        return 1
    print(f"take_turns: {turns_path}, {os.path.join(args.out, 'take-turns.md')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
