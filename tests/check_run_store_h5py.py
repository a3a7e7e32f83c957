#!/usr/bin/python3
"""Reads the sample study written by write_sample_store with h5py and numpy only, as a user
would, and checks the known values of tests/sample_records.hpp.

Usage: /usr/bin/python3 check_run_store_h5py.py DIR   (exit 77: h5py or numpy missing)
"""
import glob
import math
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError as missing:
    print(f"SKIPPED: {missing} (Debian: apt-get install python3-h5py)")
    sys.exit(77)


def text(value):
    """Fixed-length strings come back from h5py as numpy.bytes_; they are UTF-8."""
    assert isinstance(value, (bytes, str)), f"not a string: {value!r}"
    return value.decode("utf-8") if isinstance(value, bytes) else value


def expect(actual, expected, what):
    # Exact, floats included: the sample study writes these values and h5py reads the same
    # bits back (the phase times are whole microseconds, exact in float32).
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, read {actual!r}")


def sample_phase_us(k, r, p, s):
    """The same formula as sample_phase_us in tests/sample_records.hpp."""
    return 100.0 * (p + 1) + 10.0 * s + r + 1000.0 * k


def check_root(f, kind):
    expect(text(f.attrs["schema"]), "ddpscale-run-store", f"{f.filename} schema")
    expect(int(f.attrs["schema_version"]), 1, f"{f.filename} schema_version")
    expect(text(f.attrs["kind"]), kind, f"{f.filename} kind")
    expect(int(f.attrs["complete"]), 1, f"{f.filename} complete")


# The example of docs/hdf5-schema.md, minus pandas (not installed here): one row per run,
# the configuration's parameters plus the run's status, throughput and median step time
# of the slowest rank. Keep the two in step.
def run_rows(path):
    with h5py.File(path, "r") as f:
        p = {k: v.decode() if isinstance(v, bytes) else v for k, v in f["params"].attrs.items()}
        return [dict(p, run=int(r.attrs["index"]), status=r.attrs["status"].decode(),
                     samples_per_second=float(r.attrs["samples_per_second"]),
                     step_us=float(np.median(r["phase_us"][:, 6, :].max(axis=0)))) for r in f["runs"].values()]


def check_documented_example(path):
    rows = run_rows(path)
    expect([(r["run"], r["status"], r["samples_per_second"], r["step_us"]) for r in rows],
           [(0, "ok", 1000.0, 721.0), (1, "failed", 0.0, 1721.0), (2, "ok", 1020.0, 2721.0)], "documented example rows")
    expect({(r["model"], r["world_size"], r["dtype"]) for r in rows}, {("mlp-medium", 2, "float32")},
           "documented example parameters")


