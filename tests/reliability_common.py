"""Shared helpers of the reliability tests (tests/reliability_cases.py, reliability_faults.py):
launching `ddpscale` under mpirun with a tag in the environment, so that every process of
the launch can be found afterwards in /proc (to kill one rank, and to prove none is left).
Standard library only.
"""
import glob
import os
import signal
import subprocess
import time
import uuid

TAG_VARIABLE = "DDPSCALE_RELIABILITY_TAG"


def tagged_processes(tag):
    """PID -> environment (dict) of every live process whose environment carries the tag."""
    found = {}
    for entry in glob.glob("/proc/[0-9]*/environ"):
        try:
            with open(entry, "rb") as f:
                raw = f.read()
        except OSError:
            continue  # gone meanwhile, or not ours to read
        needle = f"{TAG_VARIABLE}={tag}".encode()
        if needle not in raw.split(b"\0"):
            continue
        pid = int(entry.split("/")[2])
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state == b"Z":  # a zombie is already dead, waiting for its parent to reap it
            continue
        env = {}
        for item in raw.split(b"\0"):
            key, sep, value = item.partition(b"=")
            if sep:
                env[key.decode(errors="replace")] = value.decode(errors="replace")
        found[pid] = env
    return found


# A rank is started as `ddpscale` and, for every command that trains, becomes `ddpscale-torch`
# by exec (same PID): either name is a rank of the launch.
RANK_EXECUTABLES = ("ddpscale", "ddpscale-torch")


def rank_processes(tag, executables=RANK_EXECUTABLES):
    """World rank -> PID of the ddpscale processes of one launch (mpirun itself has no rank)."""
    ranks = {}
    for pid, env in tagged_processes(tag).items():
        rank = env.get("OMPI_COMM_WORLD_RANK")
        if rank is None:
            continue
        try:
            exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
        except OSError:
            continue
        if exe in executables:
            ranks[int(rank)] = pid
    return ranks


class Launch:
    """One `mpirun -np N ddpscale ...` in its own session, its output in files."""

    def __init__(self, mpirun, ddpscale, args, workdir, ranks=2, env=None, name="launch"):
        self.tag = uuid.uuid4().hex
        self.stdout_path = os.path.join(workdir, f"{name}.stdout")
        self.stderr_path = os.path.join(workdir, f"{name}.stderr")
        command = list(mpirun) + ["-np", str(ranks), ddpscale] + list(args)
        full_env = dict(os.environ)
        full_env.update(env or {})
        full_env[TAG_VARIABLE] = self.tag
        full_env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        self.command = command
        self.out = open(self.stdout_path, "wb")
        self.err = open(self.stderr_path, "wb")
        self.start = time.monotonic()
        self.process = subprocess.Popen(command, stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL,
                                        cwd=workdir, env=full_env, start_new_session=True)
        self.returncode = None
        self.elapsed = None

    def wait(self, timeout):
        """Waits up to `timeout` s from now; on time-out kills everything tagged and raises."""
        try:
            self.returncode = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill_all()
            raise AssertionError(f"still running after {timeout:.0f} s: {' '.join(self.command)}\n"
                                 f"stderr:\n{self.stderr()}")
        finally:
            self.elapsed = time.monotonic() - self.start
            self.out.close()
            self.err.close()
        return self.returncode

    def wait_for_processes_gone(self, timeout):
        """Seconds until no process of this launch is left (mpirun's children included)."""
        deadline = time.monotonic() + timeout
        while True:
            left = tagged_processes(self.tag)
            if not left:
                return time.monotonic() - self.start
            if time.monotonic() > deadline:
                self.kill_all()
                raise AssertionError(f"processes of the launch still alive {timeout:.0f} s after it ended: "
                                     f"{sorted(left)}")
            time.sleep(0.05)

    def kill_all(self):
        """Clean-up after a failed assertion: SIGKILL to this launch's own processes, by PID."""
        for pid in tagged_processes(self.tag):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def stdout(self):
        with open(self.stdout_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stderr(self):
        with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
            return f.read()


def wait_until(predicate, timeout, what, poll=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def files_under(directory, pattern):
    return sorted(os.path.relpath(p, directory)
                  for p in glob.glob(os.path.join(directory, "**", pattern), recursive=True))
