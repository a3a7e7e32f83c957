#!/usr/bin/env bash
# The inter-node prediction against measurement on the namespace cluster
# (docs/benchmarks.md, "Prediction accuracy"). Not part of ctest: about
# 10 minutes on 2 cores. For each RATE it shapes the veth between node1 and node2 (tc tbf, both
# ends), runs SPEC across the two nodes, one rank per node, MPI over TCP on the link (the
# study-start commbench measures the shaped link's allreduce curve into study.h5), and then
# predicts every 2-rank configuration from its 1-rank twin and that curve with PREDICT (model
# only and calibrated leave-one-out), printing one line per link shape.
#
#   bash tests/cluster/link_prediction.sh [--bin DDPSCALE] [--spec SPEC] [--predict CMD] [--launch hostfile|sbatch] OUT [RATE...]   (as root)
#   e.g. bash tests/cluster/link_prediction.sh /tmp/linkpred 2gbit 1gbit 500mbit
#
# --launch hostfile (default): mpirun --hostfile with a rankfile that binds node1's rank to
#   core 0 and node2's to core 1, as two one-core nodes would be (each rank still runs the
#   LibTorch threads ddpscale gives it, on its one core; the 1-rank twins run the same way).
# --launch sbatch: sbatch -N 2 --ntasks-per-node=1 slurm/study-multinode.sbatch SPEC OUT, the
#   users' launch, whose mpirun binds nothing: both nodes' ranks and their threads share both
#   cores, and the 2-rank steps are several times slower than compute + allreduce
#   (docs/benchmarks.md shows how far the prediction misses then).
# PREDICT is run as `PREDICT STUDY_DIR OUT_DIR` (default: `DDPSCALE predict STUDY_DIR --out OUT_DIR`).
# RATE defaults: 2gbit 1gbit 500mbit.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=cluster_lib.sh
source "$here/cluster_lib.sh"
bin="$root/build/trainer/ddpscale"
spec="$here/link-prediction.yaml"
predict=""
launch=hostfile
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --spec) spec="$2"; shift 2 ;;
    --predict) predict="$2"; shift 2 ;;
    --launch) launch="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
out="${1:?usage: link_prediction.sh [--bin DDPSCALE] [--spec SPEC] [--predict CMD] [--launch hostfile|sbatch] OUT [RATE...]}"
shift
[ $# -gt 0 ] || set -- 2gbit 1gbit 500mbit
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
trap 'trap - EXIT INT TERM; cluster_down' EXIT
trap 'exit 130' INT TERM
why="$(cluster_preflight)" || { echo "SKIPPED: $why"; exit 77; }
[ -x "$bin" ] || { echo "ddpscale executable $bin not found (--bin)"; exit 1; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cluster_up none "$([ "$launch" = sbatch ] && echo slurm || echo noslurm)" || { cluster_show_logs; exit 1; }
export DDPSCALE_BIN="$bin" NCCL_SOCKET_IFNAME="$CLUSTER_IF"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname): $(nproc) cores, $(uname -sr), $(mpirun --version | head -n 1)"
echo "# spec $spec; ddpscale $bin; launch $launch"
for rate in "$@"; do
  cluster_set_rate "$rate" || { echo "tc cannot shape to $rate"; exit 1; }
  study="$out/$rate"
  rm -rf "$study" "$out/predict-$rate"
  cluster_link_description >"$out/link-$rate.txt"
  start=$SECONDS
  if [ "$launch" = sbatch ]; then
    on_node 1 timeout 600 sbatch --wait --parsable -N 2 --ntasks-per-node=1 --gpus-per-node=0 --cpus-per-task=1 \
      --time=00:15:00 --job-name="linkpred-$rate" --output="$out/job-$rate-%j.out" --chdir="$root" \
      "$root/slurm/study-multinode.sbatch" "$spec" "$study" >"$out/sbatch-$rate.out"
  else
    printf 'rank 0=node1 slot=0\nrank 1=node2 slot=1\n' >"$CLUSTER_STATE/rankfile"
    on_node 1 timeout 600 mpirun --hostfile "$CLUSTER_HOSTFILE" --mca plm_rsh_agent "$CLUSTER_RSH_AGENT" \
      --mca plm_rsh_no_tree_spawn 1 -np 2 --rankfile "$CLUSTER_STATE/rankfile" --report-bindings \
      "$bin" sweep "$spec" --out "$study" >"$out/job-$rate.out" 2>&1
  fi || { echo "## $rate: the study failed after $((SECONDS - start)) s"; cat "$out"/job-"$rate"*.out; exit 1; }
  echo "## $rate: study in $((SECONDS - start)) s ($study)"
  if [ -n "$predict" ]; then
    $predict "$study" "$out/predict-$rate" | sed "s|^|## $rate: |"
  else
    "$bin" predict "$study" --out "$out/predict-$rate" | sed "s|^|## $rate: |"
  fi
done
