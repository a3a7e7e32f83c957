#!/usr/bin/python3
"""Faults during a measurement (docs/reliability.md, "Faults"), each on 2 MPI ranks on CPU:

  kill_rank        SIGKILL to rank 1 in the middle of measured steps of `ddpscale train`:
                   everything is gone within --comm-timeout (10 s), and stderr names rank 1.
  stuck_rank       SIGSTOP to rank 1 (alive but silent, which the launcher cannot see): rank 0
                   gives up after --comm-timeout (4 s), names rank 1, and the job is aborted.
  signal_mpirun_int, signal_mpirun_term
                   SIGINT / SIGTERM to mpirun during a sweep: the ranks leave at once, finished
                   configurations stay complete and untouched, no *.tmp, --resume completes.
  signal_ranks_term
                   SIGTERM to every rank (what srun and SLURM pre-emption do): as above, and
                   the exit code is 130 with "[sweep] interrupted by SIGTERM (...)".
  nan_loss         sgd with lr 1e30 really diverges: each run is failed "non-finite loss (nan)
                   at measured step 1" in the HDF5 file (h5py), counted (0/2 runs ok).
  oom_batch        a batch no allocator can hold (10^12 samples, 4 PB): that configuration's runs
                   are failed "out of memory at batch ...", the study goes on with the next one.
  disk_full        a file-size limit (RLIMIT_FSIZE, as ulimit -f sets it) on rank 0 is hit
                   while storing the second configuration:
                   an error naming that file, the first file intact, no temporary file left.
  diverged         DDPSCALE_FAULT_PERTURB_RANK=1 perturbs rank 1 after run 0: that run is
                   failed "replicas diverged", the others are ok, and the summary's median is
                   that of the ok runs only.
  sweep_barrier_stall
                   DDPSCALE_FAULT_STALL_RANK=1 stops rank 1 before a sweep's barrier: rank 0 gives
                   up after --comm-timeout (4 s) with a FATAL line naming the barrier, and the
                   job is gone within --comm-timeout + 10 s.
  sweep_long_idle_wait
                   rank 1 idle through a 1-rank configuration much longer than --comm-timeout
                   (1 s) is not killed: the study completes.
  memory_preflight transformer@2B refused before allocation (exit 2, < start + 5 s, both numbers), a
                   sweep holding it refused before its first run, --no-memory-check accepted.

Usage: /usr/bin/python3 reliability_faults.py --ddpscale PATH --mpirun "mpirun ..." TEST [TEST...]
Exit 0 pass, 1 fail, 77 skipped (h5py missing for a test that reads HDF5, or fewer than 2 GPUs for --device cuda).
"""
import argparse
import os
import re
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reliability_common import Launch, files_under, rank_processes, tagged_processes, wait_until  # noqa: E402

try:
    import h5py
except ImportError:
    h5py = None


class Skip(Exception):
    pass


def need_h5py():
    if h5py is None:
        raise Skip("h5py is missing for this interpreter (Debian: apt-get install python3-h5py)")


def text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def write(path, content):
    with open(path, "w", encoding="utf-8") as f:
        f.write(content)


def config_files(folder):
    return [f for f in files_under(folder, "*.h5") if os.path.basename(f) != "study.h5"]


def read_runs(path):
    """[(index, status, failure, samples_per_second)] of one configuration file, by index."""
    need_h5py()
    with h5py.File(path, "r") as f:
        expect(int(f.attrs["complete"]) == 1, f"{path}: not marked complete")
        runs = []
        for group in f["runs"].values():
            runs.append((int(group.attrs["index"]), text(group.attrs["status"]), text(group.attrs["failure"]),
                         float(group.attrs["samples_per_second"])))
    return sorted(runs)


def log(message):
    print(message, flush=True)


# ---------------------------------------------------------------------------------------
# A rank lost in the middle of measured steps


