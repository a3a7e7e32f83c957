#!/usr/bin/python3
"""Checks a study folder written by `ddpscale sweep` with h5py and numpy only, against the
grid its spec expands to and against docs/hdf5-schema.md.

  check_study.py check DIR --models A,B --batches 8,64 --worlds 1,2 --runs N --warmup N --steps N
                 [--seed S] [--commbench | --no-commbench]
  check_study.py compare REFERENCE DIR     same configuration files, same runs, nothing extra

`check` asserts: exactly the expected configurations (model x batch x world), one file per
launch of each (--launches), each file complete and readable, the launch's share of `runs`
runs (indices 0..runs-1 over all launches, once each) with status ok, phase_us of shape
[world_size][7][steps], finite timings, one positive host-drift calibration reading per
rank (calibration_host_us [world_size][1]), and samples_per_second equal to
global_batch * steps / max(wall_seconds) -- the formula of trainer/study/config_runner.cpp
(global batch over the slowest rank's wall time of the measured steps). study.h5 must hold
/metadata and (unless --no-commbench) /commbench. Neither folder may hold a *.tmp file.

Exit 0: all good; 1: a check failed (every failure is printed); 77: h5py or numpy missing.
"""
import argparse
import math
import os
import re
import sys

try:
    import h5py
    import numpy as np
except ImportError as missing:
    print(f"SKIPPED: {missing} (Debian: apt-get install python3-h5py python3-numpy)")
    sys.exit(77)

PHASES = ["data", "forward", "backward", "allreduce_total", "allreduce_exposed", "optimizer", "step"]
# samples_per_second and max(wall_seconds) are the same float64 values the trainer used,
# so the relation holds to rounding; 1e-9 relative leaves room for nothing else.
REL_TOL = 1e-9


class Failures:
    def __init__(self):
        self.messages = []

    def fail(self, message):
        self.messages.append(message)

    def expect(self, condition, message):
        if not condition:
            self.fail(message)
        return condition

    def report(self, what):
        if self.messages:
            print(f"FAIL: {what}: {len(self.messages)} problem(s)")
            for m in self.messages[:200]:
                print(f"  - {m}")
            if len(self.messages) > 200:
                print(f"  ... and {len(self.messages) - 200} more")
            return 1
        print(f"OK: {what}")
        return 0


def text(value):
    return value.decode("utf-8") if isinstance(value, (bytes, np.bytes_)) else str(value)


def attrs_dict(node):
    return {k: (text(v) if isinstance(v, (bytes, np.bytes_)) else v) for k, v in node.attrs.items()}


def tmp_files(directory):
    found = []
    for root, _dirs, files in os.walk(directory):
        found += [os.path.join(root, f) for f in files if f.endswith(".tmp")]
    return sorted(found)


def config_files(directory):
    return sorted(f for f in os.listdir(directory) if f.endswith(".h5") and f != "study.h5")


def check_root(f, kind, failures, name):
    a = attrs_dict(f)
    failures.expect(a.get("schema") == "ddpscale-run-store", f"{name}: schema is {a.get('schema')!r}")
    failures.expect(a.get("schema_version") == 1, f"{name}: schema_version is {a.get('schema_version')!r}")
    failures.expect(a.get("kind") == kind, f"{name}: kind is {a.get('kind')!r}, expected {kind!r}")
    failures.expect(a.get("complete") == 1, f"{name}: complete is {a.get('complete')!r}, expected 1")


