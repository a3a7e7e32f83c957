#!/usr/bin/env bash
# Device call 2 of a trial: each binary of build.sh (HEAD and the VARIANTS, carried
# compressed in build-carry/) against PyTorch's captured step, lstm b128 graph,
# row-paired by gpu-benchmark.sh, one round of every binary per pass, the binaries' order
# rotating from pass to pass; then each binary's paired verdict.
#   VARIANTS="..." ROWS=lstm:128 STOP=420 bash docs/results/h100/lstm-graph-variants/rounds.sh    (repository root, GPU machine)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
for f in build-carry/ddpscale-*.gz; do gunzip -c "$f" >"${f%.gz}" && chmod +x "${f%.gz}"; done  # carried compressed: the tree travels in 64 MiB
read -r -a bins <<<"head ${VARIANTS:-}"
rows="${ROWS:-lstm:128}"
pass=0
while ((SECONDS < ${STOP:-480})); do
  pass=$((pass + 1))
  for i in "${!bins[@]}"; do
    b="${bins[$(((i + pass) % ${#bins[@]}))]}"
    DDPSCALE_BIN=$PWD/build-carry/ddpscale-$b OUT=$OUT/$b/pass-$pass STUDIES=/tmp/studies-$b ROUNDS=1 \
      PAIRING=row ROWS="$rows" VARIANTS=graph bash scripts/gpu/gpu-benchmark.sh >>"$OUT/rounds.log" 2>&1
  done
  echo "pass $pass done at $SECONDS s"
done
for b in "${bins[@]}"; do
  echo "## $b"
  python3 scripts/analysis/paired_ratio.py "$OUT/$b"/pass-*/round-1/* | tee "$OUT/$b/paired.md"
done
# The device tool brings back 8 files and no deep folders: the rounds' milliseconds travel packed.
(cd "$OUT" && tar czf rounds.tar.gz "${bins[@]}" && rm -rf "${bins[@]}")
