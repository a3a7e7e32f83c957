#!/usr/bin/env bash
# On the GPU machine: --exec graph, which is built only with -DDDPSCALE_CUDA_GRAPHS=ON.
# Builds that into its own folder, runs the GPU tests there (GraphMode.* in test_ddp_gpu
# among them), then measures eager against graph on the reference grid
# (experiments/exec-modes.yaml) and PyTorch's DDP beside them on the same machine.
# Writes logs to ${OUT:-bench-out}/; the study goes to ${STUDIES:-studies}/exec-modes.
export BUILD_DIR="${GRAPHS_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build-gpu-graphs}"
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
[ "$DDPSCALE_MODE" = gpu ] || { log "this script needs the GPU machine"; exit 1; }
out="${OUT:-$DDPSCALE_ROOT/bench-out}"
mkdir -p "$out"

DDPSCALE_CMAKE_ARGS="-DDDPSCALE_CUDA_GRAPHS=ON" bash "$DDPSCALE_ROOT/scripts/setup.sh"
# The campaign builds with graphs on from the start and has run these already (GRAPHS_TESTS=0).
if [ "${GRAPHS_TESTS:-1}" != 0 ]; then
  log "GPU tests of the CUDA-graph build (the DDP ones: GraphMode.* and GpuBusy.* among them)"
  (cd "$BUILD_DIR" && ctest -L gpu -R test_ddp_gpu -V --timeout 900) 2>&1 | tee "$out/graphs-gpu-tests.txt"
fi

sweep_into() {
  local spec="$1" name="$2"
  resume_sweep "experiments/$spec" "${STUDIES:-$DDPSCALE_ROOT/studies}/$name" 2>&1 | tee "$out/$name-sweep.txt"
}

# Shortest and most telling first, so a run cut short still answers the most.
log "the levers of 2-GPU efficiency in graph mode: experiments/graph-scaling.yaml"
sweep_into graph-scaling.yaml graph-scaling

log "eager against graph: experiments/exec-modes.yaml, and PyTorch DDP beside it (1 GPU, then 2)"
sweep_into exec-modes.yaml exec-modes
python3 scripts/gpu/pytorch_ddp_reference.py 2>&1 | tee "$out/graphs-pytorch-1gpu.jsonl"
python3 -m torch.distributed.run --standalone --nproc_per_node 2 scripts/gpu/pytorch_ddp_reference.py \
  2>&1 | grep '^{' | tee "$out/graphs-pytorch-2gpu.jsonl"

log "how the threshold moves between eager and graph: experiments/threshold-modes.yaml"
sweep_into threshold-modes.yaml threshold-modes