def check_study_file(path, commbench, failures):
    name = os.path.basename(os.path.dirname(path)) + "/study.h5"
    if not failures.expect(os.path.isfile(path), f"{name}: missing"):
        return
    try:
        with h5py.File(path, "r") as f:
            check_root(f, "study", failures, name)
            if failures.expect("metadata" in f, f"{name}: no /metadata group"):
                m = attrs_dict(f["metadata"])
                for key in ["tool_version", "git_commit", "command_line", "spec_text", "created_utc", "mpi_version",
                            "torch_version", "hdf5_version", "hostnames", "gpu_names"]:
                    failures.expect(key in m, f"{name}: /metadata has no attribute {key}")
                failures.expect("sweep" in text(m.get("command_line", "")),
                                f"{name}: command_line {m.get('command_line')!r} is not a sweep command")
                failures.expect(len(text(m.get("spec_text", ""))) > 0, f"{name}: spec_text is empty")
                failures.expect(len(m.get("hostnames", [])) >= 1, f"{name}: no hostnames")
            if commbench:
                if failures.expect("commbench" in f, f"{name}: no /commbench group"):
                    c = f["commbench"]
                    columns = {}
                    for key in ["bytes", "time_us", "algbw_gbs", "busbw_gbs"]:
                        if failures.expect(key in c, f"{name}: /commbench/{key} missing"):
                            columns[key] = np.asarray(c[key][()], dtype=np.float64)
                    rows = {len(v) for v in columns.values()}
                    failures.expect(len(rows) == 1 and rows.pop() > 0, f"{name}: /commbench columns empty or unequal")
                    if "time_us" in columns:
                        failures.expect(bool(np.all(np.isfinite(columns["time_us"])) and
                                             np.all(columns["time_us"] > 0)),
                                        f"{name}: /commbench/time_us not all positive: {columns['time_us']}")
                    if "bytes" in columns:
                        failures.expect(bool(np.all(np.diff(columns["bytes"]) > 0)),
                                        f"{name}: /commbench/bytes not increasing: {columns['bytes']}")
    except (OSError, KeyError) as e:
        failures.fail(f"{name}: unreadable: {e}")


