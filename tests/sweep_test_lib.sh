# Sourced by tests/kill_resume_test.sh and tests/soak_kill_resume.sh: launching a 2-rank
# sweep, killing it the hard way (SIGKILL to mpirun) and making sure that no rank outlives
# it, and checking a study with tests/check_study.py. Needs bash and /proc, nothing else.
#
# The caller sets TEST_NAME, BIN (ddpscale), SPEC and MPIRUN (array: the mpirun prefix
# without -np) before using these.

SWEEP_TESTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
H5PY_PYTHON="${DDPSCALE_H5PY_PYTHON:-/usr/bin/python3}"
# The grid of tests/specs/tiny.yaml written out by hand (check_study.py check).
TINY_GRID=(--models mlp-medium --batches 8,16 --worlds 1,2 --runs 3 --warmup 1 --steps 5 --seed 7)
TINY_CONFIGS=4

# OpenMPI as root, in containers: the same settings as scripts/common.sh.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none

say() { echo "[$TEST_NAME] $*"; }
fail() {
  echo "[$TEST_NAME] FAIL: $*"
  exit 1
}

# Exit 77 (CTest: skipped) where the interpreter lacks h5py or numpy, as the checks need them.
require_h5py() {
  "$H5PY_PYTHON" -c 'import h5py, numpy' 2>/dev/null ||
    { echo "SKIPPED: $H5PY_PYTHON has no h5py/numpy (Debian: apt-get install python3-h5py python3-numpy)"; exit 77; }
}

default_mpirun() {
  MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader
    --mca btl_vader_single_copy_mechanism none)
}

