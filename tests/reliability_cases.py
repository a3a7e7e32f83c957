#!/usr/bin/env python3
"""Bad input to `ddpscale train` and `ddpscale sweep`, each case on 2 MPI ranks (docs/reliability.md, "Bad input").

For every case it asserts:
  * the exit code (2 for a usage error; mpirun passes on the ranks' code),
  * exactly one line on stderr from ddpscale (mpirun's own boxed notice may follow), and
    that line contains the expected text, which names what is wrong,
  * every process of the launch is gone within 10 s of the error line appearing (found by a
    tag in the environment, see reliability_common.py); both times are printed,
  * no result was written: no *.h5 or *.tmp appeared in the case's folder.

Usage: reliability_cases.py --ddpscale BUILD/trainer/ddpscale --mpirun "mpirun --allow-run-as-root ..."
                            [--workdir DIR] [--only NAME_SUBSTRING] [--list]
Standard library only. Exit 0 when every case passed, 1 otherwise.
"""
import argparse
import concurrent.futures
import os
import shlex
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reliability_common import Launch, files_under  # noqa: E402

LIMIT_S = 10.0  # every process gone within this many seconds of the error
HANG_S = 60.0   # a launch still running after this is a hang: killed, and the case fails

GOOD_SPEC = """\
name: reliability
models: [mlp@100K]
batch_sizes: [8]
world_sizes: [2]
runs: 1
warmup: 0
steps: 2
"""

