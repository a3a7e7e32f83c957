#!/usr/bin/env bash
# Test cluster_two_nodes (labels cluster, slurm): the namespace cluster of
# tests/cluster/cluster_lib.sh (node1 + node2, veth shaped to RATE with tc tbf, SLURM,
# OpenMPI over TCP on that link only) runs
#   1. sbatch -N 2 --ntasks-per-node=1 slurm/study-multinode.sbatch tests/specs/tiny.yaml OUT
#      (one rank per node, MPI backend, the 1-rank twins, the allreduce benchmark at study
#      start), then `ddpscale report`;
#   2. mpirun with a hostfile (no SLURM; nsenter as the rsh agent): `ddpscale info` and the
#      the same grid with 200 steps a run (tests/specs/two-node.yaml) with --no-commbench;
# and checks: every configuration file (tests/check_study.py), hosts node1 and node2 in
# study.h5, `info` and the report, NCCL_SOCKET_IFNAME recorded, the 1 MiB allreduce no faster
# than the shaped link allows, the link's byte counters (tc -s) showing the traffic crossed
# it, the job's cluster-JOBID.txt naming both nodes;
#   3. a third sbatch study (two-node.yaml, --no-commbench --comm-timeout 10) whose rank on node2 is SIGKILLed
#      once the first configuration file exists: the job must end within --comm-timeout, and
#      `scontrol requeue` must resume it (--resume, added by study.sbatch) to the full study with
#      nothing lost, changed or duplicated (tests/check_study.py check + compare);
# then tears the cluster down and checks
# that no namespace, process, veth or temporary file is left.
#
#   bash tests/cluster/two_node_test.sh DDPSCALE_BIN WORK_DIR [RATE]     (as root; RATE: 4gbit)
#
# 4 Gbit/s by default: slow enough that the link, not the veth, sets the allreduce time, and
# fast enough that the suite does not wait on gigabytes at 1 Gbit/s (docs/multinode.md).
#
# Exit 0: passed; 1: failed (logs printed); 77: the cluster cannot be built here.
set -uo pipefail
bin="${1:?usage: two_node_test.sh DDPSCALE_BIN WORK_DIR [RATE]}"
work="${2:?usage: two_node_test.sh DDPSCALE_BIN WORK_DIR [RATE]}"
rate="${3:-4gbit}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
spec="$root/tests/specs/tiny.yaml"
python="${DDPSCALE_H5PY_PYTHON:-/usr/bin/python3}"
# shellcheck source=cluster_lib.sh
source "$here/cluster_lib.sh"
# tests/specs/tiny.yaml written out (tests/check_study.py checks the grid).
expected=(--models mlp-medium --batches 8,16 --worlds 1,2 --runs 3 --warmup 1 --steps 5 --seed 7)
# The hostfile and kill studies: tests/specs/two-node.yaml (tiny's grid, 200 steps a run, so the
# kill lands mid-study), written out likewise.
long_spec="$root/tests/specs/two-node.yaml"
expected_long=(--models mlp-medium --batches 8,16 --worlds 1,2 --runs 3 --warmup 1 --steps 200 --seed 7)

say() { echo "[cluster_two_nodes] $*"; }
job_state() { on_node 1 scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1; }
# The state JOB ends in, polled every 0.5 s for at most SECONDS ("TIMEOUT" past them); a
# requeued job waiting to start again (REQUEUED) has not ended. Not `sbatch --wait`, whose
# polls grow apart: it returned 30 s after a 10 s job had ended.
job_end_state() {
  local job="$1" deadline=$((SECONDS + $2)) state
  while :; do
    state="$(job_state "$job")"
    case "$state" in PENDING|RUNNING|CONFIGURING|COMPLETING|REQUEUED|"") ;; *) echo "$state"; return ;; esac
    [ "$SECONDS" -lt "$deadline" ] || { echo TIMEOUT; return; }
    sleep 0.5
  done
}
fail() {
  say "FAIL: $*"
  cluster_show_logs
  exit 1
}
finish() {
  local status=$?
  trap - EXIT INT TERM
  cluster_down
  exit "$status"
}
trap finish EXIT
trap 'say "interrupted"; exit 1' INT TERM

why="$(cluster_preflight)" || { say "SKIPPED: $why"; exit 77; }
[ -x "$bin" ] || fail "ddpscale executable $bin not found"
"$python" -c 'import h5py, numpy' 2>/dev/null || { say "SKIPPED: h5py/numpy missing for $python"; exit 77; }
rate_bps="$(cluster_rate_bits_per_s "$rate")" || fail "RATE must be like 1gbit or 100mbit, not $rate"

