# shellcheck shell=bash
# A two-node cluster made of Linux namespaces on one machine; sourced by
# tests/cluster/two_node_cluster.sh and tests/cluster/two_node_test.sh. docs/multinode.md
# describes it.
#
#   node1                                    node2
#   net + UTS namespace, hostname node1      net + UTS namespace, hostname node2
#   ddp0 10.77.0.1/24  <===== veth =====>     ddp0 10.77.0.2/24     (tc tbf on both ends)
#   slurmctld, slurmd -N node1               slurmd -N node2
#   sbatch / mpirun (the "login node")       orted + rank 1
#
# munged runs in the root namespaces: its socket is a file, reachable from both nodes.
# The mount namespace is NOT separated: both nodes see the same file system (like a cluster's
# shared home), so a study folder written by rank 0 on node1 is visible everywhere.
#
# Each node is a holder process (`unshare --net --uts`, then `sleep`) whose namespaces the
# other processes enter with nsenter; nothing is bind-mounted (no `ip netns add`), so killing
# the holders and everything started in their namespaces removes the namespaces and the veth
# pair with them. cluster_down does that, and also kills stray processes found in the
# namespaces (by /proc/PID/ns/net), so nothing is left behind.
#
# Functions: cluster_preflight (exit 77 reasons), cluster_up RATE, on_node N CMD...,
# cluster_down. Variables after cluster_up: CLUSTER_STATE (a 0700 folder), CLUSTER_IF (ddp0),
# SLURM_CONF, CLUSTER_HOSTFILE, CLUSTER_RSH_AGENT, CLUSTER_NODE1_PID/CLUSTER_NODE2_PID, and OMPI_MCA_* exported for TCP-only MPI.

CLUSTER_IF=ddp0
CLUSTER_NET=10.77.0
CLUSTER_STATE=""
CLUSTER_RATE=""
cluster_pids=()       # daemons started here, in start order
cluster_holders=()    # holder pids of node1 and node2
cluster_cpus=()       # the CPU lists node1 and node2 own (cluster_node_cpus)
cluster_veth=""

cluster_say() { echo "[cluster] $*"; }

# Prints why the cluster cannot be built here and returns 1, or returns 0.
cluster_preflight() {
  if [ "$(id -u)" -ne 0 ]; then echo "needs root (network namespaces, veth, slurmd)"; return 1; fi
  local cmd
  for cmd in unshare nsenter taskset python3 ip tc munged munge unmunge slurmctld slurmd sbatch sinfo squeue scontrol scancel srun mpirun; do
    command -v "$cmd" >/dev/null 2>&1 || { echo "$cmd not found (Debian: apt-get install util-linux iproute2 slurm-wlm munge openmpi-bin)"; return 1; }
  done
  if ! unshare --net --uts true 2>/dev/null; then echo "cannot create network/UTS namespaces here (unshare --net --uts failed)"; return 1; fi
  local probe="ddpprobe$$"
  probe="${probe:0:15}"
  if ! ip link add "${probe}a" type veth peer name "${probe}b" 2>/dev/null; then
    echo "cannot create a veth pair here (ip link add type veth failed)"
    return 1
  fi
  ip link del "${probe}a" 2>/dev/null
  return 0
}

# The CPUs node N owns: its half of this process's CPU mask (node1 the lower), so each node's
# ranks size their thread pools to their own cores and the two nodes do not oversubscribe one
# machine (2 ranks x 2 spinning intra-op threads on 2 cores made a 2-rank step 5x slower).
# Every CPU where the mask has only one.
cluster_node_cpus() {
  python3 -c '
import os, sys
cpus = sorted(os.sched_getaffinity(0))
half = len(cpus) // 2
mine = cpus if half == 0 else cpus[:half] if sys.argv[1] == "1" else cpus[half:]
print(",".join(map(str, mine)))' "$1"
}

# Runs CMD inside node N's network and UTS namespaces (hostname nodeN), same file system, on
# node N's CPUs.
on_node() {
  local n="$1"
  shift
  local cpus="${cluster_cpus[$((n - 1))]:-}"
  if [ -n "$cpus" ]; then
    taskset -c "$cpus" nsenter -t "${cluster_holders[$((n - 1))]}" -n -u -- "$@"
  else
    nsenter -t "${cluster_holders[$((n - 1))]}" -n -u -- "$@"
  fi
}

