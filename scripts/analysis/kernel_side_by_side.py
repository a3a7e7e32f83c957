#!/usr/bin/env python3
"""Two kernel tables side by side: where one step's GPU time goes in ddpscale and in PyTorch.

Usage: kernel_side_by_side.py OURS.csv THEIRS.csv [--labels ddpscale PyTorch]
Both files in the format of `ddpscale train --gpu-kernels` (kernel, calls_per_step,
us_per_step, share_of_busy, concurrent_us_per_step); scripts/gpu/pytorch_ddp_reference.py
--kernels writes PyTorch's. Prints a markdown table with one row per kernel name (templates
and arguments cut, so the same kernel reads the same on both sides), its calls and
microseconds per step on each side, the difference, the microseconds per step each side's
kernel had other GPU work beside it, and the totals: kernels per step, kernel time and
GPU-busy time per step. A kernel one side does not launch shows "-" there; "n/a" where a
table predates the concurrent_us_per_step column. Standard library only.
"""
import argparse
import csv
import re
import sys


# Kernels that are templates over the work they do: the functor or op in their template
# arguments says which elementwise, reduction, optimizer or GEMM kernel it is.
GENERIC = {"vectorized_elementwise_kernel", "elementwise_kernel", "unrolled_elementwise_kernel",
           "multi_tensor_apply_kernel", "reduce_kernel", "Kernel2", "globalKernel", "index_elementwise_kernel"}
# Searched in this order: the first that matches names the work.
WORK = [r"\w*functor\w*", r"\w*_copy\w*", r"\w+Ops\b", r"cutlass_\w+", r"launch_\w+", r"\w+_kernel_impl\b", r"\w+_kernel\w*"]


def short_name(kernel):
    """'void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, ...>(...)' ->
    'fused_dropout_kernel_vec'; 'vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, ...>' ->
    'vectorized_elementwise_kernel[CUDAFunctor_add]'."""
    name = re.sub(r"^void ", "", kernel.strip())
    name = re.sub(r"\(anonymous namespace\)::", "", name)
    cut = min([i for i in (name.find("<"), name.find("(")) if i >= 0], default=len(name))
    base = name[:cut].split("::")[-1] or kernel[:60]
    if base in GENERIC:
        rest = name[cut:]
        for pattern in WORK:
            match = re.search(pattern, rest, re.I)
            if match:
                return f"{base}[{match.group(0)}]"
    return base.strip()


def read_table(path):
    """{short name: [calls per step, us per step, concurrent us per step or NaN]} and the
    GPU-busy us per step."""
    rows, busy = {}, float("nan")
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            calls, us, share = float(r["calls_per_step"]), float(r["us_per_step"]), float(r["share_of_busy"])
            concurrent = float(r.get("concurrent_us_per_step") or "nan")
            entry = rows.setdefault(short_name(r["kernel"]), [0.0, 0.0, 0.0])
            entry[0] += calls
            entry[1] += us
            entry[2] += concurrent
            if share > 0 and busy != busy:
                busy = us / share
    return rows, busy


def cell(entry, index, digits):
    if entry is None:
        return "-"
    return "n/a" if entry[index] != entry[index] else f"{entry[index]:.{digits}f}"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ours")
    parser.add_argument("theirs")
    parser.add_argument("--labels", nargs=2, default=["ddpscale", "PyTorch"])
    args = parser.parse_args(argv)
    (ours, our_busy), (theirs, their_busy) = read_table(args.ours), read_table(args.theirs)
    a, b = args.labels
    names = sorted(set(ours) | set(theirs), key=lambda n: -max(ours.get(n, [0, 0])[1], theirs.get(n, [0, 0])[1]))
    print(f"| kernel | {a} calls | {b} calls | {a} us | {b} us | {a} - {b} us "
          f"| {a} us beside other work | {b} us beside other work |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for n in names:
        o, t = ours.get(n), theirs.get(n)
        diff = (o[1] if o else 0.0) - (t[1] if t else 0.0)
        print(f"| {n} | {cell(o, 0, 1)} | {cell(t, 0, 1)} | {cell(o, 1, 1)} | {cell(t, 1, 1)} | {diff:+.1f} "
              f"| {cell(o, 2, 1)} | {cell(t, 2, 1)} |")
    total = lambda rows, i: sum(v[i] for v in rows.values())
    print(f"| **kernels per step** | {total(ours, 0):.0f} | {total(theirs, 0):.0f} | | | | | |")
    print(f"| **kernel time per step** | | | {total(ours, 1):.1f} | {total(theirs, 1):.1f} | "
          f"{total(ours, 1) - total(theirs, 1):+.1f} | | |")
    print(f"| **GPU busy per step** | | | {our_busy:.1f} | {their_busy:.1f} | {our_busy - their_busy:+.1f} | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
