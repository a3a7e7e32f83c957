#!/usr/bin/env python3
"""What a new user's first hour ran into, each run as they ran it and checked on what it
printed and left behind:

1. --out naming an existing file: every subcommand with --out (study, also under mpirun -np 2,
   sweep, report, predict, compare) exits 2 at once with one message naming the path and the
   fix, runs nothing (no progress line, the file untouched, nothing written beside it); a
   path below a file is refused the same way.
2. `study --out DIR` keeps its study in DIR/study: predict, report and compare take DIR; the
   same study command again is refused in its own words (ddpscale study, DIR, --resume).
3. A 1-rank CPU study predicted from the H100 NVLink curve: predict warns that the step and
   the curve come from different hardware, and the study's report says so.
5. taskset -c 0, and mpirun -np 2 --bind-to core: one intra-op thread per rank on a mask
   of one core.
6. The seed study's dry run, with a probe too short to time every step, estimates every
   configuration and prints a total; a report is titled by its study's name. (A sweep
   stopped by a signal names it: reliability_signal_* and tests/test_stop_signals.cpp.)

Usage: check_first_hour_findings.py DDPSCALE SOURCE_DIR WORK_DIR MPIRUN...
"""
import os
import re
import shutil
import subprocess
import sys
import time

failures = []


def check(condition, message):
    print(("ok: " if condition else "FAIL: ") + message, flush=True)
    if not condition:
        failures.append(message)
    return condition


ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def run(command, cwd):
    print("$ " + " ".join(command), flush=True)
    result = subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600)
    if result.returncode not in (0, 2):
        print(result.stdout[-1500:] + result.stderr[-1500:], flush=True)
    return result


def out_file_refused(ddpscale, mpirun, work, study):
    afile = os.path.join(work, "afile")
    with open(afile, "w") as f:
        f.write("keep me\n")
    expected = f"--out {afile} is a file, not a folder"
    tiny = ["--runs", "2", "--warmup", "1", "--steps", "2", "--device", "cpu"]
    cases = {
        "study": [ddpscale, "study", "--model", "mlp-medium", "-b", "4", "--allreduce", "h100-nvlink-2gpu"] + tiny,
        "study under mpirun -np 2": mpirun + ["-np", "2", ddpscale, "study", "--model", "mlp-medium", "-b", "4"] + tiny,
        "sweep": [ddpscale, "sweep", os.path.join(SOURCE, "tests", "specs", "tiny.yaml"), "--device", "cpu"],
        "report": [ddpscale, "report", study, "--no-plots"],
        "predict": [ddpscale, "predict", study, "--allreduce", "h100-nvlink-2gpu", "--no-plots"],
        "compare": [ddpscale, "compare", study, study],
    }
    for name, command in cases.items():
        before = sorted(os.listdir(work))
        started = time.monotonic()
        result = run(command + ["--out", afile], work)
        took = time.monotonic() - started
        printed = result.stdout + result.stderr
        check(result.returncode != 0 and (result.returncode == 2 or "under mpirun" in name),
              f"{name} --out FILE: exit {result.returncode}")
        check(printed.count(expected) == 1 and "nothing was run" in printed and "move " + afile + " away" in printed,
              f"{name} --out FILE: one message naming the file and the fix: {printed[-400:]!r}")
        check("terminate called" not in printed and "[sweep]" not in printed and "predicting" not in printed
              and "report:" not in result.stdout and "comparison:" not in result.stdout,
              f"{name} --out FILE: nothing was run ({took:.1f} s)")
        with open(afile) as f:
            check(f.read() == "keep me\n", f"{name} --out FILE: the file is untouched")
        check(sorted(os.listdir(work)) == before, f"{name} --out FILE: nothing written beside it")
    below = run([ddpscale, "report", study, "--no-plots", "--out", os.path.join(afile, "report")], work)
    check(below.returncode == 2 and f"{afile} is a file, so no folder can be made below it" in below.stderr,
          f"report --out FILE/report: the file above is named: {below.stderr[-300:]!r}")


