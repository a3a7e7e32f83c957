#!/usr/bin/env python3
"""Both engines in one study, end to end on the CPU: a ddpscale study of mlp-medium on 1 and 2
ranks, scripts/gpu/pytorch_ddp_reference.py on the same configurations (2 processes for 2
ranks, gloo), `ddpscale import-pytorch`, then `ddpscale report`.

Usage: test_import_pytorch.py DDPSCALE_BINARY WORK_DIR MPIRUN...
- the import writes one pytorch-ddp configuration per reference line, beside its twin;
- summary.csv has an engine column with 2 ddpscale and 2 pytorch-ddp rows, and the PyTorch
  rows' mean samples/s equals the mean of the reference's own per-run figures (an independent
  source: the JSON the reference printed);
- the report has the "Beside PyTorch DDP" section with one row for mlp-medium b8 on 2 ranks,
  and its answer counts ddpscale's comparison alone (1, not 2);
- a reference line whose batch has no twin is refused, naming the batch, and writes nothing.
Exit 0 pass, 1 fail, 77 skipped (no PyTorch for this Python).
"""
import csv
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "scripts", "gpu", "pytorch_ddp_reference.py")
SPEC = """name: engines
models: [mlp-medium]
batch_sizes: [8]
world_sizes: [1, 2]
scaling: weak
runs: 3
warmup: 2
steps: 6
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def reference(world, batch, out_path):
    """The reference on `world` processes (rank 0's output kept): what torchrun would start."""
    args = [sys.executable, REFERENCE, "--device", "cpu", "--rows", f"mlp-medium:{batch}", "--runs", "2",
            "--warmup", "2", "--steps", "6"]
    port = str(free_port())
    procs = []
    for rank in range(world):
        env = dict(os.environ, WORLD_SIZE=str(world), RANK=str(rank), LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        procs.append(subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    if any(p.returncode for p in procs):
        raise SystemExit(f"reference on {world} process(es) failed:\n" + "\n".join(outputs))
    with open(out_path, "a") as f:
        f.write(outputs[0])
    return [json.loads(line) for line in outputs[0].splitlines() if line.startswith("{")]


def main():
    try:
        import torch  # noqa: F401
    except ImportError:
        print("no PyTorch for", sys.executable)
        return 77
    binary, work, mpirun = sys.argv[1], sys.argv[2], sys.argv[3:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    spec, study = os.path.join(work, "spec.yaml"), os.path.join(work, "study")
    with open(spec, "w") as f:
        f.write(SPEC)
    subprocess.run(mpirun + ["-np", "2", binary, "sweep", spec, "--out", study, "--no-commbench"], check=True,
                   stdout=subprocess.DEVNULL)
    failures = []

    jsonl = os.path.join(work, "pytorch.jsonl")
    lines = reference(1, 8, jsonl) + reference(2, 8, jsonl)
    imported = subprocess.run([binary, "import-pytorch", study, jsonl], capture_output=True, text=True)
    if imported.returncode != 0 or imported.stdout.count("_pytorch-ddp: 2 run(s) beside mlp-medium_b8_w") != 2:
        failures.append(f"import: rc {imported.returncode}, out {imported.stdout!r}, err {imported.stderr!r}")

    report = os.path.join(work, "report")
    subprocess.run([binary, "report", study, "--out", report, "--no-plots"], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(report, "summary.csv")) as f:
        rows = list(csv.DictReader(f))
    engines = sorted(r["engine"] for r in rows)
    if engines != ["ddpscale", "ddpscale", "pytorch-ddp", "pytorch-ddp"]:
        failures.append(f"summary.csv engines: {engines}")
    for line in lines:
        expected = statistics.mean(run["samples_per_second"] for run in line["run_records"])
        row = [r for r in rows if r["engine"] == "pytorch-ddp" and int(r["world_size"]) == line["world_size"]]
        if len(row) != 1 or abs(float(row[0]["samples_per_s_mean"]) - expected) > 1e-9 * expected + 0.05:
            failures.append(f"world {line['world_size']}: summary {row and row[0]['samples_per_s_mean']}, "
                            f"reference runs' mean {expected}")
    with open(os.path.join(report, "report.md")) as f:
        md = f.read()
    # Its number depends on which sections apply (the paired design's among them).
    section = md.split("Beside PyTorch DDP\n", 1)[-1] if re.search(r"^## \d+\. Beside PyTorch DDP$", md, re.M) else ""
    if "| mlp-medium | 8 | 2 |" not in section:
        failures.append("no engines row for mlp-medium b8 on 2 ranks in the report's section 'Beside PyTorch DDP'")
    if " of 1 comparisons" not in md.split("## 2.", 1)[0]:
        failures.append("the answer does not count ddpscale's one comparison alone")

    unmatched = os.path.join(work, "unmatched.jsonl")
    reference(1, 4, unmatched)
    before = sorted(os.listdir(study))
    refused = subprocess.run([binary, "import-pytorch", study, unmatched], capture_output=True, text=True)
    if refused.returncode != 2 or "no ddpscale configuration of mlp-medium batch 4" not in refused.stderr:
        failures.append(f"unmatched batch: rc {refused.returncode}, stderr {refused.stderr!r}")
    if sorted(os.listdir(study)) != before:
        failures.append("a refused import wrote files")

    for f in failures:
        print("FAIL:", f)
    print("import-pytorch: " + ("ok" if not failures else f"{len(failures)} failure(s)"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
