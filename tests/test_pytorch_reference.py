#!/usr/bin/env python3
"""scripts/gpu/pytorch_ddp_reference.py builds ddpscale's models, so a side-by-side timing
compares the same work.

Usage: test_pytorch_reference.py DDPSCALE_BINARY
- Every seed model has the parameter count `ddpscale models` prints (an independent source:
  ddpscale's closed-form count, itself tested against the built LibTorch modules).
- Each model trains two eager steps on the CPU and prints a JSON line with the variant,
  the model's parameter count and a positive step time.
- --placement-shifts on the CPU is refused (exit 2, naming the option).
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

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scripts", "gpu", "pytorch_ddp_reference.py")


def ddpscale_counts(binary):
    out = subprocess.run([binary, "models"], capture_output=True, text=True, check=True).stdout
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+)\s+(\d+)\s", out, re.M)}


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
