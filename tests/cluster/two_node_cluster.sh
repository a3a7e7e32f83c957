#!/usr/bin/env bash
# An emulated two-node cluster (node1, node2: Linux network + UTS namespaces joined by a
# shaped veth pair, SLURM and OpenMPI over it) for as long as one command runs on node1.
#
#   bash tests/cluster/two_node_cluster.sh [--rate 1gbit|100mbit|none] [--no-slurm] [-- COMMAND...]   (as root)
#
# COMMAND runs in node1's namespaces (the "login node") with SLURM_CONF, the OMPI_MCA_*
# variables that keep MPI on the veth (TCP only, no shared memory), CLUSTER_HOSTFILE and
# CLUSTER_RSH_AGENT (for mpirun without SLURM) and CLUSTER_STATE exported; without COMMAND,
# an interactive shell. Examples:
#   ... -- sbatch --wait -N 2 --ntasks-per-node=1 --gpus-per-node=0 slurm/study-multinode.sbatch SPEC OUT
#   ... -- sh -c 'mpirun --hostfile $CLUSTER_HOSTFILE --mca plm_rsh_agent $CLUSTER_RSH_AGENT -np 2 build/trainer/ddpscale info'
# Everything (daemons, jobs, namespaces, the veth pair, temporary files) is removed when the
# command ends, fails, or on Ctrl-C. docs/multinode.md explains the parts.
# Exit: the command's status; 77 where the cluster cannot be built here; 1 if it fails to start.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=cluster_lib.sh
source "$here/cluster_lib.sh"

rate=1gbit
slurm=slurm
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) rate="${2:?--rate needs a value}"; shift 2 ;;
    --no-slurm) slurm=noslurm; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) break ;;
  esac
done

finish() {
  local status=$?
  trap - EXIT INT TERM
  cluster_down
  exit "$status"
}
trap finish EXIT
trap 'cluster_say "interrupted"; exit 130' INT TERM

why="$(cluster_preflight)" || { cluster_say "SKIPPED: $why"; exit 77; }
cluster_up "$rate" "$slurm"
up=$?
if [ "$up" -ne 0 ]; then
  cluster_show_logs
  [ "$up" -eq 2 ] && exit 77
  exit 1
fi
export CLUSTER_STATE
cluster_link_description | tee "$CLUSTER_STATE/link.txt"
if [ $# -eq 0 ]; then
  on_node 1 bash -i
else
  on_node 1 "$@"
fi
