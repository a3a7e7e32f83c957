#!/usr/bin/env python3
"""scripts/analysis/paired_ratio.py on four synthetic rounds whose host speed drifts (factors 1.0, 0.5,
0.8, 0.4 on both sides), with known answers:
- mlp b8 on 1 GPU: ddpscale 1.6x PyTorch in every round -> 1.600x [1.600, 1.600], yes.
- mlp b8 on 2 GPUs: log ratios 0.1, 0.3, 0.2, 0.4 -> mean 0.25, sd sqrt(0.05/3) = 0.12910;
  t(0.975, 3) = 3.1824 (textbook t table) -> half width 3.1824 * 0.12910 / 2 = 0.20543 ->
  exp: 1.284x [1.046, 1.577]; the rounds' ratios exp(0.1, 0.3, 0.2, 0.4) = 1.105, 1.350, 1.221, 1.492;
  undecided against 1.5 (worked by hand). Were that mean and sd to hold, n rounds give a half
  width of t(0.975, n-1) * 0.12910 / sqrt(n) against the gap |0.25 - ln 1.5| = 0.15547: n = 5
  gives 2.776 * 0.05774 = 0.16027 (not yet), n = 6 gives 2.571 * 0.05270 = 0.13550 (below the
  target: "no"), so "6 rounds (no)".
- mlp b16 on 1 GPU: 1.2x in every round -> no.
- mlp b32 on 1 GPU: measured in round 1 only -> n/a, undecided (one round); rounds to decide it
  "unknown (one round)".
These PyTorch lines carry no variant (written before variants existed): they are judged as
"eager-foreach" against ddpscale's eager rows, and the graph row gets an unjudged table only.
A second set of three rounds has variants, with known answers against the targets 1.5 and 1.0:
- transformer b32 eager: 1.2x PyTorch "eager" in every round -> no; against "eager-foreach"
  (also in the rounds, 1.5x) only the unjudged table shows it; against "eager-caller-thread"
  (1.6x, judged too) -> yes.
- mlp b8 graph: ratios 0.98, 1.00, 1.02 -> log mean 0, sd 0.02 (logs -0.0202, 0, 0.0198);
  t(0.975, 2) = 4.3027 -> geometric mean exp(-1.334e-4) = 1.000x, sd of the logs 0.020003, half
  width 4.3027 * 0.020003 / sqrt(3) = 0.04969 -> [0.951, 1.051], undecided against 1.0; its log
  mean is 1.3e-4 off the target, so no number of rounds up to 1000 decides it (a half width of
  1.3e-4 at sd 0.02 needs about 90,000).
- mlp b128 graph: 0.90 in every round -> no.
Rows paired one by one (gpu-benchmark.sh's PAIRING=row: round-K/MODEL-bBATCH folders), 3
rounds of 2 rows at 1.6x and 1.2x: "2 configurations over 3 rounds", not over 6.
A take_turns.py turns.jsonl, 3 sets of mlp-medium b8 eager, ms per step in turns 0, 1, 2:
- set 0: ddpscale 1, 1, 1; PyTorch 9, 2, 2 -> turn 0 left out -> 2.000 (9 would be kept at 3.302);
- set 1: ddpscale 1, 1, 2; PyTorch 5, 3, 6 -> 3.000;
- set 2: ddpscale 1, 2, 1; PyTorch 1, 4, 1 -> ratios 2 and 1 -> geometric mean sqrt 2 = 1.414
  (the ratio of the arithmetic means, 2.5 / 1.5 = 1.667, would be wrong);
- over sets: log ratios ln 2, ln 3, ln sqrt 2 = 0.693147, 1.098612, 0.346574 -> mean 0.712778,
  sd 0.376403; t(0.975, 2) = 4.303 -> half width 4.303 * 0.376403 / sqrt 3 = 0.935114 ->
  2.040x [exp(-0.222336), exp(1.647892)] = [0.801, 5.196], undecided against 1.5 (by hand).
Exit 0 pass, 1 fail.
"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "analysis", "paired_ratio.py")
DRIFT = [1.0, 0.5, 0.8, 0.4]
B8_W2_LOGS = [0.1, 0.3, 0.2, 0.4]


def write_summary(directory, rows):
    """report/summary.csv of one round: rows of (model, batch, world, exec, samples/s)."""
    os.makedirs(os.path.join(directory, "report"))
    with open(os.path.join(directory, "report", "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, ["model", "batch_per_rank", "world_size", "exec", "samples_per_s_median"])
        w.writeheader()
        for model, batch, world, mode, sps in rows:
            w.writerow({"model": model, "batch_per_rank": batch, "world_size": world, "exec": mode,
                        "samples_per_s_median": sps})


def write_pytorch(directory, lines, preamble=""):
    """pytorch-1gpu.jsonl of one round: one JSON object per line, after any non-JSON text."""
    with open(os.path.join(directory, "pytorch-1gpu.jsonl"), "w") as f:
        f.write(preamble)
        for line in lines:
            f.write(json.dumps(line) + "\n")


def write_round(directory, index):
    d = DRIFT[index]
    pytorch = {("mlp", 8, 1): 1000.0 * d, ("mlp", 8, 2): 1800.0 * d, ("mlp", 16, 1): 2000.0 * d}
    ours = {("mlp", 8, 1): 1600.0 * d, ("mlp", 8, 2): 1800.0 * d * math.exp(B8_W2_LOGS[index]),
            ("mlp", 16, 1): 2400.0 * d}
    if index == 0:
        pytorch[("mlp", 32, 1)] = 4000.0
        ours[("mlp", 32, 1)] = 7000.0
    write_summary(directory, [(model, batch, world, "eager", sps) for (model, batch, world), sps in ours.items()]
                  + [("mlp", 8, 1, "graph", 1e6)])
    write_pytorch(directory, [{"model": model, "batch_per_gpu": batch, "world_size": world, "samples_per_s": sps}
                              for (model, batch, world), sps in pytorch.items()],
                  preamble="a line that is not JSON, as torchrun prints\n")


def write_variant_round(directory, index):
    graph_b8 = [0.98, 1.00, 1.02][index]
    rows = [("transformer", 32, "eager", 120.0, {"eager": 100.0, "eager-foreach": 80.0, "eager-caller-thread": 75.0}),
            ("mlp", 8, "graph", 1000.0 * graph_b8, {"graph": 1000.0}),
            ("mlp", 128, "graph", 900.0, {"graph": 1000.0})]
    write_summary(directory, [(model, batch, 1, mode, sps) for model, batch, mode, sps, _ in rows])
    write_pytorch(directory, [{"model": model, "batch_per_gpu": batch, "world_size": 1, "variant": variant,
                               "samples_per_s": sps}
                              for model, batch, _, _, theirs in rows for variant, sps in theirs.items()])


def check_variants(tmp):
    rounds = [os.path.join(tmp, f"variant-round-{i + 1}") for i in range(3)]
    for i, directory in enumerate(rounds):
        write_variant_round(directory, i)
    out = subprocess.run([sys.executable, SCRIPT, *rounds], capture_output=True, text=True, check=True).stdout
    print(out)
    expected = ["### ddpscale eager against PyTorch eager (judged: at least 1.5x)",
                "| transformer | 32 | 1 | 3 | 1.200, 1.200, 1.200 | 1.200x [1.200, 1.200] | no |",
                "### ddpscale eager against PyTorch eager-caller-thread (judged: at least 1.5x)",
                "| transformer | 32 | 1 | 3 | 1.600, 1.600, 1.600 | 1.600x [1.600, 1.600] | yes |",
                "### ddpscale graph against PyTorch graph (judged: at least 1x)",
                "| mlp | 8 | 1 | 3 | 0.980, 1.000, 1.020 | 1.000x [0.951, 1.051] | undecided |",
                "| mlp | 128 | 1 | 3 | 0.900, 0.900, 0.900 | 0.900x [0.900, 0.900] | no |",
                "were their mean and spread to hold: mlp b8 on 1 GPU: more than 1000.",
                "### ddpscale eager against PyTorch eager-foreach (not judged)",
                "| transformer | 32 | 1 | 3 | 1.500, 1.500, 1.500 | 1.500x [1.500, 1.500] |"]
    return [line for line in expected if line not in out]


def check_row_pairing(tmp):
    folders = []
    for k in range(1, 4):
        for batch, ours in ((8, 1600.0), (16, 1200.0)):
            directory = os.path.join(tmp, "rows", f"round-{k}", f"mlp-b{batch}")
            os.makedirs(directory)
            write_summary(directory, [("mlp", batch, 1, "eager", ours * k)])
            write_pytorch(directory, [{"model": "mlp", "batch_per_gpu": batch, "world_size": 1, "variant": "eager",
                                       "samples_per_s": 1000.0 * k}])
            folders.append(directory)
    out = subprocess.run([sys.executable, SCRIPT, *folders], capture_output=True, text=True, check=True).stdout
    print(out)
    expected = ["2 configurations over 3 rounds: 1 yes, 1 no, 0 undecided"]
    return [line for line in expected if line not in out]


def check_turns(tmp):
    sets = {0: ([1, 1, 1], [9, 2, 2]), 1: ([1, 1, 2], [5, 3, 6]), 2: ([1, 2, 1], [1, 4, 1])}
    path = os.path.join(tmp, "turns.jsonl")
    with open(path, "w") as f:
        for set_index, (ours, theirs) in sets.items():
            for turn in range(3):
                for program, ms in (("ddpscale", ours[turn]), ("pytorch:eager", theirs[turn])):
                    f.write(json.dumps({"set": set_index, "model": "mlp-medium", "batch": 8, "exec": "eager",
                                        "program": program, "turn": turn, "ms_per_step": ms}) + "\n")
    out = subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True, check=True).stdout
    print(out)
    expected = ["### ddpscale eager against PyTorch eager (judged: at least 1.5x)",
                "| mlp-medium | 8 | 1 | 3 | 2.000, 3.000, 1.414 | 2.040x [0.801, 5.196] | undecided |",
                "1 configurations over 3 rounds: 0 yes, 0 no, 1 undecided"]
    return [line for line in expected if line not in out]


def main():
    tmp = tempfile.mkdtemp()
    rounds = [os.path.join(tmp, f"round-{i + 1}") for i in range(len(DRIFT))]
    for i, directory in enumerate(rounds):
        write_round(directory, i)
    out = subprocess.run([sys.executable, SCRIPT, *rounds], capture_output=True, text=True, check=True).stdout
    print(out)
    expected = ["| mlp | 8 | 1 | 4 | 1.600, 1.600, 1.600, 1.600 | 1.600x [1.600, 1.600] | yes |",
                "| mlp | 16 | 1 | 4 | 1.200, 1.200, 1.200, 1.200 | 1.200x [1.200, 1.200] | no |",
                "| mlp | 32 | 1 | 1 | 1.750 | 1.750x n/a | undecided (one round) |",
                "| mlp | 8 | 2 | 4 | 1.105, 1.350, 1.221, 1.492 | 1.284x [1.046, 1.577] | undecided |",
                "4 configurations over 4 rounds: 1 yes, 1 no, 2 undecided",
                "were their mean and spread to hold: mlp b32 on 1 GPU: unknown (one round); "
                "mlp b8 on 2 GPUs: 6 rounds (no)."]
    missing = [line for line in expected if line not in out]
    missing += check_variants(tmp)
    missing += check_row_pairing(tmp)
    missing += check_turns(tmp)
    for line in missing:
        print("missing:", line)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
