#!/usr/bin/env bash
# The kill/resume soak of docs/reliability.md ("Kill and resume soak"): a study launched, SIGKILLed (mpirun) at a random moment
# and resumed, ITERATIONS times back to back, then finished with --resume, must end with
# exactly the configurations and runs of one clean study: same files, same runs, none
# duplicated, every file readable, no *.tmp left, no process of a killed launch alive.
# When the resumes complete the study before the iterations are used up, it is checked
# the same way and the next launch starts a new one (a "round").
#
#   bash tests/soak_kill_resume.sh ITERATIONS [--bin DDPSCALE] [--work DIR] [--spec SPEC]
#                                  [--seed N] [--no-commbench] [-- MPIRUN PREFIX...]
#
#   bash tests/soak_kill_resume.sh 10      the full soak (about 10 x the study's time)
#   CI runs 3 iterations as test sweep_soak_kill_resume (tests/sweep_tests.cmake).
#
# Defaults: --bin $DDPSCALE_BIN or build/trainer/ddpscale, --spec tests/specs/tiny.yaml
# (docs/reliability.md ran it on experiments/quick.yaml: pass --spec for that, it takes 10 x longer),
# --work a fresh folder under /tmp (kept when the soak fails), --seed random (printed;
# pass it back to repeat the same kill moments), --no-commbench passed to every launch
# (CI: start-up is then 2 s instead of 15 s on CPU; the full soak keeps the benchmark, as
# a user's study has it). The kill moment of each launch is drawn
# from the clean study's clock: a quarter uniformly within start-up (MPI, the allreduce
# benchmark, writing study.h5), the rest uniformly within the time the configurations
# still left took in the clean study -- so kills land in runs and in file writes too.
set -uo pipefail
TEST_NAME=soak_kill_resume
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/sweep_test_lib.sh"

usage() { sed -n '7,8p' "$0" >&2; exit 2; }
iterations="${1:-}"
[[ "$iterations" =~ ^[0-9]+$ ]] || usage
shift
BIN="${DDPSCALE_BIN:-$here/../build/trainer/ddpscale}"
SPEC="$here/specs/tiny.yaml"
work=""
seed="$(( $(date +%s%N) % 32768 ))"
sweep_flags=()
commbench_check=--commbench
default_mpirun
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --spec) SPEC="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --no-commbench) sweep_flags+=(--no-commbench); commbench_check=--no-commbench; shift ;;
    --) shift; [ $# -gt 0 ] && MPIRUN=("$@"); break ;;
    *) usage ;;
  esac
done
[ -x "$BIN" ] || fail "ddpscale executable $BIN not found (build first, or pass --bin / set DDPSCALE_BIN)"
[ -f "$SPEC" ] || fail "spec $SPEC not found"
require_h5py
keep_work=1
if [ -z "$work" ]; then
  work="$(mktemp -d /tmp/ddpscale-soak.XXXXXX)"
  keep_work=0
fi
rm -rf "$work"
mkdir -p "$work"
RANDOM="$seed"
say "$iterations iterations on $SPEC, seed $seed, work $work"

