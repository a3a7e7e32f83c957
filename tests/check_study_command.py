#!/usr/bin/env python3
"""`ddpscale study`, one command for "my model on 1 vs N", run as a user runs it (2 CPU
ranks, a TorchScript file), checked on what it leaves behind:

- exit 0, and OUT/spec.yaml names the file, its input, the batch sizes and world sizes 1, 2;
- OUT/report/summary.csv has the 4 configurations (batch 4 and 8 on 1 and 2 ranks), each
  with its 2 runs ok, and report.md answers the question for the model;
- --resume reruns nothing (the same 4 configurations, the files untouched);
- one rank launched without --world-size: exit 2, and the message says how to launch N.

Usage: check_study_command.py DDPSCALE MODEL.pt WORK_DIR MPIRUN...
"""
import csv
import os
import shutil
import subprocess
import sys


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def run(command, expect_status):
    print("$ " + " ".join(command), flush=True)
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    print(result.stdout[-1500:] + result.stderr[-1500:], flush=True)
    if result.returncode != expect_status:
        fail(f"exit {result.returncode}, expected {expect_status}: {' '.join(command)}")
    return result


def main():
    if len(sys.argv) < 5:
        fail(__doc__)
    ddpscale, model, work = sys.argv[1], sys.argv[2], sys.argv[3]
    mpirun = sys.argv[4:]
    shutil.rmtree(work, ignore_errors=True)
    out = os.path.join(work, "mlp-study")
    study = [ddpscale, "study", "--model", f"torchscript:{model}", "--input-shape", "16", "--classes", "4", "-b", "4,8",
             "--runs", "2", "--warmup", "1", "--steps", "3", "--device", "cpu", "--out", out]
    result = run(mpirun + ["-np", "2"] + study, 0)
    if "report.md answers it" not in result.stdout:
        fail("study did not say where its report is")
    with open(os.path.join(out, "spec.yaml")) as f:
        spec = f.read()
    for expected in (f"torchscript:{model}", "input_shape: \"16\"", "batch_sizes: [4, 8]", "world_sizes: [1, 2]"):
        if expected not in spec:
            fail(f"spec.yaml lacks {expected!r}:\n{spec}")
    print("ok: spec.yaml names the file, its input, batch sizes 4, 8 and world sizes 1, 2")

    def configurations():
        with open(os.path.join(out, "report", "summary.csv")) as f:
            return [(int(r["world_size"]), int(r["batch_per_rank"]), int(r["runs_ok"])) for r in csv.DictReader(f)]

    seen = sorted(configurations())
    if seen != [(1, 4, 2), (1, 8, 2), (2, 4, 2), (2, 8, 2)]:
        fail(f"summary.csv has {seen}, expected batch 4 and 8 on 1 and 2 ranks with 2 runs ok each")
    print("ok: 4 configurations, 2 runs ok each")
    with open(os.path.join(out, "report", "report.md")) as f:
        if "**The answer.**" not in f.read():
            fail("report.md has no answer paragraph")
    print("ok: report.md answers the question")

    stamps = {name: os.path.getmtime(os.path.join(out, "study", name)) for name in os.listdir(os.path.join(out, "study"))
              if name.endswith(".h5")}
    run(mpirun + ["-np", "2"] + study + ["--resume"], 0)
    touched = [n for n, t in stamps.items() if os.path.getmtime(os.path.join(out, "study", n)) != t]
    if touched or sorted(configurations()) != seen:
        fail(f"--resume measured again: {touched}")
    print(f"ok: --resume kept all {len(stamps)} files")

    alone = run([ddpscale, "study", "--model", f"torchscript:{model}", "--input-shape", "16", "--device", "cpu",
                 "--out", os.path.join(work, "alone")], 2)
    if "mpirun -np N ddpscale study" not in alone.stderr or "--allreduce NAME" not in alone.stderr:
        fail(f"one rank: the message does not say how to launch N or predict N: {alone.stderr[-400:]}")
    print("ok: one rank launched: exit 2, the message says mpirun -np N, or --allreduce NAME")

    # One GPU: one rank measures world size 1 only, and the report predicts 2 and 4 GPUs from
    # the named machine's curve and its cost of sharing a node.
    one = os.path.join(work, "one-gpu")
    run([ddpscale, "study", "--model", f"torchscript:{model}", "--input-shape", "16", "--classes", "4", "-b", "4",
         "--runs", "2", "--warmup", "1", "--steps", "3", "--device", "cpu", "--allreduce", "h100-nvlink-2gpu",
         "--gpus", "2,4", "--out", one], 0)
    with open(os.path.join(one, "spec.yaml")) as f:
        if "world_sizes: [1]" not in f.read():
            fail("one-GPU spec.yaml does not measure world size 1 alone")
    with open(os.path.join(one, "report", "predict.csv")) as f:
        rows = [(int(r["gpus_per_node"]), r["calibrated"]) for r in csv.DictReader(f)]
    if rows != [(2, "true"), (4, "true")]:
        fail(f"one-GPU report predicts {rows}, expected 2 and 4 GPUs, calibrated")
    with open(os.path.join(one, "report", "report.md")) as f:
        text = f.read()
    if 'so no speedup was measured. Section 10, "Predicted scaling", predicts them from the one-rank runs, calibrated' not in text:
        fail("one-GPU report's executive summary does not point to its predictions")
    if "calibrated by the cost of sharing a node" not in text or "h100-nvlink-2gpu" not in text:
        fail("one-GPU report does not name the curve and the node-sharing calibration")
    print("ok: one GPU: world size 1 measured, 2 and 4 GPUs predicted from h100-nvlink-2gpu, calibrated")
    bad = run([ddpscale, "study", "--model", f"torchscript:{model}", "--input-shape", "16", "--device", "cpu",
               "--allreduce", "h100-nvlink-4gpu", "--out", os.path.join(work, "bad")], 2)
    if "is not in" not in bad.stderr or "h100-nvlink-2gpu" not in bad.stderr:
        fail(f"a misspelt --allreduce is not refused with the names: {bad.stderr[-400:]}")
    print("ok: a misspelt --allreduce is refused before anything is measured, with the names")
    print("PASSED: study")


if __name__ == "__main__":
    main()
