#!/usr/bin/env python3
"""The messages a new user meets first name the real cause and a fix that works: each case
triggers the message, checks what it says, then runs the fix it gives and checks that it
succeeds.

Usage: check_messages.py DDPSCALE TORCHSCRIPT_DIR WORK_DIR MPIRUN...
"""
import os
import re
import shutil
import subprocess
import sys

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


class Runner:
    def __init__(self, ddpscale, mpirun, work_dir):
        self.ddpscale, self.mpirun, self.work_dir = ddpscale, mpirun, work_dir

    def __call__(self, args, ranks=0, cwd=None):
        command = (self.mpirun + ["-np", str(ranks)] if ranks else []) + [self.ddpscale] + args
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        return subprocess.run(command, cwd=cwd or self.work_dir, env=env, capture_output=True, text=True, timeout=600)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


# Paired blocks at their least (3 rounds): the messages are checked, not the speedup.
SPEC = ("name: {name}\nmodels: [mlp-medium]\nbatch_sizes: [8]\nworld_sizes: {worlds}\nruns: {runs}\nwarmup: 1\nsteps: 3\n"
        "paired_seconds: 0.2\n")


def version(run):
    result = run(["--version"])
    check(result.returncode == 0 and re.fullmatch(r"ddpscale \d+\.\d+\.\d+ \(commit \S+\)\n", result.stdout),
          f"--version: {result.returncode} {result.stdout!r}")


def misspelt_model(run):
    result = run(["models", "mlp-larg"])
    if check("did you mean mlp-large?" in result.stderr, f"models mlp-larg: {result.stderr!r}"):
        check(run(["models", "mlp-large"]).returncode == 0, "models mlp-large failed")


def model_file_without_prefix(run, torchscript_dir, work_dir):
    shutil.copy(os.path.join(torchscript_dir, "mlp.pt"), os.path.join(work_dir, "resnet18.pt"))
    tiny = ["--input-shape", "16", "--classes", "4", "--runs", "1", "--warmup", "0", "--steps", "2", "--device", "cpu"]
    result = run(["train", "--model", "resnet18.pt"] + tiny)
    fix = re.search(r"--model (torchscript:\S+)", result.stderr)
    if check(result.returncode == 2 and fix, f"train --model resnet18.pt: {result.stderr!r}"):
        fixed = run(["train", "--model", fix.group(1)] + tiny)
        check(fixed.returncode == 0, f"the fix --model {fix.group(1)} failed: {fixed.stderr[-300:]}")


def resume_with_changed_spec(run, work_dir):
    spec = os.path.join(work_dir, "one-rank.yaml")
    write(spec, SPEC.format(name="one", worlds="[1]", runs=2))
    check(run(["sweep", spec, "--out", "one-rank"]).returncode == 0, "the 1-rank sweep failed")
    write(spec, SPEC.format(name="one", worlds="[1]", runs=3))
    result = run(["sweep", spec, "--out", "one-rank", "--resume"])
    check(result.returncode == 2 and "runs 2 stored, 3 asked for" in result.stderr and "--overwrite" in result.stderr,
          f"--resume with runs changed does not name the setting: {result.stderr!r}")
    write(spec, SPEC.format(name="one", worlds="[1]", runs=2))  # the fix: the stored value back
    fixed = run(["sweep", spec, "--out", "one-rank", "--resume"])
    check(fixed.returncode == 0, f"--resume with the stored value back failed: {fixed.stderr[-300:]}")


def predict_on_one_rank_study(run, work_dir):
    result = run(["predict", "one-rank", "--out", "predict-one"])
    check(result.returncode == 2 and "measured 1 rank only" in result.stderr and "world_sizes: [1, 2]" in result.stderr
          and "--no-commbench" not in result.stderr and "--allreduce NAME" in result.stderr
          and "h100-nvlink-2gpu" in result.stderr, f"predict on a 1-rank study: {result.stderr!r}")
    # The other fix: a named allreduce curve predicts the 1-rank study as it is.
    named = run(["predict", "one-rank", "--gpus", "2,4,8", "--allreduce", "h100-nvlink-2gpu", "--no-plots",
                 "--out", "predict-one-named"])
    check(named.returncode == 0 and "h100-nvlink-2gpu" in named.stderr,
          f"predict --allreduce h100-nvlink-2gpu on the 1-rank study: {named.stderr[-300:]!r}")
    spec = os.path.join(work_dir, "two-ranks.yaml")  # the fix: 1 and N ranks
    write(spec, SPEC.format(name="two", worlds="[1, 2]", runs=2))
    swept = run(["sweep", spec, "--out", "two-ranks"], ranks=2)
    check(swept.returncode == 0, f"the 2-rank sweep failed: {swept.stderr[-300:]}")
    predicted = run(["predict", "two-ranks", "--out", "predict-two"])
    check(predicted.returncode == 0, f"predict on the 1-and-2-rank study failed: {predicted.stderr[-300:]}")


def named_network_outside_the_repository(run, work_dir):
    outside = os.path.join(work_dir, "elsewhere")
    os.makedirs(outside)
    study = os.path.join(work_dir, "two-ranks")
    result = run(["report", study, "--out", "report", "--no-plots", "--predict", "gpus=4;nodes=2;network=ib-ndr-400"],
                 cwd=outside)
    check(result.returncode == 0, f"report --predict network=ib-ndr-400 outside the repository: {result.stderr!r}")
    predicted = run(["predict", study, "--nodes", "2", "--network", "ib-ndr-400", "--no-plots"], cwd=outside)
    check(predicted.returncode == 0, f"predict --network ib-ndr-400 outside the repository: {predicted.stderr!r}")
    missing = run(["report", study, "--out", "report", "--no-plots", "--predict",
                   "nodes=2;network=ib-ndr-400;networks=nets.yaml"], cwd=outside)
    check(missing.returncode == 2 and "--predict networks=FILE" in missing.stderr and
          "--networks FILE" not in missing.stderr,
          f"report --predict with a missing networks file names an option report lacks: {missing.stderr!r}")


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        sys.exit(2)
    ddpscale, torchscript_dir, work_dir = (os.path.abspath(a) for a in sys.argv[1:4])
    shutil.rmtree(work_dir, ignore_errors=True)
    os.makedirs(work_dir)
    run = Runner(ddpscale, sys.argv[4:], work_dir)
    version(run)
    misspelt_model(run)
    model_file_without_prefix(run, torchscript_dir, work_dir)
    resume_with_changed_spec(run, work_dir)
    predict_on_one_rank_study(run, work_dir)
    named_network_outside_the_repository(run, work_dir)
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("PASS: every message names its cause, and its fix works")


if __name__ == "__main__":
    main()
