#!/usr/bin/env python3
"""Checks `ddpscale predict --allreduce` on a study of one rank: every 1-rank configuration is
predicted at each asked GPU count with ordered 95% intervals, predict.md (or report.md, from
`ddpscale report --predict`) names the curve, and
each prediction's allreduce time is the curve's, recomputed here from the commbench.csv
independently of the C++ model.

Usage: check_allreduce_prediction.py PREDICT_DIR CURVE.csv GPUS CURVE_TEXT
  GPUS: the counts predict was given, e.g. 2,4,8
  CURVE_TEXT: what predict.md must say the curve is (its name, or the file)
Exit 0: every check held; 1: the first that did not, printed.

The study's model must have at most 1 MiB of float32 gradients (tests/specs/one-gpu.yaml): one
bucket, so the allreduce time of a step is one allreduce of the whole gradient.
"""
import csv
import json
import math
import os
import sys

MIB = 1024 * 1024


def fail(message):
    print(f"check_allreduce_prediction: FAIL: {message}")
    sys.exit(1)


def read_curve(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    sizes = [float(r["bytes"]) for r in rows]
    times = [float(r["time_us"]) for r in rows]
    return sizes, times, int(rows[0]["ranks"])


def measured_time_us(sizes, times, message):
    """The curve at `message` bytes: log(time) linear in log(bytes) between measured sizes,
    the smallest size's time below them, the last segment's cost per byte above them."""
    if message <= sizes[0]:
        return times[0]
    if message >= sizes[-1]:
        return times[-1] + (message - sizes[-1]) * max(0.0, times[-1] - times[-2]) / (sizes[-1] - sizes[-2])
    for i in range(1, len(sizes)):
        if message < sizes[i]:
            x0, x1 = math.log(sizes[i - 1]), math.log(sizes[i])
            y0, y1 = math.log(times[i - 1]), math.log(times[i])
            return math.exp(y0 + (y1 - y0) * (math.log(message) - x0) / (x1 - x0))
    fail("unreachable")


def ring_us(sizes, times, measured_ranks, message, ranks):
    """nccl-tests' ring on `ranks` GPUs at the curve's bus bandwidth: the latency (the smallest
    size's time) over 2(n-1) steps, the data part over the 2(n-1)/n of the message each rank moves."""
    latency = times[0]
    data = max(0.0, measured_time_us(sizes, times, message) - latency)
    m, n = measured_ranks, ranks
    return latency * (n - 1) / (m - 1) + data * ((n - 1) / n) / ((m - 1) / m)


def number(row, key):
    try:
        return float(row[key])
    except (KeyError, ValueError):
        fail(f"{key} is not a number: {row.get(key)!r}")


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    out, curve_path, gpus_text, curve_text = sys.argv[1:]
    gpus = [int(g) for g in gpus_text.split(",")]
    sizes, times, measured_ranks = read_curve(curve_path)

    with open(os.path.join(out, "predict.csv")) as f:
        predictions = list(csv.DictReader(f))
    configs = sorted({(p["model"], p["batch_per_rank"]) for p in predictions})
    if not configs:
        fail("predict.csv has no predictions")
    if len(predictions) != len(configs) * len(gpus):
        fail(f"predict.csv has {len(predictions)} rows, expected {len(configs)} configurations x {len(gpus)} GPU counts")
    for model, batch in configs:
        counts = sorted(int(p["gpus_per_node"]) for p in predictions if (p["model"], p["batch_per_rank"]) == (model, batch))
        if counts != sorted(gpus) or any(p["nodes"] != "1" for p in predictions):
            fail(f"{model} batch {batch}: predicted for {counts} GPUs in one node, asked {gpus}")

    for p in predictions:
        what = f"{p['model']} b{p['batch_per_rank']} on {p['gpus_per_node']} GPUs"
        for name in ("step_us", "samples_per_s", "speedup", "efficiency"):
            low, point, high = number(p, name + "_low"), number(p, name), number(p, name + "_high")
            if not (low < point < high) or point <= 0:
                fail(f"{what}: {name} {point} not positive and strictly inside its interval [{low}, {high}]")
        gradient_bytes = int(p["parameters"]) * 4
        if gradient_bytes > MIB:
            fail(f"{what}: {gradient_bytes} bytes of gradients, more than the one 1 MiB bucket this check assumes")
        expected = ring_us(sizes, times, measured_ranks, gradient_bytes, int(p["gpus_per_node"]))
        got = number(p, "allreduce_total_us")
        if abs(got - expected) > 1e-6 * expected:
            fail(f"{what}: allreduce {got} us, the curve gives {expected} us")
        if number(p, "speedup") > int(p["gpus_per_node"]) * 1.05:
            fail(f"{what}: speedup {p['speedup']} above its GPU count")

    # More GPUs move more of the message per rank and take more ring steps: never cheaper.
    for model, batch in configs:
        ordered = sorted((int(p["gpus_per_node"]), number(p, "allreduce_total_us"))
                         for p in predictions if (p["model"], p["batch_per_rank"]) == (model, batch))
        if any(b[1] <= a[1] for a, b in zip(ordered, ordered[1:])):
            fail(f"{model} batch {batch}: allreduce time does not grow with the GPU count: {ordered}")

    # predict.md from `ddpscale predict`, report.md (its "Predicted scaling" section) from `report --predict`.
    document = os.path.join(out, "predict.md")
    if not os.path.exists(document):
        document = os.path.join(out, "report.md")
    with open(document) as f:
        text = f.read()
    if f"Allreduce curve: {curve_text}" not in text:
        fail(f"{document} does not name the curve as 'Allreduce curve: {curve_text}'")
    if "busbw = algbw x 2(N-1)/N" not in text or "an approximation" not in text:
        fail(f"{document} does not say the curve is carried to other GPU counts at constant bus bandwidth")
    with open(os.path.join(out, "predict.json")) as f:
        summary = json.load(f)
    if summary["allreduce_curve_gpus"] != measured_ranks or not summary["allreduce_curve"].startswith(curve_text):
        fail(f"predict.json's curve is {summary['allreduce_curve']!r} on {summary['allreduce_curve_gpus']} GPUs")
    print(f"check_allreduce_prediction: ok: {len(configs)} configurations x {gpus} GPUs, allreduce times from "
          f"{curve_path} on {measured_ranks} GPUs")


if __name__ == "__main__":
    main()