start=$SECONDS
cluster_up "$rate" slurm
case $? in
  0) ;;
  2) cluster_show_logs; say "SKIPPED: munge or a SLURM daemon cannot start here"; exit 77 ;;
  *) fail "the cluster did not come up" ;;
esac
say "cluster up in $((SECONDS - start)) s"
cluster_link_description
rm -rf "$work"
mkdir -p "$work"
cluster_link_description >"$work/link.txt"

sent_bytes() {  # bytes node N has sent through the link's qdisc so far
  on_node "$1" tc -s qdisc show dev "$CLUSTER_IF" | awk '/Sent/ {print $2; exit}'
}
sent1_before="$(sent_bytes 1)"
sent2_before="$(sent_bytes 2)"

# 1. The users' SLURM launch: sbatch -N 2 on the multi-node job script, from node1.
study="$work/sbatch-study"
export DDPSCALE_BIN="$bin" NCCL_SOCKET_IFNAME="$CLUSTER_IF"
t0=$SECONDS
on_node 1 sbatch --parsable -N 2 --ntasks-per-node=1 --gpus-per-node=0 --cpus-per-task=1 \
  --time=00:10:00 --job-name=ddpscale-2node --output="$CLUSTER_STATE/job-%j.out" --chdir="$root" \
  "$root/slurm/study-multinode.sbatch" "$spec" "$study" >"$CLUSTER_STATE/sbatch.out" 2>"$CLUSTER_STATE/sbatch.err"
job="$(head -n 1 "$CLUSTER_STATE/sbatch.out" | cut -d';' -f1)"
cat "$CLUSTER_STATE/sbatch.err"
[ -n "$job" ] || fail "sbatch did not submit the job"
state="$(job_end_state "$job" 400)"
say "job $job ended $state after $((SECONDS - t0)) s"
echo "----- job $job output -----"
cat "$CLUSTER_STATE/job-$job.out" 2>/dev/null || fail "the job wrote no output file"
[ "$state" = COMPLETED ] || fail "job $job ended $state"
grep -q '^\[sweep\] done' "$CLUSTER_STATE/job-$job.out" || fail "job $job output has no '[sweep] done' line"
sent1="$(( $(sent_bytes 1) - sent1_before ))"
sent2="$(( $(sent_bytes 2) - sent2_before ))"
say "bytes through the shaped link during the job: node1 -> node2 $sent1, node2 -> node1 $sent2"
on_node 1 tc -s qdisc show dev "$CLUSTER_IF" >>"$work/link.txt"
on_node 2 tc -s qdisc show dev "$CLUSTER_IF" >>"$work/link.txt"
# The study-start benchmark alone moves at least 4 x 64 MiB each way (its largest size runs
# at least 1 warm-up + kMinTimedIters = 3 timed ops, comm/commbench.hpp).
least=$(( 4 * 64 * 1024 * 1024 ))
[ "$sent1" -ge "$least" ] && [ "$sent2" -ge "$least" ] ||
  fail "less than $least bytes crossed the link each way: the ranks did not talk over it"

"$python" "$root/tests/check_study.py" check "$study" "${expected[@]}" || fail "the sbatch study in $study is not right"
"$python" "$here/check_two_nodes.py" "$study" --rate-bits-per-s "$rate_bps" --ifname "$CLUSTER_IF" ||
  fail "the sbatch study did not run across node1 and node2 over the shaped link"
record="$study/cluster-$job.txt"
[ -f "$record" ] || fail "the job script wrote no $record"
cat "$record"
grep -q '== node1' "$record" && grep -q '== node2' "$record" && grep -q 'tbf' "$record" ||
  fail "$record does not name both nodes and the shaped link"
"$bin" report "$study" --out "$work/sbatch-report" || fail "ddpscale report failed"
grep -E '^\| hosts \| node1, node2 \|' "$work/sbatch-report/report.md" || fail "the report's test configuration does not name node1 and node2"
grep -E 'NCCL variables in effect.*NCCL\\?_SOCKET\\?_IFNAME=ddp0' "$work/sbatch-report/report.md" ||
  fail "the report does not show NCCL_SOCKET_IFNAME=ddp0"

# 2. The other documented launch: mpirun with a hostfile, no SLURM (nsenter as rsh agent).
mpirun_nodes=(mpirun --hostfile "$CLUSTER_HOSTFILE" --mca plm_rsh_agent "$CLUSTER_RSH_AGENT"
  --mca plm_rsh_no_tree_spawn 1 -np 2 --map-by node --bind-to none)
on_node 1 timeout 60 "${mpirun_nodes[@]}" "$bin" info >"$work/info.json" 2>"$CLUSTER_STATE/info.err" ||
  { cat "$CLUSTER_STATE/info.err"; fail "mpirun --hostfile ... ddpscale info failed"; }
