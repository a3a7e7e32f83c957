#!/usr/bin/env bash
# Test cluster_two_nodes (labels cluster, slurm; issue 18): the namespace cluster of
# tests/cluster/cluster_lib.sh (node1 + node2, veth shaped to RATE with tc tbf, SLURM,
# OpenMPI over TCP on that link only) runs
#   1. sbatch -N 2 --ntasks-per-node=1 slurm/study-multinode.sbatch tests/specs/tiny.yaml OUT
#      (one rank per node, MPI backend, the 1-rank twins, the allreduce benchmark at study
#      start), then `ddpscale report`;
#   2. mpirun with a hostfile (no SLURM; nsenter as the rsh agent): `ddpscale info` and the
#      same study with --no-commbench;
# and checks: every configuration file (tests/check_study.py), hosts node1 and node2 in
# study.h5, `info` and the report, NCCL_SOCKET_IFNAME recorded, the 1 MiB allreduce no faster
# than the shaped link allows, the link's byte counters (tc -s) showing the traffic crossed
# it, the job's cluster-JOBID.txt naming both nodes; then tears the cluster down and checks
# that no namespace, process, veth or temporary file is left.
#
#   bash tests/cluster/two_node_test.sh DDPSCALE_BIN WORK_DIR [RATE]     (as root; RATE: 1gbit)
#
# Exit 0: passed; 1: failed (logs printed); 77: the cluster cannot be built here.
set -uo pipefail
bin="${1:?usage: two_node_test.sh DDPSCALE_BIN WORK_DIR [RATE]}"
work="${2:?usage: two_node_test.sh DDPSCALE_BIN WORK_DIR [RATE]}"
rate="${3:-1gbit}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
spec="$root/tests/specs/tiny.yaml"
python="${DDPSCALE_H5PY_PYTHON:-/usr/bin/python3}"
# shellcheck source=cluster_lib.sh
source "$here/cluster_lib.sh"
# tests/specs/tiny.yaml written out (tests/check_study.py checks the grid).
expected=(--models mlp-medium --batches 8,16 --worlds 1,2 --runs 3 --warmup 1 --steps 5 --seed 7)

say() { echo "[cluster_two_nodes] $*"; }
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
case "$rate" in
  *gbit) rate_bps=$(( ${rate%gbit} * 1000000000 )) ;;
  *mbit) rate_bps=$(( ${rate%mbit} * 1000000 )) ;;
  *) fail "RATE must be like 1gbit or 100mbit, not $rate" ;;
esac

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
on_node 1 timeout 400 sbatch --wait --parsable -N 2 --ntasks-per-node=1 --gpus-per-node=0 --cpus-per-task=1 \
  --time=00:10:00 --job-name=ddpscale-2node --output="$CLUSTER_STATE/job-%j.out" --chdir="$root" \
  "$root/slurm/study-multinode.sbatch" "$spec" "$study" >"$CLUSTER_STATE/sbatch.out" 2>"$CLUSTER_STATE/sbatch.err"
rc=$?
job="$(head -n 1 "$CLUSTER_STATE/sbatch.out" | cut -d';' -f1)"
say "sbatch --wait returned $rc after $((SECONDS - t0)) s (job ${job:-none})"
cat "$CLUSTER_STATE/sbatch.err"
[ -n "$job" ] || fail "sbatch did not submit the job"
echo "----- job $job output -----"
cat "$CLUSTER_STATE/job-$job.out" 2>/dev/null || fail "the job wrote no output file"
[ "$rc" -eq 0 ] || fail "job $job exited with $rc"
grep -q '^\[sweep\] done' "$CLUSTER_STATE/job-$job.out" || fail "job $job output has no '[sweep] done' line"
sent1="$(( $(sent_bytes 1) - sent1_before ))"
sent2="$(( $(sent_bytes 2) - sent2_before ))"
say "bytes through the shaped link during the job: node1 -> node2 $sent1, node2 -> node1 $sent2"
on_node 1 tc -s qdisc show dev "$CLUSTER_IF" >>"$work/link.txt"
on_node 2 tc -s qdisc show dev "$CLUSTER_IF" >>"$work/link.txt"
# The study-start benchmark alone moves >= 25 x 64 MiB each way (5 warm-up + 20 timed).
[ "$sent1" -ge 1000000000 ] && [ "$sent2" -ge 1000000000 ] ||
  fail "less than 1 GB crossed the link each way: the ranks did not talk over it"

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
on_node 1 timeout 300 "${mpirun_nodes[@]}" "$bin" sweep "$spec" --out "$work/hostfile-study" --no-commbench ||
  fail "mpirun --hostfile ... ddpscale sweep failed"
say "hostfile study in $((SECONDS - t0)) s"
"$python" "$root/tests/check_study.py" check "$work/hostfile-study" "${expected[@]}" --no-commbench ||
  fail "the hostfile study is not right"
"$python" "$here/check_two_nodes.py" "$work/hostfile-study" || fail "the hostfile study did not run across node1 and node2"

# 3. Teardown leaves nothing behind.
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
