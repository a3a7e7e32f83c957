#!/usr/bin/env python3
"""Checks that `ddpscale predict --allreduce NAME` on a study of one GPU calibrates each target
by the named entry's node-sharing cost at that target's GPU count: measured where the entry
has one, carried (the nearest measured count's, widened) where it has not.

Usage: check_node_sharing_per_count.py CALIBRATED_DIR MODEL_ONLY_DIR INTERCONNECTS NAME
  CALIBRATED_DIR: predict's --out with --allreduce NAME (costs at 2 and 4, --gpus 2,4,8)
  MODEL_ONLY_DIR: predict's --out with the same curve and no cost
Each calibrated step is the model-only step times (1 + the median of the cost used), computed
here independently: the entry's own errors at 2 and 4 GPUs, and at 8 the cost carried by
scripts/check-node-sharing-model.py's Python copy of the carry. The 4-GPU prediction must
also differ clearly from the one the 2-GPU cost would give.
Exit 0: every check held; 1: the first that did not, printed.
"""
import csv
import importlib.util
import json
import os
import statistics
import sys

import yaml

# predict.csv holds round-trip numbers; the two sides multiply the same float64 values.
SAME_ARITHMETIC = 1e-9


def fail(message):
    print(f"check_node_sharing_per_count: FAIL: {message}")
    sys.exit(1)


def model_script():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "check-node-sharing-model.py")
    spec = importlib.util.spec_from_file_location("check_node_sharing_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def steps(out):
    with open(os.path.join(out, "predict.csv")) as f:
        return {(r["model"], r["batch_per_rank"], int(r["gpus_per_node"])): float(r["step_us"])
                for r in csv.DictReader(f) if r["nodes"] == "1"}


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    calibrated_dir, model_only_dir, interconnects, name = sys.argv[1:]
    with open(interconnects) as f:
        costs = model_script().costs_of(yaml.safe_load(f)["interconnects"][name], interconnects, name)
    medians = {2: statistics.median(costs[2]), 4: statistics.median(costs[4]),
               8: statistics.median(model_script().carried(costs, 8)["errors"])}
    calibrated, model_only = steps(calibrated_dir), steps(model_only_dir)
    if set(calibrated) != set(model_only) or {k[2] for k in calibrated} != {2, 4, 8}:
        fail(f"predictions at {sorted(calibrated)} against model only at {sorted(model_only)}")
    for key, step in sorted(calibrated.items()):
        expected = model_only[key] * (1 + medians[key[2]])
        if abs(step / expected - 1) > SAME_ARITHMETIC:
            fail(f"{key}: step {step} us, expected {model_only[key]} x (1 + {medians[key[2]]}) = {expected}")
        if key[2] == 4 and step / (model_only[key] * (1 + medians[2])) - 1 < 0.3:
            fail(f"{key}: the 4-GPU step {step} us is not clearly above the 2-GPU cost's")
    with open(os.path.join(calibrated_dir, "predict.md")) as f:
        text = f.read()
    for said in ("at 2 GPUs a node, measured at 2 GPUs (3 model errors)",
                 "at 4 GPUs a node, measured at 4 GPUs (4 model errors)",
                 "at 8 GPUs a node, carried from 2 and 4 GPUs: the 4-GPU cost unchanged"):
        if said not in text:
            fail(f"predict.md does not say '{said}'")
    with open(os.path.join(calibrated_dir, "predict.json")) as f:
        used = json.load(f)["node_sharing_used"]
    if [(u["gpus_per_node"], u["measured"]) for u in used] != [(2, True), (4, True), (8, False)]:
        fail(f"predict.json's node_sharing_used: {used}")
    if abs(used[2]["median_step_error"] - medians[8]) > SAME_ARITHMETIC:
        fail(f"the carried 8-GPU median {used[2]['median_step_error']}, the Python model's {medians[8]}")
    print(f"check_node_sharing_per_count: ok: {len(calibrated)} predictions; medians used {medians}")


if __name__ == "__main__":
    main()