"$python" -c 'import json, sys; h = json.load(open(sys.argv[1]))["ranks"]["hosts"]; print("info hosts:", h); sys.exit(h != ["node1", "node2"])' \
  "$work/info.json" || fail "ddpscale info does not name node1 and node2"
t0=$SECONDS
on_node 1 timeout 300 "${mpirun_nodes[@]}" "$bin" sweep "$long_spec" --out "$work/hostfile-study" --no-commbench ||
  fail "mpirun --hostfile ... ddpscale sweep failed"
say "hostfile study in $((SECONDS - t0)) s"
"$python" "$root/tests/check_study.py" check "$work/hostfile-study" "${expected_long[@]}" --no-commbench ||
  fail "the hostfile study is not right"
"$python" "$here/check_two_nodes.py" "$work/hostfile-study" || fail "the hostfile study did not run across node1 and node2"

# 3. Faults across nodes: the rank on node2 SIGKILLed mid-study ends the job on node1 within
# --comm-timeout, and the requeued job (scontrol requeue: the same script, arguments and OUT;
# study.sbatch adds --resume because OUT/study.h5 exists) completes the study with every
# configuration exactly once, the files finished before the kill untouched, no *.tmp left.
comm_timeout=10
kstudy="$work/kill-study"
config_files() { local f; for f in "$1"/*.h5; do [ -e "$f" ] && [ "${f##*/}" != study.h5 ] && echo "${f##*/}"; done | sort; }
tmp_files() { find "$1" -name '*.tmp' 2>/dev/null | sort; }
node_ranks() {  # pids of ddpscale processes in node N's namespaces
  # Only ddpscale's processes are looked at (not every process's namespace, a readlink each:
  # seconds on a loaded machine, while the kill must land before the study ends).
  local pid ns
  ns="$(readlink "/proc/${cluster_holders[$(($1 - 1))]}/ns/net" 2>/dev/null)" || return 0
  # A rank starts as ddpscale and trains as ddpscale-torch (exec, same PID).
  for pid in $(pgrep -x 'ddpscale|ddpscale-torch'); do
    [ "$(readlink "/proc/$pid/ns/net" 2>/dev/null)" = "$ns" ] && echo "$pid"
  done
}
t0=$SECONDS
on_node 1 sbatch --parsable -N 2 --ntasks-per-node=1 --gpus-per-node=0 --cpus-per-task=1 --time=00:10:00 \
  --requeue --open-mode=append --job-name=ddpscale-kill --output="$CLUSTER_STATE/job-%j.out" --chdir="$root" \
  "$root/slurm/study-multinode.sbatch" "$long_spec" "$kstudy" --no-commbench --comm-timeout "$comm_timeout" \
  >"$CLUSTER_STATE/sbatch-kill.out" 2>&1 || { cat "$CLUSTER_STATE/sbatch-kill.out"; fail "sbatch of the kill study failed"; }
kjob="$(head -n 1 "$CLUSTER_STATE/sbatch-kill.out" | cut -d';' -f1)"
deadline=$((SECONDS + 120))
# The study's folder is looked at every 0.05 s; the job's state (scontrol, which takes seconds
# on a loaded machine) only every 2 s, so the kill follows the first stored files closely.
next_state_check=$SECONDS
while [ -z "$(config_files "$kstudy")" ]; do
  if [ "$SECONDS" -ge "$next_state_check" ]; then
    case "$(job_state "$kjob")" in PENDING|RUNNING|CONFIGURING|"") ;; *) fail "job $kjob ended before any configuration file appeared";; esac
    next_state_check=$((SECONDS + 2))
  fi
  [ "$SECONDS" -lt "$deadline" ] || fail "no configuration file in $kstudy after 120 s"
  sleep 0.05
done
mapfile -t victims < <(node_ranks 2)
[ "${#victims[@]}" -eq 1 ] || fail "expected one ddpscale rank on node2, found ${#victims[@]}: ${victims[*]}"
mapfile -t node1_ranks < <(node_ranks 1)
kill -KILL "${victims[0]}"
killed_at=$(date +%s.%N)
say "SIGKILLed rank pid ${victims[0]} on node2 (job $kjob, $((SECONDS - t0)) s in)"
while :; do
  state="$(job_state "$kjob")"
  case "$state" in RUNNING|COMPLETING|CONFIGURING) ;; *) break ;; esac
  [ "$(echo "$(date +%s.%N) - $killed_at > $comm_timeout + 30" | bc)" -eq 0 ] || fail "job $kjob still $state 30 s past --comm-timeout"
  sleep 0.1
