#!/usr/bin/env python3
"""scripts/analysis/host_noise_timescale.py on runs with known answers, and on a real study.

- t(0.975, df) against Abramowitz and Stegun, Table 26.10: df 1 12.706, 2 4.303, 3 3.182,
  5 2.571, 9 2.262, 10 2.228, 30 2.042, 120 1.980, to 1e-3: the table's rounding (5e-4) plus
  the series' error for df >= 5 (under 3e-4).
- Runs against time: one configuration, 6 launches 100 s apart, 2 runs 0.2 s apart in each,
  samples/s exp(3 + a) in even launches and exp(3 - a) in odd ones (a = 0.1). The
  configuration's mean log is 3, every residual +-a: pairs of one launch multiply to a^2
  (correlation 1, all from one launch), launches 100 s apart to -a^2 (-1), 200 s apart to +a^2
  (+1), none of them from one launch.
- sd of means of R consecutive launches times sqrt(R), on 1, 1, -1, -1, 1, 1, -1, -1: single
  values sd sqrt(8/7) = 1.069045; R = 2: means 1, -1, 1, -1, sd sqrt(4/3), times sqrt 2 =
  1.632993 (neighbours move together); on 1, -1, 1, -1, 1, -1: R = 2 means all 0, sd 0.
- Log speedups paired by launch: w1 runs of 1000 samples/s and w2 runs of 1600 and 2000 in
  launches 0 and 1 (and a w2 run in launch 2 with no w1 twin, left out): ln 1.6, ln 2. The
  halves: w1 steps [10]*4 + [20]*4 us, w2 steps [10]*4 + [10]*4: first halves ln(1), second
  ln(2) (1/mean step on each side).
- Sizing: sd = asinh(0.05) * sqrt(10) / t(0.975, 9) makes 10 launches exactly enough; 1.001
  times that needs 11.
- A real study, if given (the quick study, 8 configurations, 4 launches x 1 run): 32 runs,
  launches 0-3, 4 comparisons, every per-launch log speedup finite.
Exit 0 pass, 1 fail, 77 without numpy or h5py.
"""
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts", "analysis"))
try:
    import numpy as np  # noqa: F401
    import host_noise_timescale as h
except ImportError as error:
    print(f"SKIPPED: {error}")
    sys.exit(77)

failures = []


def check(name, got, want, tol):
    if not (abs(got - want) <= tol):
        failures.append(f"{name}: got {got}, want {want} (tolerance {tol})")


def run(config, world, launch, start, samples, steps=(1.0, 1.0)):
    return h.Run(config, world, launch, start, samples, np.asarray(steps, dtype=np.float64))


for df, want in [(1, 12.706), (2, 4.303), (3, 3.182), (5, 2.571), (9, 2.262), (10, 2.228), (30, 2.042), (120, 1.980)]:
    check(f"t975({df})", h.t975(df), want, 1e-3)

a = 0.1
runs = []
for launch in range(6):
    sign = 1 if launch % 2 == 0 else -1
    for k in range(2):
        runs.append(run("m_b8_w1_x", 1, launch, 100.0 * launch + 0.2 * k, math.exp(3 + sign * a)))
bins = {(low, high): (n, corr, same) for low, high, n, corr, same in h.lag_correlations(runs, [0, 1, 99, 101, 199, 201])}
n, corr, same = bins[(0, 1)]
check("pairs within a launch", n, 6, 0)
check("correlation within a launch", corr, 1.0, 1e-12)
check("share of one launch, within", same, 1.0, 1e-12)
n, corr, same = bins[(99, 101)]
check("pairs 100 s apart", n, 20, 0)  # 5 neighbouring launch pairs x 2 x 2 runs
check("correlation 100 s apart", corr, -1.0, 1e-12)
check("share of one launch, 100 s apart", same, 0.0, 0)
check("correlation 200 s apart", bins[(199, 201)][1], 1.0, 1e-12)

values = [1, 1, -1, -1, 1, 1, -1, -1]
check("grouped sd, R = 1", h.grouped_sd(values, 1), math.sqrt(8 / 7), 1e-12)
check("grouped sd, R = 2", h.grouped_sd(values, 2), math.sqrt(4 / 3) * math.sqrt(2), 1e-12)
check("grouped sd, alternating, R = 2", h.grouped_sd([1, -1, 1, -1, 1, -1], 2), 0.0, 1e-12)
if not math.isnan(h.grouped_sd([1, 2, 3, 4], 2)):
    failures.append("grouped sd of 2 groups should be NaN")

pairs = [
    run("m_b8_w1_x", 1, 0, 0.0, 1000, [10] * 4 + [20] * 4),
    run("m_b8_w1_x", 1, 1, 10.0, 1000, [10] * 4 + [20] * 4),
    run("m_b8_w2_x", 2, 0, 0.5, 1600, [10] * 8),
    run("m_b8_w2_x", 2, 1, 10.5, 2000, [10] * 8),
    run("m_b8_w2_x", 2, 2, 20.5, 9999, [10] * 8),
]
if h.comparisons(pairs) != {"m_b8_w2_x": ("m_b8_w1_x", 2)}:
    failures.append(f"comparisons: {h.comparisons(pairs)}")
logs = h.launch_log_speedups(pairs, "m_b8_w2_x", "m_b8_w1_x")
check("launches paired", len(logs), 2, 0)
check("log speedup, launch 0", logs[0], math.log(1.6), 1e-12)
check("log speedup, launch 1", logs[1], math.log(2.0), 1e-12)
check("first halves", h.launch_log_speedups(pairs, "m_b8_w2_x", "m_b8_w1_x", 0)[0], 0.0, 1e-12)
check("second halves", h.launch_log_speedups(pairs, "m_b8_w2_x", "m_b8_w1_x", 1)[0], math.log(2.0), 1e-12)

exact = math.asinh(0.05) * math.sqrt(10) / 2.262157163
check("launches for the target, exactly enough", h.launches_for(exact * (1 - 1e-9), 0.05), 10, 0)
check("launches for the target, a little more", h.launches_for(exact * 1.001, 0.05), 11, 0)

if len(sys.argv) > 1:
    study = h.read_study(sys.argv[1])
    check("runs of the quick study", len(study), 32, 0)
    if sorted({r.launch for r in study}) != [0, 1, 2, 3]:
        failures.append(f"launches of the quick study: {sorted({r.launch for r in study})}")
    found = h.comparisons(study)
    check("comparisons of the quick study", len(found), 4, 0)
    for n_config, (one_config, _) in found.items():
        speedups = h.launch_log_speedups(study, n_config, one_config)
        if len(speedups) != 4 or not all(math.isfinite(x) for x in speedups):
            failures.append(f"{n_config}: per-launch log speedups {speedups}")
    if h.main([sys.argv[1]]) != 0:
        failures.append("the command on the quick study failed")

for failure in failures:
    print("FAIL:", failure)
print("PASSED" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