def check_run(run, params, name, failures):
    """One run group against the schema and the trainer's throughput formula."""
    world = int(params["world_size"])
    steps = int(params["measured_steps"])
    a = attrs_dict(run)
    failures.expect(a.get("status") == "ok", f"{name}: status {a.get('status')!r}, failure {a.get('failure')!r}")
    failures.expect(a.get("failure", "") == "", f"{name}: failure text {a.get('failure')!r} on an ok run")
    for key in ["phase_us", "phase_steps", "wall_seconds", "loss", "peak_memory_bytes"]:
        if not failures.expect(key in run, f"{name}: dataset {key} missing"):
            return
    phase = run["phase_us"]
    failures.expect(phase.shape == (world, 7, steps),
                    f"{name}: phase_us shape {phase.shape}, expected [world_size][7][steps] = {(world, 7, steps)}")
    failures.expect([text(p) for p in phase.attrs.get("phases", [])] == PHASES,
                    f"{name}: phase_us phases attribute {list(phase.attrs.get('phases', []))}")
    values = phase[()]
    failures.expect(bool(np.all(np.isfinite(values))) and bool(np.all(values >= 0)),
                    f"{name}: phase_us holds NaN or negative times")
    failures.expect(bool(np.all(values[:, 6, :] > 0)), f"{name}: a step time is zero")
    failures.expect(list(run["phase_steps"][()]) == [steps] * world,
                    f"{name}: phase_steps {list(run['phase_steps'][()])}, expected {[steps] * world}")
    if failures.expect("calibration_host_us" in run and "calibration_host_us_count" in run,
                       f"{name}: the host-drift calibration (calibration_host_us) is missing"):
        calibration = run["calibration_host_us"][()]
        failures.expect(calibration.shape == (world, 1) and list(run["calibration_host_us_count"][()]) == [1] * world
                        and bool(np.all(np.isfinite(calibration))) and bool(np.all(calibration > 0)),
                        f"{name}: calibration_host_us {calibration.tolist()} is not one positive reading per rank")
    loss = run["loss"][()]
    # One loss per step, or (graph mode, attribute loss_every k) one per block of k steps.
    every = int(a.get("loss_every", 1))
    kept = -(-steps // every)
    failures.expect(every >= 1 and loss.shape == (kept,) and bool(np.all(np.isfinite(loss))),
                    f"{name}: loss shape {loss.shape} (expected ({kept},): loss_every {every}) or non-finite values")
    wall = np.asarray(run["wall_seconds"][()], dtype=np.float64)
    if not failures.expect(wall.shape == (world,) and bool(np.all(wall > 0)),
                           f"{name}: wall_seconds {wall} (expected {world} positive values)"):
        return
    sps = float(a.get("samples_per_second", float("nan")))
    expected = float(params["global_batch"]) * steps / float(np.max(wall))
    failures.expect(sps > 0, f"{name}: samples_per_second {sps} not positive")
    failures.expect(math.isclose(sps, expected, rel_tol=REL_TOL),
                    f"{name}: samples_per_second {sps!r} != global_batch {params['global_batch']} * steps {steps}"
                    f" / max(wall_seconds) {float(np.max(wall))!r} = {expected!r}")


def check_config_file(path, expect, failures):
    """Returns (model, batch, world) of a readable configuration file, or None."""
    name = os.path.basename(path)
    try:
        with h5py.File(path, "r") as f:
            check_root(f, "configuration", failures, name)
            root = attrs_dict(f)
            launches, launch = int(root.get("launches", 1)), int(root.get("launch", 0))
            stem = root.get("config_id") + (f".launch-{launch + 1}-of-{launches}" if launches > 1 else "")
            failures.expect(stem == name[:-3],
                            f"{name}: config_id attribute {root.get('config_id')!r} (launch {launch + 1} of {launches})"
                            " does not name this file")
            failures.expect(launches == expect.launches, f"{name}: launches {launches}, spec says {expect.launches}")
            # Which build measured it and when: a resumed study can mix builds.
            failures.expect(re.fullmatch(r"[0-9a-f]{7,40}(-modified)?|unknown", root.get("git_commit", "")) is not None,
                            f"{name}: git_commit attribute {root.get('git_commit')!r} is not a commit")
            failures.expect(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", root.get("finished_utc", "")) is not None,
                            f"{name}: finished_utc attribute {root.get('finished_utc')!r} is not an ISO 8601 UTC time")
            p = attrs_dict(f["params"])
            key = (p["model"], int(p["batch_per_rank"]), int(p["world_size"]))
            world = key[2]
            failures.expect(int(p["global_batch"]) == key[1] * world,
                            f"{name}: global_batch {p['global_batch']} != batch_per_rank * world_size (weak scaling)")
            failures.expect(p.get("scaling") == "weak", f"{name}: scaling {p.get('scaling')!r}")
            failures.expect(int(p["parameters"]) > 0, f"{name}: parameters {p['parameters']}")
            backends = ("none",) if world == 1 else ("mpi", "nccl")
            failures.expect(p.get("backend") in backends, f"{name}: backend {p.get('backend')!r} for world size {world}")
            for attr, wanted in [("runs", expect.runs), ("warmup_steps", expect.warmup),
                                 ("measured_steps", expect.steps), ("seed", expect.seed)]:
                if wanted is not None:
                    failures.expect(int(p[attr]) == wanted, f"{name}: {attr} {p[attr]}, spec says {wanted}")
            runs = f["runs"]
            indices = sorted(int(r.attrs["index"]) for r in runs.values())
            # launch k of n takes its share of the runs, as trainer/study/launch_driver.cpp splits them
            total = int(p["runs"])
            base, extra = divmod(total, launches)
            first = launch * base + min(launch, extra)
            share = list(range(first, first + base + (1 if launch < extra else 0)))
            failures.expect(indices == share, f"{name}: run indices {indices}, expected {share} once each")
            for group_name, run in runs.items():
                index = int(run.attrs["index"])
                failures.expect(group_name == f"run_{index:04d}", f"{name}: group {group_name} holds run {index}")
                failures.expect(int(run.attrs["seed"]) == int(p["seed"]) + index,
                                f"{name}: run {index} seed {run.attrs['seed']}, expected seed + index")
                check_run(run, p, f"{name} {group_name}", failures)
            return key + (launch,)
    except (OSError, KeyError, ValueError) as e:
        failures.fail(f"{name}: unreadable or incomplete: {type(e).__name__}: {e}")
        return None


def check(args):
    failures = Failures()
    directory = args.dir
    if not os.path.isdir(directory):
        print(f"FAIL: study folder {directory} does not exist")
        return 1
    for t in tmp_files(directory):
        failures.fail(f"leftover temporary file {t}")
    wanted = {(m, b, w, k) for m in args.models for b in args.batches for w in args.worlds
              for k in range(args.launches)}
    found = {}
    for name in config_files(directory):
        key = check_config_file(os.path.join(directory, name), args, failures)
        if key is None:
            continue
        if key in found:
            failures.fail(f"configuration {key} is stored twice: {found[key]} and {name}")
        found[key] = name
    for key in sorted(wanted - found.keys()):
        failures.fail(f"configuration model={key[0]} batch={key[1]} world={key[2]} launch {key[3] + 1} has no file")
    for key in sorted(found.keys() - wanted):
        failures.fail(f"unexpected configuration file {found[key]} ({key})")
    check_study_file(os.path.join(directory, "study.h5"), args.commbench, failures)
    return failures.report(f"{directory}: {len(found)} configuration files, expected {len(wanted)}")


def run_signature(path):
    """What must agree between two studies of one spec: parameters and run indices."""
    with h5py.File(path, "r") as f:
        p = attrs_dict(f["params"])
        params = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in p.items()}
        runs = sorted(int(r.attrs["index"]) for r in f["runs"].values())
        statuses = sorted(text(r.attrs["status"]) for r in f["runs"].values())
        groups = len(f["runs"])
    return params, runs, statuses, groups