done
ended_after="$(echo "$(date +%s.%N) - $killed_at" | bc)"
say "job $kjob left RUNNING ($state) ${ended_after} s after the kill (--comm-timeout $comm_timeout)"
echo "----- job $kjob output (killed) -----"
cat "$CLUSTER_STATE/job-$kjob.out"
[ "$(echo "$ended_after <= $comm_timeout" | bc)" -eq 1 ] ||
  fail "the job on node1 took ${ended_after} s to end after its peer on node2 died, more than --comm-timeout $comm_timeout"
mapfile -t done_at_kill < <(config_files "$kstudy")
sums_at_kill="$(cd "$kstudy" && md5sum -- "${done_at_kill[@]}")"
say "${#done_at_kill[@]} of 4 configuration file(s) complete when the job ended: ${done_at_kill[*]}"
[ "${#done_at_kill[@]}" -lt 4 ] || fail "the study had finished before the kill; the test proves nothing"
for pid in "${node1_ranks[@]}"; do
  kill -0 "$pid" 2>/dev/null && fail "rank pid $pid on node1 still runs after job $kjob ended"
done
[ -z "$(node_ranks 1)$(node_ranks 2)" ] || fail "ddpscale processes left on the nodes after job $kjob ended"
# The requeue: the same job, started again by SLURM (cred_expire=10 in cluster_lib.sh's
# slurm.conf delays it 10 s instead of 120).
t0=$SECONDS
on_node 1 scontrol requeue "$kjob" || fail "scontrol requeue $kjob failed"
# SLURM holds a requeued job back until BeginTime (cred_expire after the requeue). Started
# before the killed job's credential has expired, slurmctld kills it at once ("Job credential
# revoked", as seen in CI); so wait cred_expire (10 s) and a second, then start it
# now, as an administrator would, so the test does not wait for the scheduler's next pass.
sleep 11
on_node 1 scontrol update JobId="$kjob" StartTime=now >/dev/null 2>&1 || true
state="$(job_end_state "$kjob" $((180 - (SECONDS - t0))))"
[ "$state" != TIMEOUT ] || fail "requeued job $kjob not COMPLETED after 180 s"
[ "$state" = COMPLETED ] || fail "requeued job $kjob ended $state"
say "requeued job $kjob COMPLETED $((SECONDS - t0)) s after scontrol requeue"
echo "----- job $kjob output (killed, then requeued) -----"
cat "$CLUSTER_STATE/job-$kjob.out"
grep -q "(${#done_at_kill[@]} already done)" "$CLUSTER_STATE/job-$kjob.out" ||
  fail "the requeued job did not resume (no '(${#done_at_kill[@]} already done)' in its output)"
[ "$sums_at_kill" = "$(cd "$kstudy" && md5sum -- "${done_at_kill[@]}")" ] ||
  fail "configuration files complete before the kill were changed by the resumed job"
[ -z "$(tmp_files "$kstudy")" ] || fail "temporary files left in $kstudy: $(tmp_files "$kstudy" | tr '\n' ' ')"
"$python" "$root/tests/check_study.py" check "$kstudy" "${expected_long[@]}" --no-commbench ||
  fail "the killed and requeued study is not right"
"$python" "$root/tests/check_study.py" compare "$work/hostfile-study" "$kstudy" ||
  fail "the killed and requeued study differs from the uninterrupted hostfile study"
"$python" "$here/check_two_nodes.py" "$kstudy" || fail "the killed and requeued study did not run across node1 and node2"

# 4. Teardown leaves nothing behind.
holders=("${cluster_holders[@]}")
state="$CLUSTER_STATE"
daemons=("${cluster_pids[@]}")
node_ns=()
for pid in "${holders[@]}"; do
  node_ns+=("$(readlink "/proc/$pid/ns/net")" "$(readlink "/proc/$pid/ns/uts")")
done
cluster_down
for pid in "${holders[@]}" "${daemons[@]}"; do
  kill -0 "$pid" 2>/dev/null && fail "process $pid still runs after teardown"
done
[ -e "$state" ] && fail "$state still exists after teardown"
ip -o link show | grep -q "ddpv$$" && fail "a veth end is left in the root namespace"
for p in /proc/[0-9]*; do
  for ns in net uts; do
    id="$(readlink "$p/ns/$ns" 2>/dev/null)" || continue
    for gone in "${node_ns[@]}"; do
      [ "$id" = "$gone" ] && fail "process ${p#/proc/} is still in node namespace $id after teardown"
    done
  done
done
grep -q "$state" /proc/mounts && fail "a mount under $state is left"
say "teardown: no process in the nodes' namespaces (${node_ns[*]}), no veth, no $state"
say "PASSED in $((SECONDS - start)) s"
