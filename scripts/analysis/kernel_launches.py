#!/usr/bin/env python3
"""How each kernel was launched, from one or two Chrome traces (Kineto's JSON, as
`ddpscale train --gpu-trace` and `pytorch_ddp_reference.py --kernels P --trace` write them).

The kernel table says a kernel took longer on one side; this says whether the two sides even
launched it the same way: grid, block, registers per thread and shared memory per block, with
how many launches had that shape and their median duration.

  kernel_launches.py [--match TEXT] [--steps N] TRACE [TRACE_B]

With two traces, each launch shape is one row with both sides' calls and median (us); a shape
only one side used shows "-" on the other. Names are cut as kernel_side_by_side.py cuts them. --match keeps kernels whose name contains TEXT;
--steps N divides the calls by N (the profiled steps), as the kernel tables do.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_side_by_side import short_name  # noqa: E402 (the kernel tables' names, for reading both together)


def launch_shapes(path, match):
    """{(name, grid, block, registers, shared memory): [duration us, ...]} of the trace's kernels."""
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    shapes = {}
    for event in events:
        if event.get("cat") != "kernel" or event.get("ph") != "X" or match not in event.get("name", ""):
            continue
        args = event.get("args", {})
        key = (event["name"], tuple(args.get("grid", ())), tuple(args.get("block", ())),
               args.get("registers per thread"), args.get("shared memory"))
        shapes.setdefault(key, []).append(float(event["dur"]))
    return shapes


def dims(values):
    return "x".join(str(v) for v in values) if values else "?"


def cells(durations, steps):
    if not durations:
        return ["-", "-"]
    return [f"{len(durations) / steps:g}", f"{statistics.median(durations):.1f}"]


def table(traces, steps):
    sides = len(traces)
    header = ["kernel", "grid", "block", "registers", "shared memory"]
    for n in range(sides):
        label = "" if sides == 1 else " " + "AB"[n]
        header += [f"calls{label}", f"median us{label}"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * 5 + "---:|" * (2 * sides)]
    keys = sorted(set().union(*traces), key=lambda k: (k[0], str(k[1:])))
    for key in keys:
        name, grid, block, registers, shared = key
        row = [short_name(name), dims(grid), dims(block), str(registers), str(shared)]
        for shapes in traces:
            row += cells(shapes.get(key, []), steps)
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("traces", nargs="+", metavar="TRACE", help="one or two Chrome trace files")
    parser.add_argument("--match", default="", help="only kernels whose name contains this")
    parser.add_argument("--steps", type=int, default=1, help="profiled steps, to show calls per step")
    args = parser.parse_args(argv)
    if len(args.traces) > 2:
        parser.error("give one trace, or two to compare")
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    traces = [launch_shapes(path, args.match) for path in args.traces]
    if not any(traces):
        sys.exit(f"no kernel events{' matching ' + repr(args.match) if args.match else ''} in " +
                 ", ".join(args.traces) + " (was the trace taken on a GPU?)")
    if len(traces) == 2:
        print(f"A: {args.traces[0]}\nB: {args.traces[1]}\n")
    print(table(traces, args.steps))


if __name__ == "__main__":
    main()