# Pids of every process whose network namespace is node N's (the holder included).
cluster_node_pids() {
  local holder="$1" ns pid
  ns="$(readlink "/proc/$holder/ns/net" 2>/dev/null)" || return 0
  for pid in /proc/[0-9]*; do
    pid="${pid#/proc/}"
    [ "$(readlink "/proc/$pid/ns/net" 2>/dev/null)" = "$ns" ] && echo "$pid"
  done
}

cluster_wait_gone() {
  local pid="$1" _
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
}

cluster_show_logs() {
  [ -n "$CLUSTER_STATE" ] && [ -d "$CLUSTER_STATE" ] || return 0
  local f
  for f in "$CLUSTER_STATE"/*.log "$CLUSTER_STATE"/job-*.out; do
    [ -f "$f" ] || continue
    echo "----- $f (last 40 lines) -----"
    tail -n 40 "$f"
  done
}

# Tears everything down; safe to call twice and after a partial cluster_up.
cluster_down() {
  if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ] && [ ${#cluster_holders[@]} -ge 1 ]; then
    if timeout 10 nsenter -t "${cluster_holders[0]}" -n -u -- squeue -h -o %i 2>/dev/null | grep -q .; then
      cluster_say "cancelling jobs still in the queue"
      timeout 10 nsenter -t "${cluster_holders[0]}" -n -u -- scancel --full --partition=debug 2>/dev/null
      local _
      for _ in $(seq 1 20); do
        timeout 5 nsenter -t "${cluster_holders[0]}" -n -u -- squeue -h -o %i 2>/dev/null | grep -q . || break
        sleep 0.5
      done
    fi
  fi
  local i pid
  # Daemons, newest first, with TERM and then KILL.
  for ((i = ${#cluster_pids[@]} - 1; i >= 0; i--)); do
    pid="${cluster_pids[$i]}"
    kill -TERM "$pid" 2>/dev/null || continue
    cluster_wait_gone "$pid"
    wait "$pid" 2>/dev/null
  done
  cluster_pids=()
  # Anything else still in a node's namespaces (job steps, orted, ranks), then the holders.
  local holder
  for holder in "${cluster_holders[@]}"; do
    for pid in $(cluster_node_pids "$holder"); do
      [ "$pid" = "$holder" ] && continue
      kill -KILL "$pid" 2>/dev/null
    done
    kill -KILL "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null
  done
  cluster_holders=()
  cluster_cpus=()
  # The veth pair goes with node1's namespace; if cluster_up stopped before moving it there,
  # its root-namespace ends are deleted here.
  if [ -n "$cluster_veth" ]; then
    ip link del "${cluster_veth}a" 2>/dev/null
    ip link del "${cluster_veth}b" 2>/dev/null
    cluster_veth=""
  fi
  if [ -n "$CLUSTER_STATE" ] && [ -d "$CLUSTER_STATE" ]; then
    rm -rf "$CLUSTER_STATE"
  fi
  CLUSTER_STATE=""
}

# tc tbf on one end: RATE like 1gbit or 100mbit; "none" leaves the veth unshaped.
cluster_shape() {
  local n="$1" rate="$2"
  on_node "$n" tc qdisc del dev "$CLUSTER_IF" root 2>/dev/null
  [ "$rate" = none ] && return 0
  # burst: what the rate sends in about 0.25 ms, at least 32 KiB (a few MTU-sized packets):
  # a smaller bucket cannot refill fast enough between timer ticks to reach multi-Gbit/s rates;
  # latency: how long a packet may queue before it is dropped, large enough that TCP is
  # shaped rather than dropped.
  on_node "$n" tc qdisc add dev "$CLUSTER_IF" root tbf rate "$rate" burst "${CLUSTER_TBF_BURST:-$(cluster_burst "$rate")}" latency 100ms
}

# RATE in tc's syntax (4gbit, 500mbit) as bits per second; fails on any other form.
cluster_rate_bits_per_s() {
  case "$1" in
    *gbit) echo $(( ${1%gbit} * 1000000000 )) ;;
    *mbit) echo $(( ${1%mbit} * 1000000 )) ;;
    *) return 1 ;;
  esac
}

# The default tbf bucket for RATE, in tc's kb.
cluster_burst() {
  local bits_per_s
  bits_per_s="$(cluster_rate_bits_per_s "$1")" || bits_per_s=0
  local kb=$(( bits_per_s / 8 / 4000 / 1024 ))
  [ "$kb" -ge 32 ] || kb=32
  echo "${kb}kb"
}

# Sets both ends to RATE (or none) at any time while the cluster is up.
cluster_set_rate() {
  cluster_shape 1 "$1" && cluster_shape 2 "$1" && CLUSTER_RATE="$1"
}

# Writes a description of the link (recorded next to studies by the tests).
cluster_link_description() {
  echo "link: veth pair between network namespaces node1 and node2 on one host ($(hostname))"
  echo "interface: $CLUSTER_IF (node1 $CLUSTER_NET.1/24, node2 $CLUSTER_NET.2/24)"
  echo "shaping: ${CLUSTER_RATE:-none} (tc tbf, both directions)"
  echo "latency: the veth's own (no netem on this kernel, so none is added)"
  local n
  for n in 1 2; do
    echo "node$n qdisc: $(on_node "$n" tc qdisc show dev "$CLUSTER_IF" | head -n 1)"
  done
}

# cluster_up RATE [slurm|noslurm]: namespaces, veth, shaping, munge, slurmctld, two slurmds.
cluster_up() {
  local rate="${1:-none}" with_slurm="${2:-slurm}" n
  CLUSTER_STATE="$(mktemp -d /tmp/ddpc.XXXXXX)" || return 1
  chmod 700 "$CLUSTER_STATE"
  cluster_cpus=("$(cluster_node_cpus 1)" "$(cluster_node_cpus 2)")
  for n in 1 2; do
    # The holder: its own network and UTS namespaces, hostname nodeN, then sleep.
    unshare --net --uts -- sh -c "hostname node$n && exec sleep 100000" &
    cluster_holders+=($!)
  done
  for n in 1 2; do
    local _
    for _ in $(seq 1 50); do
      [ "$(on_node "$n" hostname 2>/dev/null)" = "node$n" ] && break
      sleep 0.1
    done
    [ "$(on_node "$n" hostname 2>/dev/null)" = "node$n" ] || { cluster_say "node$n did not come up"; return 1; }
  done
  cluster_veth="ddpv$$"
  cluster_veth="${cluster_veth:0:14}"
  ip link add "${cluster_veth}a" type veth peer name "${cluster_veth}b" || return 1
  ip link set "${cluster_veth}a" netns "${cluster_holders[0]}" || return 1
  ip link set "${cluster_veth}b" netns "${cluster_holders[1]}" || return 1
  on_node 1 ip link set "${cluster_veth}a" name "$CLUSTER_IF" || return 1
  on_node 2 ip link set "${cluster_veth}b" name "$CLUSTER_IF" || return 1
  cluster_veth=""  # both ends live in the namespaces now and go with them
  for n in 1 2; do
    on_node "$n" ip link set lo up || return 1
    on_node "$n" ip addr add "$CLUSTER_NET.$n/24" dev "$CLUSTER_IF" || return 1
    on_node "$n" ip link set "$CLUSTER_IF" up || return 1
  done
  cluster_set_rate "$rate" || { cluster_say "tc tbf failed on $CLUSTER_IF"; return 1; }
  cluster_say "node1 ($CLUSTER_NET.1) and node2 ($CLUSTER_NET.2) joined by $CLUSTER_IF, shaping: $rate"

  # OpenMPI: TCP between the nodes over ddp0 only; no shared memory (vader excluded).
  export OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include="$CLUSTER_IF" OMPI_MCA_oob_tcp_if_include="$CLUSTER_IF"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # Without SLURM: a hostfile, and an rsh agent that "logs in" with nsenter instead of ssh.
  CLUSTER_HOSTFILE="$CLUSTER_STATE/hostfile"
  printf 'node1 slots=1\nnode2 slots=1\n' >"$CLUSTER_HOSTFILE"
  CLUSTER_RSH_AGENT="$CLUSTER_STATE/rsh-agent"
  cat >"$CLUSTER_RSH_AGENT" <<EOF
#!/bin/bash
# OpenMPI's plm_rsh_agent for the namespace cluster: "rsh-agent NODE COMMAND..." runs the
# command (orted's launch line, meant for a remote login shell) inside NODE's namespaces.
node="\$1"; shift
case "\$node" in
  node1) holder=${cluster_holders[0]} cpus=${cluster_cpus[0]} ;;
  node2) holder=${cluster_holders[1]} cpus=${cluster_cpus[1]} ;;
  *) echo "rsh-agent: unknown node \$node" >&2; exit 255 ;;
esac
exec taskset -c "\$cpus" nsenter -t "\$holder" -n -u -- /bin/sh -c "\$*"
EOF
  chmod 755 "$CLUSTER_RSH_AGENT"
  export CLUSTER_HOSTFILE CLUSTER_RSH_AGENT
  # nsenter -t $CLUSTER_NODE2_PID -n -u CMD runs CMD on node2 (from anywhere on the host).
  export CLUSTER_NODE1_PID="${cluster_holders[0]}" CLUSTER_NODE2_PID="${cluster_holders[1]}"

  # munge in the root namespaces; its socket path works from every network namespace.
  head -c 1024 /dev/urandom >"$CLUSTER_STATE/munge.key"
  chmod 400 "$CLUSTER_STATE/munge.key"
  munged --foreground --force --socket="$CLUSTER_STATE/munge.sock" --key-file="$CLUSTER_STATE/munge.key" \
    --pid-file="$CLUSTER_STATE/munged.pid" --log-file="$CLUSTER_STATE/munged.log" \
    --seed-file="$CLUSTER_STATE/munged.seed" >>"$CLUSTER_STATE/munged.log" 2>&1 &
  cluster_pids+=($!)
  for _ in $(seq 1 50); do
    [ -S "$CLUSTER_STATE/munge.sock" ] && break
    sleep 0.1
  done
  if ! munge -n -S "$CLUSTER_STATE/munge.sock" | unmunge -S "$CLUSTER_STATE/munge.sock" >/dev/null 2>&1; then
    cluster_say "munge cannot encode and decode a credential"
    return 2
  fi
  [ "$with_slurm" = slurm ] || return 0

  mkdir -p "$CLUSTER_STATE/ctld"
  cat >"$CLUSTER_STATE/slurm.conf" <<EOF
# Two nodes in network namespaces (tests/cluster/cluster_lib.sh); everything under $CLUSTER_STATE.
ClusterName=ddpscaletwo
SlurmctldHost=node1($CLUSTER_NET.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
CredType=cred/munge
# cred_expire: also how long a requeued job waits before it starts again (default 120 s).
AuthInfo=socket=$CLUSTER_STATE/munge.sock,cred_expire=10
StateSaveLocation=$CLUSTER_STATE/ctld
SlurmdSpoolDir=$CLUSTER_STATE/spool-%n
SlurmctldPidFile=$CLUSTER_STATE/slurmctld.pid
SlurmdPidFile=$CLUSTER_STATE/slurmd-%n.pid
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$CLUSTER_STATE/plugstack.conf
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
NodeName=node1 NodeAddr=$CLUSTER_NET.1 CPUs=2 RealMemory=1000 State=UNKNOWN
NodeName=node2 NodeAddr=$CLUSTER_NET.2 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=node1,node2 Default=YES MaxTime=INFINITE State=UP
EOF
  : >"$CLUSTER_STATE/plugstack.conf"
  export SLURM_CONF="$CLUSTER_STATE/slurm.conf"
  on_node 1 slurmctld -D -i -f "$SLURM_CONF" >>"$CLUSTER_STATE/slurmctld.log" 2>&1 &
  cluster_pids+=($!)
  for n in 1 2; do
    on_node "$n" slurmd -D -N "node$n" -f "$SLURM_CONF" >>"$CLUSTER_STATE/slurmd-node$n.log" 2>&1 &
    cluster_pids+=($!)
  done
  local states="" pid
  for _ in $(seq 1 120); do
    for pid in "${cluster_pids[@]}"; do
      kill -0 "$pid" 2>/dev/null || { cluster_say "a SLURM daemon exited at start (pid $pid)"; return 2; }
    done
    states="$(on_node 1 timeout 5 sinfo -h -N -o '%N=%t' 2>/dev/null | sort | tr '\n' ' ')"
    [ "$states" = "node1=idle node2=idle " ] && break
    sleep 0.5
  done
  [ "$states" = "node1=idle node2=idle " ] || { cluster_say "nodes not idle after 60 s: ${states:-no answer}"; return 1; }
  cluster_say "SLURM up: slurmctld on node1, slurmd on node1 and node2, both idle"
}
