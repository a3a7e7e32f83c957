#!/usr/bin/env bash
# The allreduce cost curve of the two-node namespace cluster's link at several shapes
# (docs/benchmarks.md, "Two nodes over a shaped link"): brings up node1 + node2 without
# SLURM (tests/cluster/cluster_lib.sh) and, for each RATE, shapes the veth with tc tbf and
# runs `ddpscale commbench` with one rank per node through `mpirun --hostfile` (TCP over
# the veth only), printing the table and the bytes the link carried.
#
#   bash tests/cluster/link_commbench.sh [--bin DDPSCALE] [--max-bytes 16M] [RATE[:MAXBYTES]]...   (as root)
#   e.g. bash tests/cluster/link_commbench.sh none 1gbit 100mbit:4M
#
# RATE: none (the veth unshaped), or tc's rate syntax (1gbit, 100mbit); MAXBYTES: the
# largest message for that rate (slow links take long at 16M).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=cluster_lib.sh
source "$here/cluster_lib.sh"
bin="$root/build/trainer/ddpscale"
max=16M
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --max-bytes) max="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- none 1gbit 100mbit:4M
trap 'trap - EXIT INT TERM; cluster_down' EXIT
trap 'exit 130' INT TERM
why="$(cluster_preflight)" || { echo "SKIPPED: $why"; exit 77; }
[ -x "$bin" ] || { echo "ddpscale executable $bin not found (--bin)"; exit 1; }
cluster_up none noslurm || { cluster_show_logs; exit 1; }
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname): $(nproc) cores, $(uname -sr), $(mpirun --version | head -n 1)"
echo "# ddpscale $(on_node 1 "$bin" info 2>/dev/null | sed -n 's/.*"git_commit": "\([^"]*\)".*/\1/p' | head -n 1)"
for shape in "$@"; do
  rate="${shape%%:*}"
  size="$max"
  [ "$shape" != "$rate" ] && size="${shape#*:}"
  cluster_set_rate "$rate" || { echo "tc cannot shape to $rate"; exit 1; }
  before="$(on_node 1 ip -s link show dev "$CLUSTER_IF" | awk '/TX:/ {getline; print $1; exit}')"
  cmd=(mpirun --hostfile "$CLUSTER_HOSTFILE" --mca plm_rsh_agent "$CLUSTER_RSH_AGENT" --mca plm_rsh_no_tree_spawn 1
    -np 2 --map-by node --bind-to none "$bin" commbench --min-bytes 1K -e "$size" -f 4 --device cpu)
  echo
  echo "## link: $rate (tc tbf on both ends of $CLUSTER_IF, burst ${CLUSTER_TBF_BURST:-32kb}); OMPI_MCA_btl=$OMPI_MCA_btl, btl_tcp_if_include=$OMPI_MCA_btl_tcp_if_include"
  echo "## on node1: ${cmd[*]/#$CLUSTER_STATE*/...}"
  start=$SECONDS
  on_node 1 "${cmd[@]}" 2>&1 | grep -E '^#|^ +[0-9]'
  after="$(on_node 1 ip -s link show dev "$CLUSTER_IF" | awk '/TX:/ {getline; print $1; exit}')"
  echo "## $((SECONDS - start)) s; node1 sent $((after - before)) bytes through $CLUSTER_IF"
done