def visible_gpu_count():
    """GPUs this process may use: CUDA_VISIBLE_DEVICES if set, else what nvidia-smi lists."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip() and d.strip() != "-1"])
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in listing.splitlines() if line.startswith("GPU "))


def start_long_training(ctx, name, timeout_s):
    if ctx.device == "cuda" and visible_gpu_count() < 2:
        # ddpscale refuses two ranks on one GPU (they would distort every timing).
        raise Skip(f"needs 2 GPUs, this machine has {visible_gpu_count()}")
    args = ["train", "-m", "mlp@100K", "--device", ctx.device, "--runs", "1", "--warmup", "2", "--steps", "100000",
            "--comm-timeout", str(timeout_s)]
    launch = Launch(ctx.mpirun, ctx.ddpscale, args, ctx.workdir, name=name)
    # The header is printed (and flushed) just before the first run; warm-up is 2 short
    # steps, so 2 s after it the ranks are deep in measured steps.
    wait_until(lambda: "# ddpscale train:" in launch.stdout() or launch.process.poll() is not None, 60,
               "the training header")
    expect(launch.process.poll() is None, f"training ended early:\n{launch.stderr()}")
    time.sleep(2.0)
    ranks = rank_processes(launch.tag)
    expect(sorted(ranks) == [0, 1], f"expected ranks 0 and 1 in /proc, found {ranks}")
    return launch, ranks


def test_kill_rank(ctx):
    timeout_s = 10
    launch, ranks = start_long_training(ctx, "kill_rank", timeout_s)
    killed_at = time.monotonic()
    os.kill(ranks[1], signal.SIGKILL)
    code = launch.wait(timeout=timeout_s + 30)
    gone = launch.wait_for_processes_gone(timeout=timeout_s + 30) - (killed_at - launch.start)
    stderr = launch.stderr()
    log(f"  SIGKILL rank 1 (pid {ranks[1]}): mpirun exit {code}, every process gone {gone:.2f} s later")
    named = [l.strip() for l in stderr.splitlines() if re.search(r"\brank 1\b", l)]
    log("  message: " + (named[0] if named else "(none naming rank 1)"))
    expect(code != 0, "mpirun exited 0 after a rank was killed")
    expect(gone <= timeout_s, f"processes left {gone:.1f} s after the kill, more than --comm-timeout {timeout_s} s")
    expect(named, f"no line of stderr names the lost rank 1:\n{stderr}")


def test_stuck_rank(ctx):
    timeout_s = 4
    launch, ranks = start_long_training(ctx, "stuck_rank", timeout_s)
    stopped_at = time.monotonic()
    os.kill(ranks[1], signal.SIGSTOP)
    try:
        code = launch.wait(timeout=timeout_s + 30)
        gone = launch.wait_for_processes_gone(timeout=30) - (stopped_at - launch.start)
    finally:
        # Whatever happened, never leave a stopped process behind.
        for pid in tagged_processes(launch.tag):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    stderr = launch.stderr()
    fatal = [l for l in stderr.splitlines() if re.match(r"\[ddpscale rank 0 on [^\]]+\] FATAL:", l)]
    log(f"  SIGSTOP rank 1 (pid {ranks[1]}): mpirun exit {code}, every process gone {gone:.2f} s later")
    log("  message: " + (fatal[0] if fatal else "(none)"))
    expect(code != 0, "mpirun exited 0 although a rank was stuck")
    expect(fatal, f"rank 0 printed no FATAL line:\n{stderr}")
    # MPI knows which request is missing and names the rank; NCCL only knows that its
    # collective never finished (a 2-rank group has one peer to blame).
    expected = f"no completion within --comm-timeout ({timeout_s} s)" + (": lost contact with rank 1"
                                                                         if ctx.device == "cpu" else "")
    expect(expected in fatal[0], f"the FATAL line does not say '{expected}': {fatal[0]}")
    # The time-out counts from the start of the wait for the step's allreduce, then MPI_Abort
    # and mpirun's clean-up (SIGCONT, SIGTERM, SIGKILL one second apart) follow.
    expect(gone <= timeout_s + 6, f"processes left {gone:.1f} s after SIGSTOP (time-out {timeout_s} s)")


# ---------------------------------------------------------------------------------------
# Interrupted sweeps

SWEEP_SPEC = """\
name: interrupt
models: [mlp@100K]
batch_sizes: [8, 64]
world_sizes: [1, 2]
runs: 2
warmup: 1
steps: 150
paired_window: 1
"""
# paired_window 1: each batch's twins are stored after their own paired blocks, so the
# configurations land two by two (one window of both batches would store all four at once).
# 150 steps (about 2 s a configuration here): a configuration must outlast the signal's way
# through mpirun (about a second); with 10 steps an idle machine finished the whole study
# before the ranks got it. Four configurations: two stored before the signal, and two, at
# least one of them at batch 64, still to come when it is sent, so the resume has work left.
SWEEP_CONFIGS = 4
# Every fault test's sweep: run inside its folder on spec.yaml, into study/, on CPU ranks.
SWEEP_ARGS = ["sweep", "spec.yaml", "--out", "study", "--device", "cpu", "--no-commbench"]


def spec_folder(ctx, name, spec):
    """A fresh folder <workdir>/<name> holding spec.yaml."""
    folder = os.path.join(ctx.workdir, name)
    os.makedirs(folder)
    write(os.path.join(folder, "spec.yaml"), spec)
    return folder


def finished_sweep(ctx, folder, env=None):
    """Runs the sweep of folder/spec.yaml to its end; returns (exit code, stderr)."""
    launch = Launch(ctx.mpirun, ctx.ddpscale, SWEEP_ARGS, folder, name="sweep", env=env)
    code = launch.wait(timeout=120)
    return code, launch.stderr()


def interrupted_sweep(ctx, name, target, signal_number):
    folder = spec_folder(ctx, name, SWEEP_SPEC)
    args = SWEEP_ARGS
    launch = Launch(ctx.mpirun, ctx.ddpscale, args, folder, name="sweep")
    study = os.path.join(folder, "study")
    # Signal once two configurations are stored and the third is under way.
    wait_until(lambda: len(config_files(study)) >= 2 or launch.process.poll() is not None, 120,
               "two finished configurations")
    expect(launch.process.poll() is None, f"the sweep ended before it could be interrupted:\n{launch.stderr()}")
    sent_at = time.monotonic()
    if target == "mpirun":
        os.kill(launch.process.pid, signal_number)
    else:
        for pid in rank_processes(launch.tag).values():
            os.kill(pid, signal_number)
    code = launch.wait(timeout=60)
    gone = launch.wait_for_processes_gone(timeout=30) - (sent_at - launch.start)
    stderr = launch.stderr()
    kept = config_files(study)
    tmp = files_under(study, "*.tmp")
    log(f"  {signal.Signals(signal_number).name} to {target}: exit {code}, every process gone {gone:.2f} s later, "
        f"{len(kept)} of {SWEEP_CONFIGS} configurations kept, {len(tmp)} *.tmp")
    message = [l for l in stderr.splitlines() if "[sweep] interrupted" in l]
    log("  message: " + (message[0] if message else "(none)"))
    expect(code != 0, "the interrupted sweep exited 0")
    # The ranks received SIGTERM in every case: sent to them, or passed on by mpirun.
    expect(message and message[0].startswith("[sweep] interrupted by SIGTERM (") and
           message[0].endswith("): finished configurations are kept; run again with --resume to continue"),
           "no interruption message from rank 0 naming SIGTERM")
    expect(gone <= 10, f"processes left {gone:.1f} s after the signal")
    expect(not tmp, f"temporary files left: {tmp}")
    expect(2 <= len(kept) < SWEEP_CONFIGS, f"{len(kept)} configurations kept, expected 2 to {SWEEP_CONFIGS - 1}")
    if h5py is not None:
        for f in kept:
            runs = read_runs(os.path.join(study, f))
            expect([r[1] for r in runs] == ["ok", "ok"], f"{f}: runs {runs}")
    before = {f: os.stat(os.path.join(study, f)) for f in kept}

    resume = Launch(ctx.mpirun, ctx.ddpscale, args + ["--resume"], folder, name="resume")
    resume_code = resume.wait(timeout=180)
    resume_err = resume.stderr()
    done = re.search(r"(\d+) configurations \((\d+) already done\)", resume_err)
    log(f"  --resume: exit {resume_code}, {done.group(0) if done else '?'}, "
        f"{len(config_files(study))} configurations in the study")
    expect(resume_code == 0, f"--resume failed ({resume_code}):\n{resume_err}")
    expect(done and int(done.group(1)) == SWEEP_CONFIGS and int(done.group(2)) == len(kept),
           f"--resume did not skip exactly the {len(kept)} kept configurations:\n{resume_err}")
    expect(len(config_files(study)) == SWEEP_CONFIGS, f"after --resume: {config_files(study)}")
    expect(not files_under(study, "*.tmp"), "temporary files after --resume")
    for f, st in before.items():
        now = os.stat(os.path.join(study, f))
        expect((now.st_ino, now.st_mtime_ns, now.st_size) == (st.st_ino, st.st_mtime_ns, st.st_size),
               f"{f} was rewritten by --resume")
    return code, message


def test_signal_mpirun_int(ctx):
    code, _ = interrupted_sweep(ctx, "signal_mpirun_int", "mpirun", signal.SIGINT)
    # mpirun answers its own SIGINT/SIGTERM by killing the job and exits 1 whatever the ranks
    # return (Open MPI 4.1); the ranks' 130 is seen where the signal reaches them directly.
    log(f"  (mpirun's own exit code on SIGINT: {code})")


def test_signal_mpirun_term(ctx):
    code, _ = interrupted_sweep(ctx, "signal_mpirun_term", "mpirun", signal.SIGTERM)
    log(f"  (mpirun's own exit code on SIGTERM: {code})")


def test_signal_ranks_term(ctx):
    code, _ = interrupted_sweep(ctx, "signal_ranks_term", "ranks", signal.SIGTERM)
    expect(code == 130, f"exit code {code}, expected 130")


# ---------------------------------------------------------------------------------------
# Failed runs recorded, excluded and counted


def test_nan_loss(ctx):
    need_h5py()
    folder = spec_folder(ctx, "nan_loss",
                         "name: nan\nmodels: [mlp@100K]\nbatch_sizes: [8]\nworld_sizes: [2]\nruns: 2\n"
                         "warmup: 0\nsteps: 4\noptimizer: sgd\nlr: 1.0e30\n")
    code, stderr = finished_sweep(ctx, folder)
    # Every run failed, so the finished study exits 3 ("some configuration has no successful run").
    expect(code == 3, f"a sweep whose runs all failed must still finish, with exit 3, got {code}:\n{stderr}")
    expect("have no successful run" in stderr, f"the sweep must say which configurations failed:\n{stderr}")
    files = config_files(os.path.join(folder, "study"))
    expect(len(files) == 1, f"expected one configuration file, found {files}")
    runs = read_runs(os.path.join(folder, "study", files[0]))
    log(f"  {files[0]}: " + "; ".join(f"run {i} {s} '{why}' {sps:.0f} samples/s" for i, s, why, sps in runs))
    expect(len(runs) == 2, f"expected 2 runs, found {runs}")
    for index, status, failure, sps in runs:
        expect(status == "failed", f"run {index} is {status}")
        expect(re.fullmatch(r"rank \d: non-finite loss \((nan|inf|-inf)\) at measured step 1", failure),
               f"run {index}: failure text '{failure}'")
        expect(sps == 0, f"run {index}: a failed run has samples_per_second {sps}")
    summary = [l for l in stderr.splitlines() if "runs ok" in l]
    log("  summary: " + (summary[0].strip() if summary else "(none)"))
    expect(summary and "0/2 runs ok" in summary[0], "the summary does not count 0/2 runs ok")

    # `ddpscale train` says it too, and exits 1 because a run failed.
    train = Launch(ctx.mpirun, ctx.ddpscale, ["train", "-m", "mlp@100K", "--device", "cpu", "--optimizer", "sgd",
                                              "--lr", "1e30", "--warmup", "0", "--steps", "4", "--runs", "2"],
                   folder, name="train")
    train_code = train.wait(timeout=60)
    out = train.stdout()
    log(f"  train: exit {train_code}; " + "; ".join(l for l in out.splitlines() if "FAILED" in l or "summary" in l))
    expect(train_code == 1, f"train exit code {train_code}, expected 1")
    expect("run   0  FAILED: rank 0: non-finite loss (nan) at measured step 1" in out, out)
    expect("# summary: 0 of 2 runs ok" in out, out)


def test_diverged(ctx):
    need_h5py()
    folder = spec_folder(ctx, "diverged",
                         "name: diverged\nmodels: [mlp@100K]\nbatch_sizes: [8]\nworld_sizes: [2]\nruns: 3\n"
                         "warmup: 1\nsteps: 6\n")
    code, stderr = finished_sweep(ctx, folder, env={"DDPSCALE_FAULT_PERTURB_RANK": "1"})
    expect(code == 0, f"exit {code}:\n{stderr}")
    expect("fault injection: DDPSCALE_FAULT_PERTURB_RANK=1" in stderr, "the fault injection was not announced")
    files = config_files(os.path.join(folder, "study"))
    expect(len(files) == 1, f"expected one configuration file, found {files}")
    runs = read_runs(os.path.join(folder, "study", files[0]))
    log(f"  {files[0]}: " + "; ".join(f"run {i} {s} '{why}' {sps:.0f} samples/s" for i, s, why, sps in runs))
    expect([r[1] for r in runs] == ["failed", "ok", "ok"], f"statuses {[r[1] for r in runs]}")
    expect(runs[0][2].startswith("replicas diverged: the parameter checksum of rank(s) 1 differs from rank 0's"),
           f"failure text '{runs[0][2]}'")
    expect(runs[0][3] == 0 and runs[1][3] > 0 and runs[2][3] > 0, f"samples_per_second {[r[3] for r in runs]}")
    # The sweep's summary is the median over ok runs only: 2 of 3, and the failed run's
    # throughput (stored as 0) is not averaged in.
    summary = [l for l in stderr.splitlines() if "runs ok" in l]
    log("  summary: " + (summary[0].strip() if summary else "(none)"))
    expect(summary and "2/3 runs ok" in summary[0], "the summary does not count 2/3 runs ok")
    printed = float(re.search(r"([0-9.]+) samples/s", summary[0]).group(1))
    ok_median = statistics.median([r[3] for r in runs if r[1] == "ok"])
    all_median = statistics.median([r[3] for r in runs])
    log(f"  median samples/s: printed {printed}, of the ok runs {ok_median:.1f}, of all runs {all_median:.1f}")
    expect(abs(printed - ok_median) <= 0.051, f"printed median {printed} is not the ok runs' {ok_median:.1f}")


def test_oom_batch(ctx):
    """The CPU stand-in for "batch too large for device memory": a batch of 10^12 samples
    asks LibTorch's CPU allocator for 4 PB, more than the 128 TiB a process can address,
    so it fails the same on every machine, whatever its memory and overcommit setting."""
    need_h5py()
    # memory_check: false: the memory pre-flight would refuse the spec before any run; this
    # test is about an allocation that fails in the middle of a study.
    folder = spec_folder(ctx, "oom_batch",
                         "name: oom\nmodels: [mlp@100K]\nbatch_sizes: [1000000000000, 8]\nworld_sizes: [2]\n"
                         "runs: 2\nwarmup: 0\nsteps: 2\nmemory_check: false\n")
    code, stderr = finished_sweep(ctx, folder)
    expect(code == 3, f"the study must go on past the failed configuration and finish with exit 3 (a "
                      f"configuration without a successful run), got {code}:\n{stderr}")
    study = os.path.join(folder, "study")
    files = config_files(study)
    expect(len(files) == 2, f"expected both configurations stored, found {files}")
    big = [f for f in files if "_b1000000000000_" in f]
    small = [f for f in files if "_b8_" in f]
    expect(big and small, f"files {files}")
    big_runs = read_runs(os.path.join(study, big[0]))
    small_runs = read_runs(os.path.join(study, small[0]))
    log(f"  {big[0]}: " + "; ".join(f"run {i} {st} '{why[:110]}...'" for i, st, why, _ in big_runs))
    log(f"  {small[0]}: " + ", ".join(f"run {i} {st}" for i, st, _, _ in small_runs))
    for index, status, failure, sps in big_runs:
        expect(status == "failed" and sps == 0, f"run {index}: {status} {sps}")
        expect(re.match(r"rank \d: out of memory at batch 1000000000000 per rank \(global 2000000000000\): .*"
                        r"can't allocate memory", failure), f"run {index}: failure text '{failure}'")
    expect([r[1] for r in small_runs] == ["ok", "ok"], f"the next configuration: {small_runs}")
    expect("0/2 runs ok" in stderr and "2/2 runs ok" in stderr, f"summaries:\n{stderr}")


# ---------------------------------------------------------------------------------------
# A write error while storing


def test_disk_full(ctx):
    # Two world-1 configurations, both stored by rank 0: the first file is small (10 steps,
    # about 25 KB with its instruments and gradient timing), the second larger (400 steps of
    # float32 phase times per run, over 40 KB); the file-size limit lies between them.
    folder = spec_folder(ctx, "disk_full",
                         "name: disk\nmodels: [mlp@100K, mlp@200K]\nbatch_sizes: [8]\nworld_sizes: [1]\nruns: 2\n"
                         "warmup: 0\nsteps: 10\noverrides:\n  - models: [mlp@200K]\n    steps: 400\n")
    args = SWEEP_ARGS
    limit = 32 * 1024
    launch = Launch(ctx.mpirun, ctx.ddpscale, args, folder, name="sweep")
    # RLIMIT_FSIZE (what `ulimit -f` sets) on rank 0 alone, once MPI is up: set on mpirun it
    # would also cap Open MPI's shared-memory files (PMIx and the vader segments), and the
    # launch would fail before ddpscale wrote anything.
    wait_until(lambda: "configurations (0 already done)" in launch.stderr() or launch.process.poll() is not None,
               60, "the sweep's start line")
    expect(launch.process.poll() is None, f"the sweep ended early:\n{launch.stderr()}")
    rank0 = rank_processes(launch.tag)[0]
    resource.prlimit(rank0, resource.RLIMIT_FSIZE, (limit, limit))
    code = launch.wait(timeout=180)
    stderr = launch.stderr()
    study = os.path.join(folder, "study")
    kept = config_files(study)
    tmp = files_under(study, "*.tmp")
    ours = [l for l in stderr.splitlines() if l.startswith("ddpscale sweep:")]
    log(f"  RLIMIT_FSIZE {limit // 1024} KiB on rank 0: exit {code}; kept {kept}; tmp {tmp}")
    log("  message: " + (ours[0] if ours else "(none)"))
    expect(code == 1, f"exit code {code}, expected 1 (a file could not be written):\n{stderr}")
    expect(len(kept) == 1 and kept[0].startswith("mlp-100K_"), f"expected the first configuration only: {kept}")
    expect(os.path.getsize(os.path.join(study, kept[0])) < limit, "the kept file is over the limit?")
    expect(not tmp, f"temporary file left: {tmp}")
    expect(ours and re.search(r"study/mlp-200K_\S*\.h5: .*File too large", ours[0]),
           f"the error does not name the second configuration's file and the cause:\n{stderr}")
    if h5py is not None:
        runs = read_runs(os.path.join(study, kept[0]))
        expect([r[1] for r in runs] == ["ok"] * 2, f"{kept[0]}: {runs}")
    # Without the limit, --resume keeps the first file and completes the study.
    resume = Launch(ctx.mpirun, ctx.ddpscale, args + ["--resume"], folder, name="resume")
    resume_code = resume.wait(timeout=180)
    expect(resume_code == 0 and "(1 already done)" in resume.stderr(), f"--resume: {resume.stderr()}")
    expect(len(config_files(study)) == 2, f"after --resume: {config_files(study)}")
    log("  --resume without the limit: exit 0, 1 already done, 2 configurations")


# ---------------------------------------------------------------------------------------
# Bounded waits in a sweep (docs/reliability.md, "Bounded waits")


def test_sweep_barrier_stall(ctx):
    """DDPSCALE_FAULT_STALL_RANK=1 stops rank 1 (alive, silent) just before the sweep's barrier
    after the first stored configuration: rank 0, which trained that configuration with it and
    then stored it, must give up after --comm-timeout with a FATAL line naming the barrier,
    and the job must be gone within --comm-timeout + 10 s of the stall."""
    timeout_s = 4
    folder = spec_folder(ctx, "sweep_barrier_stall", "name: stall\nmodels: [mlp@100K]\nbatch_sizes: [8]\n"
                                                     "world_sizes: [2]\nruns: 1\nwarmup: 0\nsteps: 5\n")
    launch = Launch(ctx.mpirun, ctx.ddpscale, SWEEP_ARGS + ["--comm-timeout", str(timeout_s)], folder, name="sweep",
                    env={"DDPSCALE_FAULT_STALL_RANK": "1"})
    try:
        wait_until(lambda: "rank 1 stalls now" in launch.stderr() or launch.process.poll() is not None, 60,
                   "rank 1's stall")
        stalled_at = time.monotonic()
        code = launch.wait(timeout=timeout_s + 30)
        gone = launch.wait_for_processes_gone(timeout=30) - (stalled_at - launch.start)
    finally:
        launch.kill_all()
    stderr = launch.stderr()
    fatal = [l for l in stderr.splitlines() if re.match(r"\[ddpscale rank 0 on [^\]]+\] FATAL:", l)]
    log(f"  rank 1 stalled before the barrier: mpirun exit {code}, every process gone {gone:.2f} s later "
        f"(--comm-timeout {timeout_s} s)")
    log("  message: " + (fatal[0] if fatal else "(none)"))
    expect("fault injection: DDPSCALE_FAULT_STALL_RANK=1" in stderr, f"the fault injection was not announced:\n{stderr}")
    expect(code != 0, "mpirun exited 0 although a rank was stuck")
    expect(fatal, f"rank 0 printed no FATAL line:\n{stderr}")
    expected = (r"FATAL: sweep barrier after configuration mlp-100K_b8_w2_\S+ was stored failed: no completion "
                rf"within --comm-timeout \({timeout_s} s\): a peer rank is gone or stuck; the job is aborted")
    expect(re.search(expected, fatal[0]), f"the FATAL line does not name the barrier and the time-out: {fatal[0]}")
    # Rank 0 first stores the configuration, then waits --comm-timeout; MPI_Abort and
    # mpirun's clean-up follow. Not earlier than the time-out either: the bound must not cut
    # a wait short.
    expect(timeout_s - 0.5 <= gone <= timeout_s + 10,
           f"processes left {gone:.1f} s after the stall, expected between {timeout_s} and {timeout_s + 10} s")


def test_sweep_long_idle_wait(ctx):
    """A 1-rank configuration whose run lasts far longer than --comm-timeout (1 s): rank 1,
    idle, waits in the sweep's barrier all that time and must not be killed for it; the
    study completes (exit 0) and no FATAL line appears. How long a run lasts depends on the
    CPU (15 steps took 2.0 s on one machine, more on another), so the steps are quadrupled
    until the configuration lasts more than 3 time-outs."""
    timeout_s = 1
    for steps in (15, 60, 240, 960):
        folder = spec_folder(ctx, f"sweep_long_idle_wait_{steps}", "name: long\nmodels: [mlp@10M]\nbatch_sizes: [64]\n"
                             f"world_sizes: [1]\nruns: 1\nwarmup: 0\nsteps: {steps}\n")
        launch = Launch(ctx.mpirun, ctx.ddpscale, SWEEP_ARGS + ["--comm-timeout", str(timeout_s)], folder,
                        name=f"sweep-{steps}")
        wait_until(lambda: "configurations (0 already done)" in launch.stderr() or launch.process.poll() is not None,
                   60, "the sweep's start line")
        started_at = time.monotonic()
        code = launch.wait(timeout=180)
        waited = time.monotonic() - started_at
        stderr = launch.stderr()
        log(f"  rank 1 idle through a 1-rank configuration of {steps} steps: exit {code} after {waited:.1f} s of runs "
            f"(--comm-timeout {timeout_s} s)")
        expect(code == 0, f"the sweep failed ({code}):\n{stderr}")
        expect("FATAL" not in stderr, f"a FATAL line although nothing was stuck:\n{stderr}")
        if waited > 3 * timeout_s:
            return
    expect(False, f"even {steps} steps took only {waited:.1f} s, not clearly beyond --comm-timeout {timeout_s} s: "
                  "the test shows nothing")


# ---------------------------------------------------------------------------------------
# Memory pre-flight (docs/methodology.md, "Memory pre-flight")


def test_memory_preflight(ctx):
    """transformer@2B (about 32 GB of weights, gradients and Adam state per rank, 2 ranks on
    this host) is refused before any allocation: exit 2 within 5 s of the ranks' start, one line with the
    estimate and the free memory, not OOM-killed; a sweep naming it among fitting
    configurations is refused before its first run; --no-memory-check lets a small model
    through."""
    # What starting the same ranks costs on this machine now (LibTorch's load, MPI's start; seconds
    # on a loaded 2-core machine): the refusal may take that and 5 s more, far less than
    # allocating and initialising 32 GB would.
    startup = Launch(ctx.mpirun, ctx.ddpscale, ["info"], ctx.workdir, name="startup")
    startup.wait(timeout=60)
    launch = Launch(ctx.mpirun, ctx.ddpscale, ["train", "-m", "transformer@2B", "--device", "cpu"], ctx.workdir,
                    name="train_2b")
    code = launch.wait(timeout=60)
    elapsed = launch.elapsed
    gone = launch.wait_for_processes_gone(timeout=10)
    stderr = launch.stderr()
    ours = [l for l in stderr.splitlines() if l.startswith("ddpscale train:")]
    log(f"  train -m transformer@2B: exit {code} after {elapsed:.2f} s (all processes gone at {gone:.2f} s; "
        f"`info` on the same ranks {startup.elapsed:.2f} s)")
    log("  message: " + (ours[0] if ours else "(none)"))
    expect(code == 2, f"exit code {code}, expected 2 (refused; 137 would be the OOM killer):\n{stderr}")
    expect(len(ours) == 1, f"expected exactly one 'ddpscale train:' line:\n{stderr}")
    expect(re.search(r"transformer@2B at batch 32 per rank \(adam\) does not fit in memory: it needs an estimated "
                     r"[\d.]+ GiB per rank x 2 ranks sharing it = [\d.]+ GiB \(weights [\d.]+ GiB, gradients "
                     r"[\d.]+ GiB, optimizer state [\d.]+ GiB, .*\), but host \S+ \((MemAvailable|cgroup).*\) has "
                     r"[\d.]+ GiB free; use a smaller model or batch, .*--no-memory-check", ours[0]),
           f"the message lacks the estimate, the free memory or the advice: {ours[0]}")
    expect("# ddpscale train:" not in launch.stdout(), "training started")
    expect(elapsed < startup.elapsed + 5,
           f"the refusal took {elapsed:.2f} s, more than 5 s beyond the ranks' start ({startup.elapsed:.2f} s)")

    folder = spec_folder(ctx, "memory_sweep", "name: mem\nmodels: [mlp@100K, transformer@2B]\nbatch_sizes: [8]\n"
                                              "world_sizes: [2]\nruns: 1\nwarmup: 0\nsteps: 2\n")
    code, stderr = finished_sweep(ctx, folder)
    ours = [l for l in stderr.splitlines() if l.startswith("ddpscale sweep:")]
    log(f"  sweep with transformer@2B: exit {code}; " + (ours[0][:160] if ours else "(none)") + "...")
    expect(code == 2 and ours and "1 of 2 configurations do not fit in memory (transformer@2B batch 8 world 2)"
           in ours[0], f"the sweep was not refused naming transformer@2B:\n{stderr}")
    expect(not os.path.exists(os.path.join(folder, "study")), "the refused sweep created its --out folder")

    launch = Launch(ctx.mpirun, ctx.ddpscale, ["train", "-m", "mlp@100K", "--device", "cpu", "--runs", "1",
                                               "--warmup", "0", "--steps", "2", "--no-memory-check"], ctx.workdir,
                    name="train_unchecked")
    code = launch.wait(timeout=60)
    log(f"  train -m mlp@100K --no-memory-check: exit {code}")
    expect(code == 0 and "1 of 1 runs ok" in launch.stdout(), f"--no-memory-check run failed ({code}):\n"
                                                             f"{launch.stdout()}\n{launch.stderr()}")


TESTS = {
    "kill_rank": test_kill_rank,
    "stuck_rank": test_stuck_rank,
    "signal_mpirun_int": test_signal_mpirun_int,
    "signal_mpirun_term": test_signal_mpirun_term,
    "signal_ranks_term": test_signal_ranks_term,
    "nan_loss": test_nan_loss,
    "diverged": test_diverged,
    "oom_batch": test_oom_batch,
    "disk_full": test_disk_full,
    "sweep_barrier_stall": test_sweep_barrier_stall,
    "sweep_long_idle_wait": test_sweep_long_idle_wait,
    "memory_preflight": test_memory_preflight,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ddpscale", required=True)
    parser.add_argument("--mpirun", required=True, help="mpirun and its options, as one string")
    parser.add_argument("--workdir", help="keep the folders here (default: a temporary folder, removed on success)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="where kill_rank and stuck_rank train: cpu (MPI backend) or cuda (NCCL backend)")
    parser.add_argument("tests", nargs="+", choices=sorted(TESTS) + ["all"])
    ctx = parser.parse_args()
    ctx.mpirun = shlex.split(ctx.mpirun)
    ctx.ddpscale = os.path.abspath(ctx.ddpscale)
    names = sorted(TESTS) if "all" in ctx.tests else ctx.tests
    root = ctx.workdir or tempfile.mkdtemp(prefix="ddpscale-reliability-faults-")
    passed = failed = skipped = 0
    for name in names:
        ctx.workdir = os.path.join(root, name)
        shutil.rmtree(ctx.workdir, ignore_errors=True)
        os.makedirs(ctx.workdir)
        start = time.monotonic()
        log(f"== {name}")
        try:
            TESTS[name](ctx)
            log(f"ok     {name} ({time.monotonic() - start:.1f} s)")
            passed += 1
        except Skip as e:
            log(f"SKIPPED: {name}: {e}")
            skipped += 1
        except AssertionError as e:
            log(f"FAILED {name} ({time.monotonic() - start:.1f} s): {e}")
            failed += 1
    log(f"{passed} passed, {failed} failed, {skipped} skipped")
    if failed == 0 and not parser.parse_args().workdir:
        shutil.rmtree(root, ignore_errors=True)
    if failed:
        return 1
    return 77 if skipped and not passed else 0


if __name__ == "__main__":
    sys.exit(main())