# Each case: name, arguments after `ddpscale`, expected exit code, the text the one error
# line must contain, and files to lay out first ({path: text}; a path ending in / is a
# directory). Paths are relative to the case's own folder, the launch's working directory.
CASES = [
    # --- ddpscale train ----------------------------------------------------------------
    ("train_unknown_model", ["train", "-m", "resnet9000"], 2,
     "ddpscale train: unknown model 'resnet9000'; choose ", {}),
    ("train_unknown_size_family", ["train", "-m", "mlp@7Q"], 2,
     "ddpscale train: model 'mlp@7Q': '7Q': unknown size suffix (use K, M or B)", {}),
    ("train_batch_zero", ["train", "-m", "mlp@100K", "-b", "0"], 2,
     "ddpscale train: --batch-size must be positive, got 0", {}),
    ("train_batch_negative", ["train", "-m", "mlp@100K", "--batch-size=-4"], 2,
     "ddpscale train: --batch-size must be positive, got -4", {}),
    ("train_batch_not_a_number", ["train", "-m", "mlp@100K", "--batch-size", "lots"], 2,
     "ddpscale train: --batch-size 'lots' is not a valid value: expected a number (see ddpscale train --help)", {}),
    ("train_strong_batch_not_divisible", ["train", "-m", "mlp@100K", "--scaling", "strong", "-b", "7"], 2,
     "ddpscale train: --scaling strong splits the global batch 7 over 2 ranks, but it does not divide evenly; "
     "pick a multiple of 2", {}),
    ("train_world_size_above_launch", ["train", "-m", "mlp@100K", "--world-size", "4"], 2,
     "ddpscale train: --world-size 4 is larger than the 2 ranks launched (mpirun -np 4 ...)", {}),
    ("train_runs_zero", ["train", "-m", "mlp@100K", "--runs", "0"], 2,
     "ddpscale train: --runs must be positive, got 0", {}),
    ("train_runs_negative", ["train", "-m", "mlp@100K", "--runs=-3"], 2,
     "ddpscale train: --runs must be positive, got -3", {}),
    ("train_steps_zero", ["train", "-m", "mlp@100K", "--steps", "0"], 2,
     "ddpscale train: --steps must be positive, got 0", {}),
    ("train_steps_negative", ["train", "-m", "mlp@100K", "--steps=-1"], 2,
     "ddpscale train: --steps must be positive, got -1", {}),
    ("train_comm_timeout_zero", ["train", "-m", "mlp@100K", "--comm-timeout", "0"], 2,
     "ddpscale train: --comm-timeout must be a positive number of seconds, got 0", {}),
    ("train_unknown_option", ["train", "-m", "mlp@100K", "--batches", "8"], 2,
     "ddpscale train: Option \u2018batches\u2019 does not exist (see ddpscale train --help)", {}),
    # --- ddpscale sweep: the spec ------------------------------------------------------
    ("sweep_spec_missing", ["sweep", "nowhere.yaml", "--out", "study"], 2,
     "ddpscale sweep: nowhere.yaml: cannot open the sweep spec (missing or unreadable)", {}),
    # Root reads any file whatever its mode, so "unreadable" is a path that cannot be read
    # as a file: a directory (chmod 000 would pass unnoticed when the tests run as root).
    ("sweep_spec_unreadable_directory", ["sweep", "specdir", "--out", "study"], 2,
     "ddpscale sweep: specdir: is a directory, not a sweep spec (give the YAML file)", {"specdir/": None}),
    ("sweep_spec_not_yaml", ["sweep", "spec.yaml", "--out", "study"], 2,
     "ddpscale sweep: spec.yaml:2:", {"spec.yaml": "models: [mlp@100K\nbatch_sizes: {8: [\n"}),
    ("sweep_spec_not_a_map", ["sweep", "spec.yaml", "--out", "study"], 2,
     "ddpscale sweep: spec.yaml: expected a YAML map of keys (models, batch_sizes, ...)",
     {"spec.yaml": "just a sentence\n"}),
    ("sweep_spec_unknown_key", ["sweep", "spec.yaml", "--out", "study"], 2,
     "ddpscale sweep: spec.yaml:8: key 'batchsize': unknown key; the keys are allreduce_dtype, batch_sizes, ",
     {"spec.yaml": GOOD_SPEC + "batchsize: 8\n"}),
    ("sweep_spec_wrong_type", ["sweep", "spec.yaml", "--out", "study"], 2,
     "ddpscale sweep: spec.yaml:8: key 'seed': expected a non-negative integer, got 'soon'",
     {"spec.yaml": GOOD_SPEC + "seed: soon\n"}),
    ("sweep_spec_wrong_type_in_list", ["sweep", "spec.yaml", "--out", "study"], 2,
     "ddpscale sweep: spec.yaml:3: key 'batch_sizes': expected positive integers, got 'eight'",
     {"spec.yaml": GOOD_SPEC.replace("batch_sizes: [8]", "batch_sizes: [8, eight]")}),
    ("sweep_spec_batch_zero", ["sweep", "spec.yaml", "--out", "study"], 2,
     "ddpscale sweep: spec.yaml:3: key 'batch_sizes': must be positive, got 0",
     {"spec.yaml": GOOD_SPEC.replace("batch_sizes: [8]", "batch_sizes: [0]")}),
    ("sweep_spec_runs_negative", ["sweep", "spec.yaml", "--out", "study"], 2,
     "ddpscale sweep: spec.yaml:5: key 'runs': must be positive, got -2",
     {"spec.yaml": GOOD_SPEC.replace("runs: 1", "runs: -2")}),
    ("sweep_spec_steps_zero", ["sweep", "spec.yaml", "--out", "study"], 2,
     "ddpscale sweep: spec.yaml:7: key 'steps': must be positive, got 0",
     {"spec.yaml": GOOD_SPEC.replace("steps: 2", "steps: 0")}),
    ("sweep_spec_unknown_model", ["sweep", "spec.yaml", "--out", "study"], 2,
     "ddpscale sweep: configuration resnet9000 batch 8 world 2: unknown model 'resnet9000'",
     {"spec.yaml": GOOD_SPEC.replace("[mlp@100K]", "[resnet9000]")}),
    ("sweep_spec_world_size_above_launch", ["sweep", "spec.yaml", "--out", "study"], 2,
     "ddpscale sweep: configuration mlp@100K batch 8 world 4: --world-size 4 is larger than the 2 ranks launched",
     {"spec.yaml": GOOD_SPEC.replace("world_sizes: [2]", "world_sizes: [1, 4]")}),
    ("sweep_spec_strong_not_divisible", ["sweep", "spec.yaml", "--out", "study"], 2,
     "ddpscale sweep: configuration mlp@100K batch 9 world 2: --scaling strong splits the global batch 9 over 2 "
     "ranks, but it does not divide evenly",
     {"spec.yaml": GOOD_SPEC.replace("batch_sizes: [8]", "batch_sizes: [9]") + "scaling: strong\n"}),
    ("sweep_nccl_profile_foreign_key", ["sweep", "spec.yaml", "--out", "study"], 2,
     "ddpscale sweep: spec.yaml:10: key 'nccl_profiles.tuned': NCCL profile 'tuned': key 'OMP_NUM_THREADS' is not "
     "an NCCL variable (only NCCL_* keys are accepted)",
     {"spec.yaml": GOOD_SPEC + "nccl_profiles:\n  tuned:\n    NCCL_ALGO: Tree\n    OMP_NUM_THREADS: 4\n"}),
    ("sweep_nccl_profile_not_defined", ["sweep", "spec.yaml", "--out", "study", "--nccl-profile", "fast"], 2,
     "ddpscale sweep: --nccl-profile fast: spec.yaml defines no NCCL profiles", {"spec.yaml": GOOD_SPEC}),
    # --- ddpscale sweep: the output folder ---------------------------------------------
    ("sweep_out_not_writable", ["sweep", "spec.yaml", "--out", "afile/study"], 2,
     "ddpscale sweep: --out afile/study: afile is a file, so no folder can be made below it",
     {"spec.yaml": GOOD_SPEC, "afile": "a regular file, so nothing can be created under it\n"}),
    ("sweep_out_is_a_file", ["sweep", "spec.yaml", "--out", "afile"], 2,
     "ddpscale sweep: --out afile is a file, not a folder",
     {"spec.yaml": GOOD_SPEC, "afile": "a regular file\n"}),
    # A study folder is recognised by its study.h5; an empty stand-in is enough for the refusal.
    ("sweep_existing_study_without_resume", ["sweep", "spec.yaml", "--out", "study"], 2,
     "ddpscale sweep: --out study already holds a study; pass --resume to continue it or --overwrite to replace "
     "it (nothing was changed)",
     {"spec.yaml": GOOD_SPEC, "study/": None, "study/study.h5": ""}),
    ("sweep_comm_timeout_negative", ["sweep", "spec.yaml", "--out", "study", "--comm-timeout=-5"], 2,
     "ddpscale sweep: --comm-timeout must be a positive number of seconds, got -5", {"spec.yaml": GOOD_SPEC}),
]


