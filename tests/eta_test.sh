#!/usr/bin/env bash
# The sweep's estimate of the time left against the time really left (tests/sweep_tests.cmake,
# sweep_eta_accuracy): a 2-rank sweep of tests/specs/eta.yaml, every progress line stamped as
# it arrives. Each line that carries an estimate (all after the first configurations are
# stored) while at least 5 s are left must be within half of the time from it to the
# sweep's end, plus 1 s: the estimate is printed in whole seconds. Closer to the end than
# about two runs, one run slowed by another process on the two cores moves the time left by
# more than half whatever was estimated. At least three such lines. Then --dry-run, started
# without mpirun, estimates the same sweep from the study it wrote: within half of the time
# the sweep took.
# An estimate can only hold at the speed the machine had: where another process took the
# cores midway (another ctest beside this one), a later run took several times as long as its
# identical siblings, which no estimate made before could know. So both bounds are widened by
# the machine's change of speed, as the sweep's own runs show it: the largest ratio of the
# fastest to the slowest run of one configuration (about 1.1 on a quiet machine; its runs do
# the same work), printed with the figures.
#
# Usage: eta_test.sh BIN WORK [-- MPIRUN...]
set -u
TEST_NAME=sweep_eta_accuracy
source "$(dirname "${BASH_SOURCE[0]}")/sweep_test_lib.sh"
BIN="$1" WORK="$2"
shift 2
mpirun_from_args "$@"
SPEC="$SWEEP_TESTS_DIR/specs/eta.yaml"
rm -rf "$WORK" && mkdir -p "$WORK"
out="$WORK/study" log="$WORK/progress.log"

"${MPIRUN[@]}" -np 2 "$BIN" sweep "$SPEC" --out "$out" --no-commbench --device cpu 2>&1 |
  while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done >"$log"
status=${PIPESTATUS[0]}
cat "$log"
[ "$status" -eq 0 ] || fail "the sweep exited with $status"
grep -q '\[sweep\] done' "$log" || fail "no [sweep] done line"

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

# The time the sweep took, from its first line to its end, against --dry-run's estimate
# from the runs it stored (--overwrite: as if every configuration were measured again).
took=$(awk '/\[sweep\] .*configurations \(/ && !start { start = $1 } / \[sweep\] done/ { printf "%.1f", $1 - start }' "$log")
estimate_line=$("$BIN" sweep "$SPEC" --out "$out" --dry-run --overwrite --device cpu | grep '^# estimate:') ||
  fail "--dry-run without mpirun printed no estimate line"
say "$estimate_line"
estimate=$(sed -n 's/^# estimate: about \([0-9]*\):\([0-9]*\):\([0-9]*\) for 18 runs of 6 configurations.*/\1 \2 \3/p' <<<"$estimate_line" |
  awk '{ print $1 * 3600 + $2 * 60 + $3 }')
[ -n "$estimate" ] || fail "--dry-run's estimate does not cover the 18 runs of 6 configurations"
awk -v e="$estimate" -v t="$took" -v x="$speed_change" 'BEGIN { printf "[sweep_eta_accuracy] --dry-run estimated %d s, the sweep took %.1f s: %+.0f%%\n", e, t, 100 * (e - t) / t; exit !(e >= t / (2 * x) && e <= t * (1 + 0.5 * x)) }' ||
  fail "--dry-run's estimate is more than half off the sweep's time"
say "ok"
