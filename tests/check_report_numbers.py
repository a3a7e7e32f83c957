#!/usr/bin/env python3
"""Recomputes the report's numbers from the study's HDF5 files, independently of ddpscale.

    check_report_numbers.py REPORT_DIR STUDY_DIR

For every 1-rank / N-rank pair of configurations that are twins (same model, scaling,
batch per rank when weak or global batch when strong, optimizer, learning rate, dtype,
exec, NCCL profile, device and measured steps), reads the ok runs' samples_per_second
with h5py (a study of several launches has one file per configuration and launch: they are
merged by config_id), removes outliers by the modified Z-score within each launch, and
computes mean, sample sd, the 95% interval on the log scale (the t-interval of the mean log
throughput, scipy.stats.t.ppf, exponentiated), Welch's p
(scipy.stats.ttest_ind, equal_var=False) and the speedup (ratio of means; with several
launches, of the means of the launches' means, over the launches both sides ran in); then
compares them with summary.csv. Where the N-rank files hold the paired design's blocks
(/paired), the speedup is that design's instead: per launch the mean of log(a / b) over the
speedup pairs, the mean over launches, exp, times N under weak scaling; its interval must
hold it and its p lie in (0, 1]. Also checks that summary.json parses and has one entry per
configuration.

Exit status: 0 all agree, 1 a difference (each printed), 77 h5py/numpy/scipy missing.
"""
import csv
import glob
import json
import math
import os
import sys

try:
    import h5py
    import numpy as np
    from scipy import stats
except ImportError as e:  # reported as skipped by CTest, never as passed
    print(f"SKIPPED: {e} (Debian: python3-h5py python3-numpy python3-scipy)")
    sys.exit(77)

REL_TOL = 1e-9     # mean, sd, speedup: the same double arithmetic, other code (summation order)
# CI bounds: their t quantile comes from Boost.Math in ddpscale and from scipy here, two
# implementations of the inverse t distribution that were seen to differ by 4e-9 relative
# (a bound of 1920.50245 samples/s against 1920.50244): 1e-7 holds that with room and still
# catches any other formula, whose bounds differ by percent.
CI_REL_TOL = 1e-7
P_REL_TOL = 1e-6   # Welch p: Boost.Math against scipy's special functions
P_ABS_TOL = 1e-15  # p-values below this are both "zero" in double precision terms

errors = []


def fail(message):
    errors.append(message)
    print("MISMATCH:", message)


def text(value):
    return value.decode() if isinstance(value, (bytes, np.bytes_)) else value


def read_config(path):
    with h5py.File(path, "r") as f:
        params = {k: text(v) for k, v in f["params"].attrs.items()}
        launch = int(f.attrs.get("launch", 0))
        runs = []
        for run in f["runs"].values():
            runs.append({
                "index": int(run.attrs["index"]),
                "launch": launch,
                "status": text(run.attrs["status"]),
                "samples_per_second": float(run.attrs["samples_per_second"]),
            })
        return {"id": text(f.attrs["config_id"]), "path": path, "params": params, "runs": runs}


def merge_launches(configs):
    """One entry per config_id, the runs of its launches together, by run index."""
    merged = {}
    for c in configs:
        if c["id"] in merged:
            merged[c["id"]]["runs"].extend(c["runs"])
        else:
            merged[c["id"]] = c
    for c in merged.values():
        c["runs"].sort(key=lambda r: r["index"])
    return list(merged.values())


def twin_key(p):
    batch = int(p["global_batch"]) if p["scaling"] == "strong" else int(p["batch_per_rank"])
    return (p["model"], p["scaling"], batch, p["optimizer"], float(p["learning_rate"]), p["dtype"], p["exec"],
            p["nccl_profile"], p["device"], int(p["measured_steps"]))


