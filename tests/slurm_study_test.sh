#!/usr/bin/env bash
# Test slurm_study (label slurm): a one-node SLURM cluster on localhost runs
# slurm/study.sbatch on a tiny CPU spec, and the job's HDF5 output is checked with h5py.
#
#   bash tests/slurm_study_test.sh DDPSCALE_BIN OUT_DIR [SPEC]      (as root)
#
# Starts munged, slurmctld and slurmd from Debian's munge and slurm-wlm (scripts/setup.sh
# installs them) with every file under a fresh temporary folder -- its own munge key and
# socket, its own slurm.conf (SLURM_CONF), free TCP ports, no cgroups, no systemd -- and
# stops all three at exit, whatever happens. Nothing under /etc or /run is used or changed.
# Exit 0: passed; 1: failed (the daemon logs and the job's output are printed);
# 77: SLURM cannot run here (not root, not installed, a daemon refuses to start).
set -uo pipefail

bin="${1:?usage: slurm_study_test.sh DDPSCALE_BIN OUT_DIR [SPEC]}"
out="${2:?usage: slurm_study_test.sh DDPSCALE_BIN OUT_DIR [SPEC]}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
spec="${3:-$here/specs/tiny.yaml}"
python="${DDPSCALE_H5PY_PYTHON:-/usr/bin/python3}"
# The grid of tests/specs/tiny.yaml, written out: the job must leave exactly these.
expected=(--models mlp-medium --batches 8,16 --worlds 1,2 --runs 3 --warmup 1 --steps 5 --seed 7)

say() { echo "[slurm_study] $*"; }
skip() { say "SKIPPED: $*"; exit 77; }

state=""
pids=()
show_logs() {
  [ -n "$state" ] || return 0
  for f in "$state"/munged.log "$state"/slurmctld.log "$state"/slurmd.log "$state"/job-*.out; do
    [ -f "$f" ] || continue
    echo "----- $f (last 40 lines) -----"
    tail -n 40 "$f"
  done
}
fail() {
  say "FAIL: $*"
  show_logs
  exit 1
}

