#!/usr/bin/env bash
# Device call 1 of a trial: build ddpscale at HEAD and with each candidate change (the *.patch
# files beside this script, made whole files under build-carry/variants/NAME/ by prepare.sh
# here, carried, and laid over the tree one at a time), and bring the binaries back
# compressed; then, when LAYOUT is set, run layout.py (the same question asked of PyTorch's
# own model) for the rest of the call.
#   VARIANTS="v1-separate-zeros v2-no-state v3-batch-first" LAYOUT=1 \
#     bash docs/results/h100/lstm-graph-variants/build.sh     (repository root, GPU machine)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
bash scripts/setup.sh >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
gzip -c build-gpu/trainer/ddpscale >"$OUT/ddpscale-head.gz"
mkdir -p /tmp/head && cp -r trainer models /tmp/head/
for v in ${VARIANTS:-}; do
  cp -r "build-carry/variants/$v/." .
  cmake --build build-gpu -j 16 --target ddpscale >>"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
  gzip -c build-gpu/trainer/ddpscale >"$OUT/ddpscale-$v.gz"
  cp -r /tmp/head/. .
done
echo "built in $SECONDS s"
[ -n "${LAYOUT:-}" ] || exit 0
python3 docs/results/h100/lstm-graph-layout/layout.py $((530 - SECONDS)) lstm:128 >"$OUT/layout.txt" 2>"$OUT/layout.err"
cat "$OUT/layout.txt"; tail -3 "$OUT/layout.err"
