#!/usr/bin/env python3
"""scripts/analysis/kernel_side_by_side.py on two small tables with known answers (by hand):
- ours: 2 GEMMs (30 us), 12 accumulation adds (24 us), Adam (10 us); busy 60 us (share 0.5 for the GEMMs).
- theirs: 2 GEMMs (31 us), Adam (10 us), 1 fill (1 us); busy 42 us (share 31/42).
Rows: the adds only on our side (theirs "-", difference +24.0); the fill only on theirs;
totals 15 and 4 kernels per step, 64.0 and 42.0 us of kernel time, busy 60.0 against 42.0.
Names: templates and arguments are cut, and a generic elementwise kernel keeps its functor.
Beside other work: ours has the column (the GEMMs 12 us, the adds 0, Adam 2.5); theirs is an
older table without it, so its cells read "n/a" (and "-" where it lacks the kernel).
Exit 0 pass, 1 fail.
"""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "analysis", "kernel_side_by_side.py")
HEADER = "kernel,calls_per_step,us_per_step,share_of_busy\n"
OUR_HEADER = "kernel,calls_per_step,us_per_step,share_of_busy,concurrent_us_per_step\n"
ADD = '"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int)"'
ADAM = '"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedOptimizerTensorListMetadata<4>, FusedAdamMathFunctor<float, 4> >(x)"'
FILL = '"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int)"'


def main():
    tmp = tempfile.mkdtemp()
    ours, theirs = os.path.join(tmp, "ours.csv"), os.path.join(tmp, "theirs.csv")
    with open(ours, "w") as f:
        f.write(OUR_HEADER + "sgemm_largek_lds64<true>(float*),2,30,0.5,12\n" + f"{ADD},12,24,0.4,0\n"
                + f"{ADAM},1,10,0.166667,2.5\n")
    with open(theirs, "w") as f:
        f.write(HEADER + f"sgemm_largek_lds64<true>(float*),2,31,{31 / 42}\n" + f"{ADAM},1,10,{10 / 42}\n"
                + f"{FILL},1,1,{1 / 42}\n")
    out = subprocess.run([sys.executable, SCRIPT, ours, theirs], capture_output=True, text=True, check=True).stdout
    print(out)
    expected = ["| sgemm_largek_lds64 | 2.0 | 2.0 | 30.0 | 31.0 | -1.0 | 12.0 | n/a |",
                "| vectorized_elementwise_kernel[CUDAFunctor_add] | 12.0 | - | 24.0 | - | +24.0 | 0.0 | - |",
                "| multi_tensor_apply_kernel[FusedAdamMathFunctor] | 1.0 | 1.0 | 10.0 | 10.0 | +0.0 | 2.5 | n/a |",
                "| vectorized_elementwise_kernel[FillFunctor] | - | 1.0 | - | 1.0 | -1.0 | - | n/a |",
                "| **kernels per step** | 15 | 4 | | | | | |",
                "| **kernel time per step** | | | 64.0 | 42.0 | +22.0 | | |",
                "| **GPU busy per step** | | | 60.0 | 42.0 | +18.0 | | |"]
    missing = [line for line in expected if line not in out]
    for line in missing:
        print("missing:", line)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
