#!/usr/bin/env bash
# The GPU machine's command: build into build-gpu/ (no apt) and run the GPU test label,
# then the allreduce sweep that docs/benchmarks.md compares with nccl-tests.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [ "$DDPSCALE_MODE" != gpu ]; then
  log "no CUDA GPU with a CUDA PyTorch here: this script is for the GPU machine"
  exit 1
fi
nvidia-smi topo -m || true
bash "$DDPSCALE_ROOT/scripts/setup.sh"
cd "$BUILD_DIR"
ctest -L gpu --output-on-failure --timeout 900 "$@"
