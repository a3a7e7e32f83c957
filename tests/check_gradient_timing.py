#!/usr/bin/python3
"""Checks the per-layer gradient timing a sweep of mlp-medium wrote (docs/hdf5-schema.md,
/gradient_timing), with h5py and numpy only.

  check_gradient_timing.py DIR

For every configuration file in DIR: the group exists; it lists mlp-medium's 8 trainable
parameters (799 -> 256 -> 128 -> 64 -> 192, fc1 to fc4, weight then bias) in registration
order, whose elements add up to /params parameters (258,432); every ready time is finite,
non-negative and within the recorded backward pass; and backward ran from the loss towards
the input: each of fc4's gradients was ready before the same one of fc1, and the first
gradient ready belongs to fc4.

Exit 0: all good; 1: a check failed (every failure is printed); 77: h5py or numpy missing.
"""
import glob
import math
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError as missing:
    print(f"SKIPPED: {missing} (Debian: apt-get install python3-h5py python3-numpy)")
    sys.exit(77)

NAMES = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias", "fc4.weight", "fc4.bias"]
ELEMENTS = [799 * 256, 256, 256 * 128, 128, 128 * 64, 64, 64 * 192, 192]


def check_file(path, failures):
    name = os.path.basename(path)
    with h5py.File(path, "r") as f:
        if "gradient_timing" not in f:
            failures.append(f"{name}: no /gradient_timing")
            return
        g = f["gradient_timing"]
        names = [n.decode() for n in g.attrs["names"]]
        elements = [int(e) for e in g["elements"][:]]
        element_bytes = [int(b) for b in g["element_bytes"][:]]
        ready = np.asarray(g["ready_us"][:], dtype=float)
        backward = float(g.attrs["backward_us"])
        parameters = int(f["params"].attrs["parameters"])
        print(f"{name}: clock {g.attrs['clock'].decode()}, step {g.attrs['step'].decode()}, run {int(g.attrs['run'])}, "
              f"backward {backward:.1f} us, ready " + ", ".join(f"{n} {t:.1f}" for n, t in zip(names, ready)))
    if names != NAMES:
        failures.append(f"{name}: names {names}, expected {NAMES}")
        return
    if elements != ELEMENTS or sum(elements) != parameters:
        failures.append(f"{name}: elements {elements} (sum {sum(elements)}), expected {ELEMENTS} ({parameters})")
    if element_bytes != [4] * len(NAMES):
        failures.append(f"{name}: element_bytes {element_bytes}, expected float32's 4 each")
    if not all(math.isfinite(t) and 0 <= t <= backward for t in ready):
        failures.append(f"{name}: ready times {list(ready)} not all within backward (0 to {backward} us)")
    for layer_part in (0, 1):  # weight, bias
        first, last = ready[layer_part], ready[6 + layer_part]
        if not last < first:
            failures.append(f"{name}: {NAMES[6 + layer_part]} ready at {last} us, not before {NAMES[layer_part]} ({first} us)")
    if int(np.argmin(ready)) not in (6, 7):
        failures.append(f"{name}: the first gradient ready is {NAMES[int(np.argmin(ready))]}'s, not fc4's")


def main():
    files = sorted(p for p in glob.glob(os.path.join(sys.argv[1], "*.h5")) if not p.endswith("/study.h5"))
    failures = [] if files else [f"{sys.argv[1]}: no configuration files"]
    for path in files:
        check_file(path, failures)
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