# Stops what this script started, newest first: jobs, slurmd, slurmctld, munged.
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [ -n "$state" ] && [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then
    if timeout 10 squeue -h -o %i 2>/dev/null | grep -q .; then
      say "cancelling jobs still in the queue"
      timeout 10 scancel --full --partition=debug 2>/dev/null
      for _ in $(seq 1 30); do
        timeout 5 squeue -h -o %i 2>/dev/null | grep -q . || break
        sleep 1
      done
    fi
  fi
  local i pid
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid="${pids[$i]}"
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  [ -n "$state" ] && rm -rf "$state"
  exit "$status"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 1' INT TERM

[ "$(id -u)" -eq 0 ] || skip "needs root (slurmd runs jobs as any user; here every daemon runs as root)"
for cmd in munged slurmctld slurmd sbatch sinfo squeue scontrol scancel; do
  command -v "$cmd" >/dev/null 2>&1 || skip "$cmd not found (Debian: apt-get install slurm-wlm munge)"
done
[ -x "$bin" ] || fail "ddpscale executable $bin not found"
[ -f "$spec" ] || fail "spec $spec not found"

# A short path: munge's socket must fit a sockaddr_un.
state="$(mktemp -d /tmp/ddpscale-slurm.XXXXXX)" || skip "cannot create a temporary folder"
chmod 700 "$state"
mkdir -p "$state/ctld" "$state/spool"

free_port() {
  "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
ctld_port="$(free_port)" || fail "no free TCP port"
slurmd_port="$(free_port)" || fail "no free TCP port"
[ "$ctld_port" != "$slurmd_port" ] || slurmd_port="$(free_port)"

# munge: a fresh key, our own socket; root-owned files in a 0700 folder satisfy its checks.
head -c 1024 /dev/urandom >"$state/munge.key"
chmod 400 "$state/munge.key"
munged --foreground --force --socket="$state/munge.sock" --key-file="$state/munge.key" \
  --pid-file="$state/munged.pid" --log-file="$state/munged.log" --seed-file="$state/munged.seed" \
  >>"$state/munged.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do
  [ -S "$state/munge.sock" ] && break
  kill -0 "${pids[0]}" 2>/dev/null || break
  sleep 0.2
done
[ -S "$state/munge.sock" ] || { show_logs; skip "munged did not start"; }
if ! munge -n -S "$state/munge.sock" | unmunge -S "$state/munge.sock" >/dev/null 2>&1; then
  show_logs
  skip "munge cannot encode and decode a credential here"
fi

cpus="$(nproc)"
[ "$cpus" -ge 2 ] || cpus=2  # 2 tasks x 1 CPU; config_overrides trusts this over the hardware
cat >"$state/slurm.conf" <<EOF
# One node on localhost for tests/slurm_study_test.sh; everything under $state.
# The daemons run in the foreground (-D) and log to stderr, captured in $state/*.log.
ClusterName=ddpscaletest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge.sock
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$state/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MailProg=/bin/true
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
: >"$state/plugstack.conf"
export SLURM_CONF="$state/slurm.conf"

slurmctld -D -i -f "$SLURM_CONF" >>"$state/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >>"$state/slurmd.log" 2>&1 &
pids+=($!)

say "waiting for node localhost to be idle (slurmctld port $ctld_port, slurmd port $slurmd_port)"
node_state=""
for _ in $(seq 1 120); do
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || { show_logs; skip "a SLURM daemon exited at start (pid $pid); see the logs above"; }
  done
  node_state="$(timeout 5 sinfo -h -n localhost -o %t 2>/dev/null | head -n 1)"
  [ "$node_state" = idle ] && break
  sleep 0.5
done
if [ "$node_state" != idle ]; then
  timeout 5 scontrol show node localhost 2>&1
  fail "node localhost is '${node_state:-unknown}', not idle, after 60 s"
fi
say "node idle; submitting slurm/study.sbatch with $spec"

# The sbatch file asks for 2 GPUs per node: this CPU cluster has none, so the command line
# overrides that (and the CPUs per task) -- exactly what the file's header invites.
rm -rf "$out"
mkdir -p "$(dirname "$out")"
export DDPSCALE_BIN="$bin"
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
start=$SECONDS
timeout 600 sbatch --wait --parsable --gpus-per-node=0 --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 \
  --time=00:10:00 --job-name=ddpscale-ci --output="$state/job-%j.out" --chdir="$root" \
  "$root/slurm/study.sbatch" "$spec" "$out" >"$state/sbatch.out" 2>"$state/sbatch.err"
rc=$?
job="$(head -n 1 "$state/sbatch.out" | cut -d';' -f1)"
say "sbatch --wait returned $rc after $((SECONDS - start)) s (job ${job:-none})"
cat "$state/sbatch.err"
[ -n "$job" ] || fail "sbatch did not submit the job"
[ "$rc" -ne 124 ] || { timeout 5 scontrol show job "$job"; fail "job $job did not finish within 600 s"; }
echo "----- job $job output -----"
cat "$state/job-$job.out" 2>/dev/null || fail "the job wrote no output file"
[ "$rc" -eq 0 ] || fail "job $job exited with $rc"
grep -q '^\[sweep\] done' "$state/job-$job.out" || fail "job $job output has no '[sweep] done' line"
# The job's own record, while slurmctld still holds it (MinJobAge): state and exit code.
job_info="$(timeout 5 scontrol show job "$job" 2>/dev/null)"
if [ -n "$job_info" ]; then
  echo "$job_info" | grep -Eo 'JobState=[A-Z]+|ExitCode=[0-9:]+|NumTasks=[0-9]+' | tr '\n' ' '
  echo
  echo "$job_info" | grep -q 'JobState=COMPLETED' || fail "job $job is not COMPLETED"
  echo "$job_info" | grep -q 'ExitCode=0:0' || fail "job $job exit code is not 0:0"
fi

"$python" "$here/check_study.py" check "$out" "${expected[@]}" || fail "the job's study in $out is not right"
say "PASSED in $((SECONDS - start)) s after submission"