# mpirun_from_args [-- MPIRUN...]: the launcher a test script was given after "--" (CTest
# passes tests/CMakeLists.txt's), or the default one.
mpirun_from_args() {
  if [ "${1:-}" = "--" ] && [ $# -gt 1 ]; then
    shift
    MPIRUN=("$@")
  else
    default_mpirun
  fi
}

# begin_sweep_test SPEC_FILE BIN WORK_DIR [-- MPIRUN...]: what a test script of one sweep does
# first: BIN, WORK (emptied) and SPEC (tests/specs/SPEC_FILE) set, the launcher chosen, h5py
# required (77 without it).
begin_sweep_test() {
  SPEC="$SWEEP_TESTS_DIR/specs/$1"
  BIN="$2"
  WORK="$3"
  shift 3
  mpirun_from_args "$@"
  require_h5py
  rm -rf "$WORK"
  mkdir -p "$WORK"
}

# Seconds since the epoch with milliseconds, for timings printed by the tests.
now() { date +%s.%N; }
elapsed_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# sweep_run OUT LOG [sweep options]: a whole sweep in the foreground; returns its exit code.
sweep_run() {
  local out="$1" log="$2"
  shift 2
  "${MPIRUN[@]}" -np 2 "$BIN" sweep "$SPEC" --out "$out" "$@" >"$log" 2>&1
}

# sweep_run_stamped OUT LOG [sweep options]: sweep_run with every line stamped as it arrives
# (seconds since the epoch, then the line); returns the sweep's exit code.
sweep_run_stamped() {
  local out="$1" log="$2"
  shift 2
  "${MPIRUN[@]}" -np 2 "$BIN" sweep "$SPEC" --out "$out" "$@" 2>&1 |
    while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done >"$log"
  return "${PIPESTATUS[0]}"
}

# sweep_start OUT LOG [sweep options]: the same in the background; its pid in SWEEP_PID.
sweep_start() {
  local out="$1" log="$2"
  shift 2
  "${MPIRUN[@]}" -np 2 "$BIN" sweep "$SPEC" --out "$out" "$@" >"$log" 2>&1 &
  SWEEP_PID=$!
}

# True while PID exists and is not a zombie (a zombie has exited; its parent may be gone
# and nobody may reap it in a container without an init). Builtins only: these helpers run
# while a rank races to its next file write, so they must not fork per process.
alive() {
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat="${stat##*) }"
  [ "${stat%% *}" != Z ]
}

# Every descendant of PID, from one /proc scan.
descendants() {
  local stat_file line pid rest p
  local -A parent=()
  for stat_file in /proc/[0-9]*/stat; do
    { read -r line <"$stat_file"; } 2>/dev/null || continue
    pid="${stat_file#/proc/}"
    pid="${pid%/stat}"
    rest="${line##*) }"
    rest="${rest#* }"
    parent[$pid]="${rest%% *}"
  done
  local -a frontier=("$1")
  while [ "${#frontier[@]}" -gt 0 ]; do
    local -a next=()
    for p in "${!parent[@]}"; do
      for pid in "${frontier[@]}"; do
        if [ "${parent[$p]}" = "$pid" ]; then
          echo "$p"
          next+=("$p")
        fi
      done
    done
    frontier=("${next[@]}")
  done
}

# Processes alive whose command line is a sweep into OUT (mpirun and ranks of any launch).
study_processes() {
  local cmdline_file pid sweep out a
  local -a args
  for cmdline_file in /proc/[0-9]*/cmdline; do
    pid="${cmdline_file#/proc/}"
    pid="${pid%/cmdline}"
    [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ] && continue
    { mapfile -d '' -t args <"$cmdline_file"; } 2>/dev/null || continue
    sweep=0 out=0
    for a in "${args[@]}"; do
      [ "$a" = sweep ] && sweep=1
      [ "$a" = "$1" ] && out=1
    done
    [ "$sweep$out" = 11 ] && alive "$pid" && echo "$pid"
  done
}

describe_processes() {
  local p
  local -a args
  for p in "$@"; do
    args=()
    { mapfile -d '' -t args <"/proc/$p/cmdline"; } 2>/dev/null
    [ "${#args[@]}" -gt 0 ] || args=("(gone)")
    printf '[%s] %s %s; ' "$p" "${args[0]##*/}" "${args[1]:-}"
  done
}

# freeze_sweep PID: SIGSTOP to mpirun and every process under it, so that nothing more is
# stored until kill_sweep kills them (a stopped process still dies of SIGKILL). For a test
# that must kill a sweep mid-way on any machine: on a fast one, ranks running on for the
# second OpenMPI takes to notice (see kill_sweep) finished all of tiny.yaml's configurations.
freeze_sweep() {
  local p
  kill -STOP "$1" 2>/dev/null
  for p in $(descendants "$1"); do kill -STOP "$p" 2>/dev/null; done
}

# kill_sweep PID OUT: SIGKILL to mpirun, as a user or a scheduler would. mpirun is stopped
# first so that the list of its children is complete. Its ranks do not die with it: they
# run on (and may store another configuration) until OpenMPI notices, about a second later
# here. Those still alive after a short grace are reported and killed, so that nothing
# writes into OUT afterwards; fails if a process of the study is alive 30 s later.
kill_sweep() {
  local pid="$1" out="$2" p
  local -a kids strays
  kill -STOP "$pid" 2>/dev/null
  mapfile -t kids < <(descendants "$pid")
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  sleep 0.2
  mapfile -t strays < <({ for p in "${kids[@]}"; do alive "$p" && echo "$p"; done; study_processes "$out"; } | sort -u)
  if [ "${#strays[@]}" -gt 0 ]; then
    say "  ${#strays[@]} process(es) outlived mpirun by 0.2 s, killing them: $(describe_processes "${strays[@]}")"
    for p in "${strays[@]}"; do kill -KILL "$p" 2>/dev/null; done
  fi
  local deadline=$((SECONDS + 30)) left
  while :; do
    left="$({ for p in "${kids[@]}" "${strays[@]}"; do alive "$p" && echo "$p"; done; study_processes "$out"; } | sort -u | tr '\n' ' ')"
    [ -z "${left// /}" ] && break
    [ "$SECONDS" -lt "$deadline" ] || fail "processes of the killed sweep on $out survive SIGKILL after 30 s: $(describe_processes $left)"
    sleep 0.2
  done
}

# True when DIR holds at least one configuration file (no fork: polled while a sweep runs).
has_config_file() {
  local f
  for f in "$1"/*.h5; do
    [ -e "$f" ] && [ "${f##*/}" != study.h5 ] && return 0
  done
  return 1
}

# config_files DIR: the configuration files (names) a study folder holds, sorted.
config_files() {
  local f
  for f in "$1"/*.h5; do
    [ -e "$f" ] || continue
    [ "${f##*/}" = study.h5 ] || echo "${f##*/}"
  done | sort
}

tmp_files() { find "$1" -name '*.tmp' 2>/dev/null | sort; }

# checksums DIR: "sum name" per .h5 file, to prove that files were left alone.
checksums() { (cd "$1" && md5sum -- *.h5 2>/dev/null | sort -k2); }

show_log() {
  echo "----- $1 (last ${2:-30} lines) -----"
  tail -n "${2:-30}" "$1" 2>/dev/null
}