# The clean study: the reference, and the clock for the kill moments: start-up (MPI, the
# allreduce benchmark) until study.h5 is stored, then the configurations.
t0_ms="$(date +%s%3N)"
sweep_run "$work/clean" "$work/clean.log" "${sweep_flags[@]}" || {
  rc=$?
  show_log "$work/clean.log"
  fail "the clean sweep exited with $rc"
}
clean_ms=$(( $(date +%s%3N) - t0_ms ))
startup_ms=$(( $(date -r "$work/clean/study.h5" +%s%3N) - t0_ms ))
work_ms=$(( clean_ms > startup_ms ? clean_ms - startup_ms : 1 ))
mapfile -t clean_files < <(config_files "$work/clean")
total=${#clean_files[@]}
[ "$total" -gt 0 ] || fail "the clean study holds no configuration files"
say "clean study: $total configuration files in $((clean_ms / 1000)).$(printf %03d $((clean_ms % 1000))) s" \
  "(start-up $((startup_ms / 1000)).$(printf %03d $((startup_ms % 1000))) s)"
if [ "$SPEC" -ef "$here/specs/tiny.yaml" ]; then
  "$H5PY_PYTHON" "$here/check_study.py" check "$work/clean" "${TINY_GRID[@]}" "$commbench_check" ||
    fail "the clean study does not match tests/specs/tiny.yaml"
fi
# random_below N: sets DRAWN to a number in [0, N), in this shell (a subshell would reseed).
random_below() { DRAWN=$(( (RANDOM * 32768 + RANDOM) % ($1 > 0 ? $1 : 1) )); }

# check_soaked WHAT: the soaked study equals the clean one (check_study.py compare), and
# matches the spec's grid when it is tiny.yaml.
check_soaked() {
  [ -z "$(tmp_files "$study")" ] || fail "$1: temporary files left: $(tmp_files "$study" | tr '\n' ' ')"
  "$H5PY_PYTHON" "$here/check_study.py" compare "$work/clean" "$study" ||
    fail "$1: the study differs from a clean one (seed $seed, logs in $work)"
  if [ "$SPEC" -ef "$here/specs/tiny.yaml" ]; then
    "$H5PY_PYTHON" "$here/check_study.py" check "$study" "${TINY_GRID[@]}" "$commbench_check" ||
      fail "$1: the study does not match tests/specs/tiny.yaml (seed $seed, logs in $work)"
  fi
}

study="$work/soaked"
kills=0
finished_early=0
round=1
launches=0  # in this round
for ((i = 1; i <= iterations; i++)); do
  have=$(config_files "$study" | wc -l)
  # A study completed by the resumes is checked, and the next launches start a new one:
  # every launch gets a kill with work left to interrupt.
  if [ "$have" -eq "$total" ]; then
    check_soaked "round $round (complete after $launches launches)"
    say "round $round: complete after $launches launches and equal to the clean study; starting round $((round + 1))"
    rm -rf "$study"
    round=$((round + 1))
    launches=0
    have=0
  fi
  flags=("${sweep_flags[@]}")
  [ "$launches" -gt 0 ] && flags+=(--resume)
  launches=$((launches + 1))
  log="$work/launch-$i.log"
  t0="$(now)"
  sweep_start "$study" "$log" "${flags[@]}"
  # A quarter of the kills land in start-up (MPI, the allreduce benchmark, study.h5); the
  # rest after the launch has said what it will run (the "[sweep] ... configurations" line,
  # printed when start-up is over), within the clean time of what is left.
  if [ $((RANDOM % 4)) -eq 0 ]; then
    random_below "$startup_ms"
    delay_ms=$DRAWN
    where="in start-up"
  else
    limit_us=$(( ${EPOCHREALTIME//[.,]/} + 5000 * startup_ms + 60000000 ))
    until grep -q 'configurations (.* already done)' "$log" 2>/dev/null; do
      if ! alive "$SWEEP_PID" || [ "${EPOCHREALTIME//[.,]/}" -ge "$limit_us" ]; then break; fi
      sleep 0.05
    done
    random_below $((work_ms * (total - have) / total + 1))
    delay_ms=$DRAWN
    where="into the configurations"
  fi
  deadline_us=$(( ${EPOCHREALTIME//[.,]/} + 1000 * delay_ms ))
  while [ "${EPOCHREALTIME//[.,]/}" -lt "$deadline_us" ] && alive "$SWEEP_PID"; do sleep 0.02; done
  if alive "$SWEEP_PID"; then
    kill_sweep "$SWEEP_PID" "$study"
    kills=$((kills + 1))
    what="killed $((delay_ms / 1000)).$(printf %03d $((delay_ms % 1000))) s $where ($(elapsed_since "$t0") s after launch)"
  else
    wait "$SWEEP_PID"
    rc=$?
    [ "$rc" -eq 0 ] || { show_log "$log"; fail "launch $i exited with $rc before its kill"; }
    finished_early=$((finished_early + 1))
    what="finished before its kill $((delay_ms / 1000)).$(printf %03d $((delay_ms % 1000))) s $where"
  fi
  say "launch $i/$iterations (round $round)${flags[*]:+ }${flags[*]}: $what; $(config_files "$study" | wc -l)/$total files," \
    "$(tmp_files "$study" | wc -l) temporary, study.h5 $([ -e "$study/study.h5" ] && echo present || echo absent)"
done

t0="$(now)"
sweep_run "$study" "$work/final.log" --resume "${sweep_flags[@]}" || {
  rc=$?
  show_log "$work/final.log"
  fail "the final --resume exited with $rc"
}
say "final --resume: $(grep -o '([0-9]* already done)' "$work/final.log"), $(elapsed_since "$t0") s"
check_soaked "after $kills kills and resumes"
say "PASSED: $iterations launches in $round round(s), $kills killed ($finished_early finished before their kill), seed $seed"
[ "$keep_work" -eq 1 ] || rm -rf "$work"
