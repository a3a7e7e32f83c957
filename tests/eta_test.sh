#!/usr/bin/env bash
# The sweep's estimate of the time left against the time really left (tests/sweep_tests.cmake,
# sweep_eta_accuracy), on the quick study sweep_quick_study ran (experiments/quick.yaml: four
# launches of fresh processes, each its runs and then a window of paired blocks), whose
# progress lines that test stamped as they arrived. Each line that carries an estimate while
# at least 5 s are left must be within half of the time from it to the sweep's end, plus 1 s:
# the estimate is printed in whole seconds. Closer to the end than about two runs, one run
# slowed by another process on the two cores moves the time left by more than half whatever
# was estimated. At least three such lines (the ends of launches 1 to 3). Then --dry-run,
# started without mpirun, estimates the same sweep from the study it wrote: within half of
# the time the sweep took.
# An estimate can only hold at the speed the machine had: where another process took the
# cores midway, a later run took several times as long as its identical siblings, which no
# estimate made before could know. So both bounds are widened by the machine's change of
# speed, as the sweep's own runs show it: the largest ratio of the fastest to the slowest run
# of one configuration (about 1.1 on a quiet machine; its runs do the same work), printed
# with the figures.
#
# Usage: eta_test.sh BIN SPEC STUDY RUNS CONFIGURATIONS  (STUDY.log: the stamped progress lines)
set -u
TEST_NAME=sweep_eta_accuracy
source "$(dirname "${BASH_SOURCE[0]}")/sweep_test_lib.sh"
BIN="$1" SPEC="$2" out="$3" runs="$4" configurations="$5"
log="$out.log"
[ -s "$log" ] || fail "no progress log $log: sweep_quick_study writes it"
grep -q '\[sweep\] done' "$log" || fail "no [sweep] done line in $log"

# The machine's change of speed during the sweep: the largest fastest-to-slowest ratio of the
# ok runs of one configuration, read by scripts/analysis/host_noise_timescale.py's reader.
speed_change=$("$H5PY_PYTHON" - "$SWEEP_TESTS_DIR/../scripts/analysis" "$out" <<'PY'
import collections, sys
sys.path.insert(0, sys.argv[1])
import host_noise_timescale
speeds = collections.defaultdict(list)
for run in host_noise_timescale.read_study(sys.argv[2]):
    speeds[run.config].append(run.samples_per_s)
print(f"{max([1.0] + [max(s) / min(s) for s in speeds.values() if min(s) > 0]):.3f}")
PY
) || { speed_change=1; say "the study's runs could not be read (h5py and numpy in $H5PY_PYTHON?): bounds not widened"; }
say "the machine's change of speed during the sweep (fastest over slowest run of one configuration): ${speed_change}x"

# Each estimate against the time from its line to the "[sweep] done" line.
awk -v x="$speed_change" '
  / \[sweep\] done/ { end = $1 }
  / \[sweep\] configs / { for (i = 1; i < NF; ++i) if ($i == "eta") { t[++n] = $1; eta[n] = $(i + 1) } }
  END {
    for (k = 1; k <= n; ++k) {
      left = end - t[k]
      if (eta[k] == "?" || left < 5) continue
      split(eta[k], hms, ":")
      estimate = hms[1] * 3600 + hms[2] * 60 + hms[3]
      error = (estimate - left) / left
      ok = (estimate - left <= 0.5 * left * x + 1 && left - estimate <= 0.5 * left * x + 1)
      printf "[sweep_eta_accuracy] eta %d s, really left %.1f s: %+.0f%%%s\n", estimate, left, 100 * error, ok ? "" : "  OUT OF BOUNDS"
      checked++
      if (!ok) bad++
    }
    if (checked < 3) { print "[sweep_eta_accuracy] FAIL: only " checked + 0 " lines carry an estimate"; exit 1 }
    exit bad > 0
  }' "$log" || fail "an estimate is more than half (plus 1 s, widened by the change of speed) off the time left"

# The time the sweep took, from its first line to its end, against --dry-run's estimated total
# (its runs and paired blocks) from the runs it stored (--overwrite: as if every
# configuration were measured again).
took=$(awk '/ \[sweep\] / && !start { start = $1 } / \[sweep\] done/ { end = $1 } END { printf "%.1f", end - start }' "$log")
dry_run=$("$BIN" sweep "$SPEC" --out "$out" --dry-run --overwrite --device cpu) || fail "--dry-run without mpirun failed"
total_line=$(grep '^# estimated total:' <<<"$dry_run") || fail "--dry-run without mpirun printed no estimated total"
say "$(grep '^# estimate:' <<<"$dry_run")"
say "$total_line"
estimate=$(sed -n "s/^# estimated total: about \([0-9]*\):\([0-9]*\):\([0-9]*\) for all $runs runs of the $configurations configurations.*/\1 \2 \3/p" <<<"$total_line" |
  awk '{ print $1 * 3600 + $2 * 60 + $3 }')
[ -n "$estimate" ] || fail "--dry-run's estimated total does not cover the $runs runs of $configurations configurations"
awk -v e="$estimate" -v t="$took" -v x="$speed_change" 'BEGIN { printf "[sweep_eta_accuracy] --dry-run estimated %d s, the sweep took %.1f s: %+.0f%%\n", e, t, 100 * (e - t) / t; exit !(e >= t / (2 * x) && e <= t * (1 + 0.5 * x)) }' ||
  fail "--dry-run's estimate is more than half off the sweep's time"
say "ok"