def study_folder_accepted(ddpscale, work):
    mynet = os.path.join(work, "studies", "mynet")
    study = [ddpscale, "study", "--model", "mlp-medium", "-b", "4", "--runs", "2", "--warmup", "1", "--steps", "2",
             "--device", "cpu", "--allreduce", "h100-nvlink-2gpu", "--gpus", "2,4", "--out", mynet]
    made = run(study, work)
    if not check(made.returncode == 0, f"the 1-rank study with --allreduce: {made.stderr[-400:]!r}"):
        return None
    predicted = run([ddpscale, "predict", mynet, "--allreduce", "h100-nvlink-2gpu", "--gpus", "2,4", "--no-plots",
                     "--out", os.path.join(work, "predict-mynet")], work)
    check(predicted.returncode == 0, f"predict takes the folder study --out wrote: {predicted.stderr[-300:]!r}")
    warning = "warning: the study's steps were measured on CPU and the allreduce curve on GPUs"
    check(warning in predicted.stderr, f"predict warns of CPU steps with a GPU curve: {predicted.stderr[-600:]!r}")
    with open(os.path.join(work, "predict-mynet", "predict.md")) as f:
        check("**Warning:** the study's steps were measured on CPU" in f.read(), "predict.md carries the warning")
    reported = run([ddpscale, "report", mynet, "--no-plots", "--out", os.path.join(work, "report-mynet")], work)
    check(reported.returncode == 0, f"report takes the folder study --out wrote: {reported.stderr[-300:]!r}")
    compared = run([ddpscale, "compare", mynet, mynet, "--out", os.path.join(work, "compare-mynet")], work)
    check(compared.returncode == 0, f"compare takes the folder study --out wrote: {compared.stderr[-300:]!r}")
    with open(os.path.join(work, "report-mynet", "report.md")) as f:
        title = f.readline().strip()
    check(title == "# ddpscale report: mlp-medium", f"the report is titled by its study's name: {title!r}")
    with open(os.path.join(mynet, "report", "report.md")) as f:
        text = f.read()
    check("Warning: the study's steps were measured on CPU" in text and
          "**Warning:** the study's steps were measured on CPU" in text,
          "the study's own report says the step and the curve come from different hardware")
    again = run(study, work)
    check(again.returncode == 2 and
          f"ddpscale study: --out {mynet} already holds a study; run this command again with --resume" in again.stderr
          and "ddpscale sweep" not in again.stderr and os.path.join(mynet, "study") not in again.stderr,
          f"the study command again is refused in its own words: {again.stderr[-400:]!r}")
    return mynet


def threads_from_the_cpu_mask(ddpscale, mpirun, work):
    train = [ddpscale, "train", "-m", "mlp-medium", "-b", "4", "--runs", "1", "--warmup", "0", "--steps", "1",
             "--device", "cpu"]
    one_core = "(1 intra-op threads per rank, CPU mask of 1 cores)"
    if shutil.which("taskset"):
        pinned = run(["taskset", "-c", "0"] + train, work)
        check(pinned.returncode == 0 and one_core in pinned.stdout,
              f"taskset -c 0: one thread on a mask of one core: {pinned.stdout[:300]!r}")
    bound = [word if word != "none" or mpirun[i - 1] != "--bind-to" else "core" for i, word in enumerate(mpirun)]
    if "--bind-to" not in bound:
        bound += ["--bind-to", "core"]
    pair = run(bound + ["-np", "2"] + train, work)
    check(pair.returncode == 0 and one_core in pair.stdout,
          f"mpirun -np 2 --bind-to core: one thread per rank on a mask of one core: {pair.stdout[:300]!r}")


def dry_run_total(ddpscale, work):
    spec = os.path.join(SOURCE, "experiments", "seed-study.yaml")
    result = run([ddpscale, "sweep", spec, "--dry-run", "--probe-seconds", "2", "--device", "cpu",
                  "--out", os.path.join(work, "never-measured")], work)
    plan = re.search(r"^# seed-study: (\d+) configurations in run order$", result.stdout, re.M)
    runs = re.search(r"^# total: (\d+) runs", result.stdout, re.M)
    total = re.search(r"^# estimated total: about \d+:\d\d:\d\d for all (\d+) runs of the (\d+) configurations in the "
                      r"spec and (\d+) paired measurements of twins \(about [\d.]+ s each: paired_seconds [\d.]+ or the least 3 "
                      r"rounds at the twins' steps, whichever is longer\)$", result.stdout, re.M)
    if not check(result.returncode == 0 and plan and runs and total,
                 f"dry run prints a plan and an estimated total: {result.stdout[-800:]!r}"):
        return
    check((total.group(1), total.group(2)) == (runs.group(1), plan.group(1)),
          f"the total covers every run ({runs.group(1)}) of every configuration ({plan.group(1)}): {total.group(0)!r}")
    # Every configuration of the seed study has its twin (1 and 2 ranks), measured paired once
    # per launch.
    launches = int(re.search(r"^launches: (\d+)", open(spec, encoding="utf-8").read(), re.M).group(1))
    check(int(total.group(3)) == int(plan.group(1)) // 2 * launches,
          f"the total counts the paired blocks of {int(plan.group(1)) // 2} twins in {launches} launches: {total.group(0)!r}")
    estimate = re.search(r"^# estimate: about .* for (\d+) runs of (\d+) configurations.*$", result.stdout, re.M)
    check(estimate and (estimate.group(1), estimate.group(2)) == (runs.group(1), plan.group(1)),
          f"the estimate line counts every configuration: {estimate.group(0) if estimate else None!r}")
    if estimate and "extrapolated" in estimate.group(0):
        check(re.search(r"extrapolated from the timed step nearest in parameters x batch, its own model's where one "
                        r"was timed, as \(parameters x batch\)\^[01]\.\d\d \(fitted to the timed steps\): \S+ at batch \d+", estimate.group(0)) is not None,
              "the steps not timed are named")


def main():
    global SOURCE
    if len(sys.argv) < 5:
        print(__doc__)
        sys.exit(2)
    ddpscale, SOURCE, work = (os.path.abspath(a) for a in sys.argv[1:4])
    mpirun = sys.argv[4:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    mynet = study_folder_accepted(ddpscale, work)
    if mynet:
        out_file_refused(ddpscale, mpirun, work, mynet)
    threads_from_the_cpu_mask(ddpscale, mpirun, work)
    dry_run_total(ddpscale, work)
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("PASSED: first hour findings")


if __name__ == "__main__":
    main()