def check_configuration(path):
    with h5py.File(path, "r") as f:
        check_root(f, "configuration")
        expect(text(f.attrs["config_id"]), "mlp-medium_b32_w2_sample", "config_id")
        params = f["params"].attrs
        expect(text(params["model"]), "mlp-medium", "params.model")
        expect(int(params["parameters"]), 258432, "params.parameters")
        expect(int(params["batch_per_rank"]), 32, "params.batch_per_rank")
        expect(int(params["world_size"]), 2, "params.world_size")
        expect(text(params["backend"]), "mpi", "params.backend")
        expect(float(params["learning_rate"]), 1e-3, "params.learning_rate")
        expect(int(params["seed"]), 42, "params.seed")
        expect(text(f["params/nccl_variables"].attrs["NCCL_ALGO"]), "Tree", "NCCL_ALGO")

        expect(sorted(f["runs"].keys()), ["run_0000", "run_0001", "run_0002"], "run groups")
        for k in range(3):
            run = f[f"runs/run_{k:04d}"]
            expect(int(run.attrs["index"]), k, f"run {k} index")
            expect(int(run.attrs["seed"]), 42 + k, f"run {k} seed")
            phases = run["phase_us"]
            expect(phases.shape, (2, 7, 5), f"run {k} phase_us shape")
            expect(phases.dtype, np.dtype("float32"), f"run {k} phase_us dtype")
            expect([text(p) for p in phases.attrs["phases"]],
                   ["data", "forward", "backward", "allreduce_total", "allreduce_exposed", "optimizer", "step"],
                   "phase names")
            table = phases[()]
            for r, p, s in [(0, 0, 0), (1, 6, 4), (1, 2, 3)]:
                expect(float(table[r, p, s]), sample_phase_us(k, r, p, s), f"run {k} phase_us[{r},{p},{s}]")
            expect(run["phase_steps"][()].tolist(), [5, 5], f"run {k} phase_steps")
            expect(run["wall_seconds"][()].tolist(), [0.5, 0.51], f"run {k} wall_seconds")
            expect(run["peak_memory_bytes"][()].tolist(), [1000000, 1000001], f"run {k} peak_memory_bytes")

        ok, failed = f["runs/run_0000"], f["runs/run_0001"]
        expect(text(ok.attrs["status"]), "ok", "run 0 status")
        expect(float(ok.attrs["samples_per_second"]), 1000.0, "run 0 samples_per_second")
        expect(ok["loss"][()].tolist(), np.float32([2.0, 1.9, 1.8, 1.7, 1.6]).tolist(), "run 0 loss")
        expect(text(failed.attrs["status"]), "failed", "run 1 status")
        expect(text(failed.attrs["failure"]), "non-finite loss (nan) at measured step 3", "run 1 failure")
        expect(math.isnan(failed["loss"][3]), True, "run 1 loss[3] is NaN")

        # NVML samples: [ranks][longest] padded with NaN, the real length per rank alongside.
        util = ok["gpu_utilization_pct"][()]
        counts = ok["gpu_utilization_pct_count"][()].tolist()
        expect(counts, [3, 2], "gpu_utilization_pct_count")
        expect([util[r, :counts[r]].tolist() for r in range(2)], [[50.0, 60.0, 70.0], [80.0, 90.0]],
               "gpu_utilization_pct")
        expect(bool(np.isnan(util[1, 2])), True, "padding is NaN")
        # GPU busy per step (--gpu-busy-steps): the same layout, one value or none per rank.
        expect(ok["gpu_busy_us_count"][()].tolist(), [1, 0], "gpu_busy_us_count")
        expect(float(ok["gpu_busy_us"][0, 0]), 250.5, "gpu_busy_us[0]")


def check_study(path):
    with h5py.File(path, "r") as f:
        check_root(f, "study")
        meta = f["metadata"].attrs
        expect(text(meta["git_commit"]), "abc123", "git_commit")
        expect(text(meta["spec_text"]), "models: [mlp-medium]\nbatch_sizes: [8]\nworld_sizes: [1, 2]\n", "spec_text")
        expect([text(h) for h in meta["hostnames"]], ["node-a", "node-b"], "hostnames")
        expect([text(g) for g in meta["gpu_names"]], ["NVIDIA H200", "NVIDIA H200"], "gpu_names")
        expect(text(f["metadata/nccl_variables"].attrs["NCCL_NVLS_ENABLE"]), "0", "study NCCL_NVLS_ENABLE")
        bench = {column: f["commbench"][column][()].tolist() for column in ("bytes", "time_us", "busbw_gbs")}
        expect(bench, {"bytes": [1024.0, 1048576.0], "time_us": [10.5, 120.0], "busbw_gbs": [0.0975, 8.738]},
               "commbench")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    configurations = sorted(p for p in glob.glob(os.path.join(directory, "*.h5"))
                            if os.path.basename(p) != "study.h5")
    expect([os.path.basename(p) for p in configurations], ["mlp-medium_b32_w2_sample.h5"], "configuration files")
    check_configuration(configurations[0])
    check_documented_example(configurations[0])
    check_study(os.path.join(directory, "study.h5"))
    print(f"h5py {h5py.__version__}: {directory} reads back with the known values")


if __name__ == "__main__":
    main()
