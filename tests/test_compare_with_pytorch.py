#!/usr/bin/env python3
"""scripts/analysis/compare_with_pytorch.py on a two-configuration study with known ratios.

PyTorch DDP: 1,000 samples/s on 1 GPU and 1,600 on 2 (efficiency 80.0%). ddpscale: eager
1,500 / 2,850 (1.50x, 1.78x; efficiency 95.0%), graph 10,000 / 19,000 (10.00x, 11.88x;
efficiency 95.0%), graph step 0.125 ms over an eager GPU-busy floor of 0.100 ms: 1.25x.
Exit 0 pass, 1 fail.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "analysis", "compare_with_pytorch.py")


def main():
    tmp = tempfile.mkdtemp()
    summary = os.path.join(tmp, "summary.csv")
    with open(summary, "w", newline="") as f:
        w = csv.DictWriter(f, ["model", "batch_per_rank", "world_size", "exec", "samples_per_s_median",
                               "step_us_median", "gpu_busy_us"])
        w.writeheader()
        for world, eager, graph in ((1, 1500, 10000), (2, 2850, 19000)):
            w.writerow({"model": "mlp", "batch_per_rank": 8, "world_size": world, "exec": "eager",
                        "samples_per_s_median": eager, "step_us_median": 1000, "gpu_busy_us": 100})
            w.writerow({"model": "mlp", "batch_per_rank": 8, "world_size": world, "exec": "graph",
                        "samples_per_s_median": graph, "step_us_median": 125, "gpu_busy_us": ""})
    reference = os.path.join(tmp, "pytorch.jsonl")
    with open(reference, "w") as f:
        for world, sps in ((1, 1000.0), (2, 1600.0)):
            f.write(json.dumps({"model": "mlp", "batch_per_gpu": 8, "world_size": world, "samples_per_s": sps}) + "\n")
    out = subprocess.run([sys.executable, SCRIPT, summary, reference], capture_output=True, text=True,
                         check=True).stdout
    print(out)
    expected = ["| mlp | 8 | 1 | 1,000.0 | 1500.0 | 1.50x | 10000.0 | 10.00x | 0.125 | 0.100 | 1.25x |",
                "| mlp | 8 | 2 | 1,600.0 | 2850.0 | 1.78x | 19000.0 | 11.88x | 0.125 | 0.100 | 1.25x |",
                "| mlp | 8 | 80.0% | 95.0% | 95.0% |"]
    missing = [row for row in expected if row not in out.splitlines()]
    for row in missing:
        print("FAIL: missing row:", row)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