def lay_out(folder, files):
    for rel, text in files.items():
        path = os.path.join(folder, rel)
        if rel.endswith("/"):
            os.makedirs(path, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def run_case(case, args, root):
    name, argv, expected_code, expected_text, files = case
    folder = os.path.join(root, name)
    os.makedirs(folder)
    lay_out(folder, files)
    before = set(files_under(folder, "*.h5")) | set(files_under(folder, "*.tmp"))
    launch = Launch(args.mpirun, args.ddpscale, argv, folder, ranks=2, name="_launch")
    # The 10 s count from the moment the error is printed: no rank may linger after it.
    # (Start-up before it, loading LibTorch and wiring MPI, takes 2 to 6 s on a busy 2-core
    # machine; the launch as a whole is only stopped after HANG_S.)
    error_seen = None
    while launch.process.poll() is None and time.monotonic() - launch.start < HANG_S:
        if error_seen is None and any(l.startswith("ddpscale") for l in launch.stderr().splitlines()):
            error_seen = time.monotonic() - launch.start
        time.sleep(0.02)
    code = launch.wait(timeout=1)
    if error_seen is None:
        error_seen = launch.elapsed
    total = launch.wait_for_processes_gone(timeout=LIMIT_S + HANG_S)
    gone = total - error_seen
    stderr = launch.stderr()
    problems = []
    if code != expected_code:
        problems.append(f"exit code {code}, expected {expected_code}")
    ours = [line for line in stderr.splitlines() if line.startswith("ddpscale") or line.startswith("[ddpscale")]
    if len(ours) != 1:
        problems.append(f"{len(ours)} lines from ddpscale on stderr, expected exactly 1")
    elif expected_text not in ours[0]:
        problems.append(f"error line does not contain the expected text\n      expected: {expected_text}\n"
                        f"      got:      {ours[0]}")
    if gone > LIMIT_S:
        problems.append(f"processes gone only {gone:.1f} s after the error (limit {LIMIT_S:.0f} s)")
    after = set(files_under(folder, "*.h5")) | set(files_under(folder, "*.tmp"))
    if after != before:
        problems.append(f"files written: {sorted(after - before)}")
    if launch.stdout().strip():
        problems.append(f"unexpected stdout: {launch.stdout().strip()[:200]}")
    status = "ok" if not problems else "FAILED"
    report = [f"{status:6s} {name:40s} exit {code}  error at {error_seen:4.1f} s, all gone {gone:4.1f} s later  | "
              f"{ours[0] if ours else '(no line)'}"]
    report += [f"       - {p}" for p in problems]
    if problems:
        report.append("       stderr was:\n" + "\n".join("         " + l for l in stderr.splitlines()))
    print("\n".join(report), flush=True)  # one print: cases run on two threads
    return not problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ddpscale", required=True)
    parser.add_argument("--mpirun", required=True, help="mpirun and its options, as one string")
    parser.add_argument("--workdir", help="keep the cases' folders here (default: a temporary folder, removed)")
    parser.add_argument("--only", help="run the cases whose name contains this")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--jobs", type=int, default=2, help="cases run side by side (default 2)")
    args = parser.parse_args()
    args.mpirun = shlex.split(args.mpirun)
    args.ddpscale = os.path.abspath(args.ddpscale)
    cases = [c for c in CASES if not args.only or args.only in c[0]]
    if args.list:
        for c in cases:
            print(c[0])
        return 0
    if not cases:
        print(f"no case matches --only {args.only}")
        return 1
    root = args.workdir or tempfile.mkdtemp(prefix="ddpscale-reliability-cases-")
    if args.workdir:
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)
    start = time.monotonic()
    def attempt(case):
        try:
            return run_case(case, args, root)
        except AssertionError as e:
            print(f"FAILED {case[0]}: {e}", flush=True)
            return False

    # Launches are mostly start-up (loading LibTorch, MPI wire-up): two side by side halve
    # the time and stay far inside the 10 s limit on 2 cores.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(attempt, cases))
    passed = sum(results)
    failed = len(results) - passed
    print(f"{len(cases)} cases in {time.monotonic() - start:.1f} s")
    print(f"{passed} passed, {failed} failed")
    if not args.workdir and failed == 0:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
