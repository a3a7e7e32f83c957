#!/usr/bin/env python3
"""scripts/gpu/pytorch_ddp_reference.py builds ddpscale's models, so a side-by-side timing
compares the same work.

Usage: test_pytorch_reference.py DDPSCALE_BINARY
- Every seed model has the parameter count `ddpscale models` prints (an independent source:
  ddpscale's closed-form count, itself tested against the built LibTorch modules).
- Each model trains two eager steps on the CPU and prints a JSON line with the variant,
  the model's parameter count and a positive step time.
- --placement-shifts on the CPU is refused (exit 2, naming the option).
- --manifest: two files scripts/export_model.py wrote (tiny, float input; a shrunk bert-base,
  token input) train in one process, each with its own input and the parameter count the
  manifest gives; a name the manifest lacks is refused (exit 2, naming the models it has).
- busy_union_us counts overlapping kernel intervals once: [0,10] [5,15] [20,25] -> 20 (by hand).
- concurrent_each gives each interval's time beside the others, on the cases worked by hand in
  tests/test_gpu_busy.cpp (ddpscale's twin, concurrent_ns_each).
Exit 0 pass, 1 fail, 77 skipped (no PyTorch for this Python).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scripts", "gpu", "pytorch_ddp_reference.py")
EXPORT = os.path.join(HERE, "..", "scripts", "export_model.py")


def ddpscale_counts(binary):
    out = subprocess.run([binary, "models"], capture_output=True, text=True, check=True).stdout
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+)\s+(\d+)\s", out, re.M)}


def check_manifest_rows():
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        manifest = os.path.join(folder, "manifest.json")
        subprocess.run([sys.executable, EXPORT, "tiny", "bert-base", "--layers", "1", "--d-model", "16", "--heads", "2",
                        "--ff", "32", "--vocab", "50", "--seq", "8", "--out", folder, "--manifest", manifest],
                       capture_output=True, text=True, check=True)
        with open(manifest) as f:
            expected = {e["model"]: e for e in json.load(f)}
        out = subprocess.run([sys.executable, SCRIPT, "--device", "cpu", "--manifest", manifest, "--rows", "tiny:2",
                              "bert-base:3", "--runs", "1", "--warmup", "1", "--steps", "2"],
                             capture_output=True, text=True, check=True).stdout
        lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        got = [(r["model"], r["batch_per_gpu"], r["input"], r["parameters"]) for r in lines]
        want = [(m, b, expected[m]["input"], expected[m]["parameters"]) for m, b in (("tiny", 2), ("bert-base", 3))]
        if got != want:
            failures.append(f"--manifest rows: got {got}, expected {want}")
        refused = subprocess.run([sys.executable, SCRIPT, "--device", "cpu", "--manifest", manifest, "--rows",
                                  "resnet50:2"], capture_output=True, text=True)
        if refused.returncode != 2 or "has no model 'resnet50'; it has tiny, bert-base" not in refused.stderr:
            failures.append(f"--manifest, unknown row: rc {refused.returncode}, stderr {refused.stderr[-200:]!r}")
    return failures


def main():
    try:
        import torch  # noqa: F401
    except ImportError:
        print("no PyTorch for", sys.executable)
        return 77
    failures = []
    ours = ddpscale_counts(sys.argv[1])
    theirs = json.loads(subprocess.run([sys.executable, SCRIPT, "--counts"], capture_output=True, text=True,
                                       check=True).stdout)
    for model, count in theirs.items():
        if ours.get(model) != count:
            failures.append(f"{model}: PyTorch reference {count} parameters, ddpscale {ours.get(model)}")
    out = subprocess.run([sys.executable, SCRIPT, "--device", "cpu", "--rows", "mlp-medium:4", "mlp-large:2",
                          "lstm:2", "gru:2", "transformer:2", "--variant", "eager", "--runs", "1", "--warmup", "1",
                          "--steps", "2"], capture_output=True, text=True, check=True).stdout
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    if [r["model"] for r in lines] != ["mlp-medium", "mlp-large", "lstm", "gru", "transformer"]:
        failures.append(f"models trained: {[r['model'] for r in lines]}")
    for r in lines:
        if r["variant"] != "eager" or r["parameters"] != ours.get(r["model"]) or not r["ms_per_step"] > 0:
            failures.append(f"bad line: {r}")
    # --placement-shifts holds GPU memory: refused on the CPU, as `ddpscale train` refuses it.
    refused = subprocess.run([sys.executable, SCRIPT, "--device", "cpu", "--rows", "mlp-medium:4", "--runs", "2",
                              "--placement-shifts", "0,20"], capture_output=True, text=True)
    if refused.returncode != 2 or "--placement-shifts: GPU only" not in refused.stderr:
        failures.append(f"--placement-shifts on the CPU: rc {refused.returncode}, stderr {refused.stderr[-200:]!r}")
    failures += check_manifest_rows()
    sys.path.insert(0, os.path.dirname(SCRIPT))
    import pytorch_ddp_reference
    union = pytorch_ddp_reference.busy_union_us([(20, 25), (0, 10), (5, 15)])
    if union != 20:
        failures.append(f"busy_union_us gave {union}, expected 20")
    # The cases of GpuBusy.ConcurrentTimeIsEachActivitysOverlapWithAllOthers (tests/test_gpu_busy.cpp),
    # worked by hand there: the two implementations must agree.
    beside = pytorch_ddp_reference.concurrent_each([(0, 100), (20, 60), (40, 80), (200, 210), (90, 90), (95, 91)])
    if beside != [60, 40, 40, 0, 0, 0]:
        failures.append(f"concurrent_each gave {beside}, expected [60, 40, 40, 0, 0, 0]")
    beside = pytorch_ddp_reference.concurrent_each([(0, 30), (30, 70), (10, 80), (100, 150), (150, 190)])
    if beside != [20, 40, 60, 0, 0]:
        failures.append(f"concurrent_each gave {beside} for one step beside an NCCL kernel, expected [20, 40, 60, 0, 0]")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(theirs)} models checked, {len(lines)} trained")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
