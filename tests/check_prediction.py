#!/usr/bin/env python3
"""Checks `ddpscale predict`'s output on a study for structure and sanity (not accuracy: on 2
shared CPU cores the 2-rank runs measure the machine's contention as much as the model).

Usage: check_prediction.py STUDY_DIR PREDICT_DIR TARGETS
TARGETS: how many targets predict was given (e.g. 1 for --gpus 4).
Exit 0: every check held; 1: the first that did not, printed.
"""
import csv
import glob
import json
import math
import os
import re
import sys

import yaml


def fail(message):
    print(f"check_prediction: FAIL: {message}")
    sys.exit(1)


def number(row, key):
    try:
        value = float(row[key])
    except (KeyError, ValueError):
        fail(f"{row.get('id', row.get('model'))}: {key} is not a number: {row.get(key)!r}")
    if not math.isfinite(value):
        fail(f"{key} is not finite")
    return value


def check_interval(row, point, low, high, what):
    p, lo, hi = number(row, point), number(row, low), number(row, high)
    if not (0 < lo <= hi and lo <= p * 1.0000001 and p <= hi * 1.0000001):
        fail(f"{what}: point {p} outside its interval [{lo}, {hi}] or not positive")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    study, out, targets = sys.argv[1], sys.argv[2], int(sys.argv[3])
    worlds = {}
    for path in glob.glob(os.path.join(study, "*.h5")):
        # A study of several launches has a file per configuration and launch: count launch 1's.
        name = os.path.basename(path)
        if ".launch-" in name and ".launch-1-of-" not in name:
            continue
        match = re.search(r"_w(\d+)_", os.path.basename(path))
        if match:
            worlds[int(match.group(1))] = worlds.get(int(match.group(1)), 0) + 1
    one, many = worlds.get(1, 0), sum(n for w, n in worlds.items() if w > 1)
    if one == 0 or many == 0:
        fail(f"{study}: expected 1-rank and N-rank configurations, found {worlds}")

    with open(os.path.join(out, "validation.csv")) as f:
        validation = list(csv.DictReader(f))
    if len(validation) != many:
        fail(f"validation.csv has {len(validation)} rows, the study {many} N-rank configurations")
    for row in validation:
        if number(row, "measured_samples_per_s") <= 0:
            fail(f"{row['id']}: no measured throughput")
        check_interval(row, "model_only", "model_only_low", "model_only_high", row["id"] + " model only")
        check_interval(row, "calibrated", "calibrated_low", "calibrated_high", row["id"] + " calibrated")
        for key in ("model_only_covered", "calibrated_covered"):
            if row[key] not in ("true", "false"):
                fail(f"{row['id']}: {key} = {row[key]!r}")

    with open(os.path.join(out, "predict.csv")) as f:
        predictions = list(csv.DictReader(f))
    if len(predictions) != one * targets:
        fail(f"predict.csv has {len(predictions)} rows, expected {one} 1-rank configurations x {targets} targets")
    for row in predictions:
        what = f"{row['model']} b{row['batch_per_rank']} {row['nodes']}x{row['gpus_per_node']}"
        for name in ("step_us", "samples_per_s", "speedup", "efficiency"):
            check_interval(row, name, name + "_low", name + "_high", f"{what} {name}")
        ranks = int(row["nodes"]) * int(row["gpus_per_node"])
        # Weak scaling adds communication to each rank's step: never faster than N x 1 rank
        # beyond the drawn noise of the 1-rank mean.
        if number(row, "speedup") > ranks * 1.05:
            fail(f"{what}: predicted speedup {row['speedup']} above its {ranks} ranks")
        if number(row, "allreduce_total_us") <= 0 or number(row, "allreduce_exposed_us") < 0:
            fail(f"{what}: allreduce times {row['allreduce_total_us']}, {row['allreduce_exposed_us']}")

    with open(os.path.join(out, "predict.json")) as f:
        summary = json.load(f)["validation_summary"]
    if summary["configurations"] != many:
        fail(f"predict.json counts {summary['configurations']} checked configurations, not {many}")
    for key in ("model_only_coverage", "calibrated_coverage"):
        if not 0 <= summary[key] <= 1:
            fail(f"{key} = {summary[key]}")
    # The study's own model errors, as the node_sharing block of an interconnects entry: one
    # per checked configuration at the GPU count measured most (here every N-rank one is 2).
    with open(os.path.join(out, "node-sharing.yaml")) as f:
        block = yaml.safe_load(f)["node_sharing"]
    if block["gpus"] != 2 or len(block["step_errors"]) != many or not all(e > -1 for e in block["step_errors"]):
        fail(f"node-sharing.yaml: gpus {block['gpus']}, {len(block['step_errors'])} step errors for {many} "
             f"configurations: {block['step_errors']}")
    with open(os.path.join(out, "predict.md")) as f:
        text = f.read()
    for heading in ("## Self-check against the study's own measurements", "## Predictions",
                    "## Predicted break-even model size"):
        if heading not in text:
            fail(f"predict.md lacks '{heading}'")
    print(f"check_prediction: ok: {many} N-rank configurations checked, {len(predictions)} predictions; "
          f"model-only median error {summary['model_only_median_abs_error']:.3f}, "
          f"calibrated coverage {summary['calibrated_coverage']:.2f}")


if __name__ == "__main__":
    main()