def modified_z_filter(values):
    """Iglewicz-Hoaglin: |0.6745 (x - median) / MAD| > 3.5 removed. When MAD is 0, the
    mean absolute deviation from the median stands in: (x - median) / (1.253314 MeanAD);
    when that is 0 too, all values are equal and none is removed (results/statistics/statistics.hpp)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return x, 0
    center = np.median(x)
    deviations = np.abs(x - center)
    mad = np.median(deviations)
    if mad != 0:
        scores = 0.6745 * (x - center) / mad
    else:
        scale = 1.253314 * np.mean(deviations)
        scores = np.zeros_like(x) if scale == 0 else (x - center) / scale
    keep = np.abs(scores) <= 3.5
    return x[keep], int((~keep).sum())


def describe(values):
    """Throughputs: mean and sd, and the 95% interval of the mean log, exponentiated (never
    below zero); NaN bounds for fewer than 2 values."""
    n = len(values)
    mean = float(np.mean(values)) if n else math.nan
    sd = float(np.std(values, ddof=1)) if n >= 2 else math.nan
    if n >= 2:
        logs = np.log(np.asarray(values, dtype=float))
        half = stats.t.ppf(0.975, n - 1) * float(np.std(logs, ddof=1)) / math.sqrt(n)
        low, high = math.exp(float(np.mean(logs)) - half), math.exp(float(np.mean(logs)) + half)
        if not 0 < low <= high:
            fail(f"interval [{low}, {high}] of {values!r} is not a positive interval")
    else:
        low = high = math.nan
    return {"n": n, "mean": mean, "sd": sd, "ci95_low": low, "ci95_high": high}


def csv_number(row, column):
    cell = row[column]
    return math.nan if cell == "" else float(cell)


def same(name, got, want, rel_tol, abs_tol=0.0):
    if math.isnan(want):
        if not math.isnan(got):
            fail(f"{name}: summary.csv {got!r}, expected an empty cell (not computable)")
        return
    if math.isnan(got) or not math.isclose(got, want, rel_tol=rel_tol, abs_tol=abs_tol):
        fail(f"{name}: summary.csv {got!r}, independent computation {want!r}")


def kept_by_launch(config):
    """{launch: kept throughputs}: the outlier filter works within each launch."""
    by_launch = {}
    for r in config["runs"]:
        if r["status"] == "ok":
            by_launch.setdefault(r["launch"], []).append(r["samples_per_second"])
    kept, removed = {}, 0
    for launch, values in sorted(by_launch.items()):
        kept[launch], gone = modified_z_filter(values)
        removed += gone
    return kept, removed


def check_config(config, row):
    ok = [r["samples_per_second"] for r in config["runs"] if r["status"] == "ok"]
    by_launch, removed = kept_by_launch(config)
    kept = np.concatenate([by_launch[l] for l in sorted(by_launch)]) if by_launch else np.asarray([])
    d = describe(kept)
    cid = config["id"]
    for column, want in (("runs_total", len(config["runs"])), ("runs_ok", len(ok)),
                         ("runs_failed", len(config["runs"]) - len(ok)), ("outliers_removed", removed),
                         ("samples_per_s_n", d["n"])):
        same(f"{cid} {column}", csv_number(row, column), float(want), 0.0)
    for field in ("mean", "sd"):
        same(f"{cid} samples_per_s_{field}", csv_number(row, "samples_per_s_" + field), d[field], REL_TOL)
    for field in ("ci95_low", "ci95_high"):
        same(f"{cid} samples_per_s_{field}", csv_number(row, "samples_per_s_" + field), d[field], CI_REL_TOL)
    low = csv_number(row, "samples_per_s_ci95_low")
    if not math.isnan(low) and low <= 0:
        fail(f"{cid} samples_per_s_ci95_low: {low!r}, a throughput interval below zero")
    return kept, d, by_launch


def paired_speedup(study_dir, config):
    """The paired design's point estimate from the N-rank configuration's /paired groups, or None."""
    names = [os.path.join(study_dir, config["id"] + ".h5")] + \
        sorted(glob.glob(os.path.join(study_dir, glob.escape(config["id"]) + ".launch-*.h5")))
    launch_means = []
    for path in names:
        if not os.path.exists(path):
            continue
        with h5py.File(path, "r") as f:
            if "paired" not in f:
                continue
            g = f["paired"]
            kinds = g["kind"][:]
            logs = np.log(g["a_us"][:] / g["b_us"][:])[kinds == 0]
            if len(logs):
                launch_means.append(float(np.mean(logs)))
    if not launch_means:
        return None
    params = config["params"]
    scale = int(params["world_size"]) if params["scaling"] == "weak" else 1
    return scale * math.exp(float(np.mean(launch_means)))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    report_dir, study_dir = sys.argv[1], sys.argv[2]

    config_files = sorted(p for p in glob.glob(os.path.join(study_dir, "*.h5"))
                          if os.path.basename(p) != "study.h5")
    if not config_files:
        print(f"FAIL: no configuration files in {study_dir}")
        return 1
    configs = merge_launches([read_config(p) for p in config_files])

    with open(os.path.join(report_dir, "summary.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    by_id = {row["id"]: row for row in rows}
    if len(rows) != len(configs) or len(by_id) != len(rows):
        fail(f"summary.csv has {len(rows)} rows ({len(by_id)} distinct ids) for {len(configs)} configurations")

    def reject_constant(name):
        raise ValueError(f"summary.json holds {name}, which is not JSON")

    with open(os.path.join(report_dir, "summary.json")) as f:
        summary = json.loads(f.read(), parse_constant=reject_constant)
    entries = summary["configurations"]
    if len(entries) != len(configs):
        fail(f"summary.json has {len(entries)} configurations for {len(configs)} configurations")
    json_by_id = {e["id"]: e for e in entries}

    one_rank = {}
    for c in configs:
        if int(c["params"]["world_size"]) == 1:
            one_rank.setdefault(twin_key(c["params"]), c)
    pairs = [(one_rank[twin_key(c["params"])], c) for c in configs
             if int(c["params"]["world_size"]) > 1 and twin_key(c["params"]) in one_rank]
    if not pairs:
        print("FAIL: no 1-rank / N-rank twins in the study to check")
        return 1

    for one, many in pairs:
        if one["id"] not in by_id or many["id"] not in by_id:
            fail(f"summary.csv lacks {one['id']} or {many['id']}")
            continue
        kept_one, d_one, launches_one = check_config(one, by_id[one["id"]])
        kept_many, d_many, launches_many = check_config(many, by_id[many["id"]])
        row = by_id[many["id"]]
        world = int(many["params"]["world_size"])
        paired = [l for l in sorted(launches_one) if l in launches_many and len(launches_one[l]) and len(launches_many[l])]
        by_pairs = paired_speedup(study_dir, many)
        if by_pairs is not None:
            speedup = by_pairs
        elif len(paired) >= 2:  # the mean of the launches' means, side by side
            speedup = (np.mean([np.mean(launches_many[l]) for l in paired]) /
                       np.mean([np.mean(launches_one[l]) for l in paired]))
        else:
            speedup = d_many["mean"] / d_one["mean"]
        same(f"{many['id']} speedup", csv_number(row, "speedup"), speedup, REL_TOL)
        same(f"{many['id']} efficiency", csv_number(row, "efficiency"), speedup / world, REL_TOL)
        same(f"{many['id']} speedup_paired", csv_number(row, "speedup_paired"), 1.0 if by_pairs else 0.0, 0.0)
        if by_pairs is not None:  # the paired t test's p: its degrees of freedom follow the batching
            p = csv_number(row, "welch_p")
            if not 0 < p <= 1:
                fail(f"{many['id']}: the paired design's p {p} is not in (0, 1]")
        elif len(kept_one) >= 2 and len(kept_many) >= 2:
            p = float(stats.ttest_ind(kept_many, kept_one, equal_var=False).pvalue)
        else:
            p = math.nan
        if by_pairs is None:
            same(f"{many['id']} welch_p", csv_number(row, "welch_p"), p, P_REL_TOL, P_ABS_TOL)
        low, high = csv_number(row, "speedup_ci95_low"), csv_number(row, "speedup_ci95_high")
        if by_pairs is not None:
            if not low <= speedup <= high:
                fail(f"{many['id']}: the paired speedup's CI [{low}, {high}] does not contain {speedup}")
        elif len(kept_one) >= 2 and len(kept_many) >= 2:
            if not low <= speedup <= high:
                fail(f"{many['id']}: speedup CI [{low}, {high}] does not contain the speedup {speedup}")
        elif not (math.isnan(low) and math.isnan(high)):
            fail(f"{many['id']}: a speedup CI [{low}, {high}] from fewer than 2 runs")
        paid = row["paid_off"]
        # Paid off: the speedup's whole 95% interval above 1 (docs/methodology.md).
        want_paid = "true" if low > 1 else "false"
        if paid != want_paid:
            fail(f"{many['id']}: paid_off {paid!r}, expected {want_paid!r} (speedup CI [{low}, {high}])")
        # summary.json carries the same numbers (JSON numbers round-trip the doubles).
        for column in ("samples_per_s_mean", "speedup", "welch_p"):
            j = json_by_id.get(many["id"], {}).get(column)
            want = csv_number(row, column)
            if (j is None) != math.isnan(want) or (j is not None and not math.isclose(j, want, rel_tol=1e-9)):
                fail(f"{many['id']} {column}: summary.json {j!r}, summary.csv {want!r}")
        print(f"checked {one['id']} (n={d_one['n']}, mean {d_one['mean']:.6g}) -> {many['id']} "
              f"(n={d_many['n']}, mean {d_many['mean']:.6g}): speedup {speedup:.6g} "
              f"[{low:.6g}, {high:.6g}], Welch p {p:.6g}")

    if errors:
        print(f"FAIL: {len(errors)} difference(s) between the report and the HDF5 files")
        return 1
    print(f"PASSED: {len(pairs)} pair(s) of {len(configs)} configurations ({len(config_files)} files) agree with h5py + scipy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