def compare(args):
    failures = Failures()
    for d in (args.reference, args.dir):
        if not os.path.isdir(d):
            print(f"FAIL: study folder {d} does not exist")
            return 1
        for t in tmp_files(d):
            failures.fail(f"leftover temporary file {t}")
    ref_files, files = config_files(args.reference), config_files(args.dir)
    for name in sorted(set(ref_files) - set(files)):
        failures.fail(f"{args.dir} lacks {name}")
    for name in sorted(set(files) - set(ref_files)):
        failures.fail(f"{args.dir} has {name}, which the uninterrupted study does not")
    for name in sorted(set(ref_files) & set(files)):
        try:
            ref = run_signature(os.path.join(args.reference, name))
            got = run_signature(os.path.join(args.dir, name))
        except (OSError, KeyError) as e:
            failures.fail(f"{name}: unreadable: {e}")
            continue
        failures.expect(got[0] == ref[0], f"{name}: parameters differ: {got[0]} vs {ref[0]}")
        failures.expect(got[3] == ref[3], f"{name}: {got[3]} run groups, uninterrupted study has {ref[3]}")
        failures.expect(got[1] == ref[1], f"{name}: run indices {got[1]}, uninterrupted study has {ref[1]}")
        failures.expect(len(set(got[1])) == len(got[1]), f"{name}: duplicated run indices {got[1]}")
        failures.expect(got[2] == ref[2], f"{name}: run statuses {got[2]} vs {ref[2]}")
    for d in (args.reference, args.dir):
        if not os.path.isfile(os.path.join(d, "study.h5")):
            failures.fail(f"{d}/study.h5 missing")
    return failures.report(f"{args.dir} against {args.reference} ({len(ref_files)} configuration files)")


def int_list(value):
    return [int(v) for v in value.split(",") if v]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check")
    c.add_argument("dir")
    c.add_argument("--models", type=lambda v: [m for m in v.split(",") if m], required=True)
    c.add_argument("--batches", type=int_list, required=True)
    c.add_argument("--worlds", type=int_list, required=True)
    c.add_argument("--runs", type=int, required=True)
    c.add_argument("--warmup", type=int)
    c.add_argument("--steps", type=int, required=True)
    c.add_argument("--seed", type=int)
    c.add_argument("--launches", type=int, default=1, help="launches of the study (files per configuration)")
    c.add_argument("--commbench", dest="commbench", action="store_true", default=True)
    c.add_argument("--no-commbench", dest="commbench", action="store_false")
    m = sub.add_parser("compare")
    m.add_argument("reference")
    m.add_argument("dir")
    args = parser.parse_args()
    return check(args) if args.command == "check" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
