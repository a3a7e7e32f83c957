#!/usr/bin/env bash
# Does the core a process runs on decide its speed? One `ddpscale train` of a host-bound
# configuration (mlp-medium at batch 8 on one GPU) pinned with taskset to each of the given
# cores, in two passes (the second in reverse order): a core that is slow in both passes is a
# placement the tool could avoid; speeds that change between passes on the same core are the
# host's, not the placement's.
#   bash scripts/gpu/core-speeds.sh OUT.tsv [CORES...]   (default: every second core)
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
out="${1:?usage: core-speeds.sh OUT.tsv [CORES...]}"
shift
cores=("$@")
[ ${#cores[@]} -gt 0 ] || mapfile -t cores < <(seq 0 2 $(($(nproc) - 1)))
printf 'pass\tcore\tsamples_per_second\n' >"$out"
for pass in 1 2; do
  order=("${cores[@]}")
  [ "$pass" = 2 ] && mapfile -t order < <(printf '%s\n' "${cores[@]}" | tac)
  for core in "${order[@]}"; do
    throughput=$(taskset -c "$core" "$DDPSCALE_BIN" train -m mlp-medium -b 8 --runs 3 --warmup 20 --steps 200 2>&1 |
      awk '/throughput/ {print $3; exit}')
    printf '%s\t%s\t%s\n' "$pass" "$core" "${throughput:-n/a}" >>"$out"
  done
done
cat "$out"
