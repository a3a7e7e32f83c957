# Sourced by the other scripts: where things are, and which kind of machine this is.
set -euo pipefail
DDPSCALE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="${JOBS:-$(nproc)}"

# NVLink multicast stays off on the shared GPU hosts, in every process that touches NCCL.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# OpenMPI refuses root without these; CI and the GPU machine run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers often forbid the cross-memory-attach single-copy path; shared memory still works.
export OMPI_MCA_btl_vader_single_copy_mechanism=none

log() { printf '\033[1m[ddpscale]\033[0m %s\n' "$*" >&2; }

# A GPU machine here means: nvidia-smi sees a GPU and the Python PyTorch there has CUDA,
# because that PyTorch's LibTorch is what the GPU build links.
has_cuda_torch() {
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
    python3 -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1
}

gpu_count() { nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true; }

if has_cuda_torch; then
  DDPSCALE_MODE=gpu
  BUILD_DIR="${BUILD_DIR:-$DDPSCALE_ROOT/build-gpu}"
  CMAKE_PREFIX_PATH="$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export CMAKE_PREFIX_PATH
  NRANKS="${NRANKS:-$(gpu_count)}"
else
  DDPSCALE_MODE=cpu
  BUILD_DIR="${BUILD_DIR:-$DDPSCALE_ROOT/build}"
  NRANKS="${NRANKS:-2}"
fi
# A preset DDPSCALE_BIN runs another build (scripts/gpu/step-anatomy.sh compares two).
DDPSCALE_BIN="${DDPSCALE_BIN:-$BUILD_DIR/trainer/ddpscale}"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader)
# The PyTorch-comparison grid, MODEL:BATCH: the configurations of
# experiments/pytorch-comparison-1gpu.yaml, which the GPU scripts time on both sides.
COMPARISON_ROWS=(mlp-medium:8 mlp-medium:128 mlp-large:8 mlp-large:128 lstm:32 lstm:128 gru:32 gru:128 transformer:32 transformer:128)

# build_nccl_tests_allreduce DIR: nccl-tests' all_reduce_perf into DIR, built from
# NCCL_TESTS_SRC (a copy of github.com/NVIDIA/nccl-tests carried to the GPU machine: it has no
# network) against the system NCCL, for Hopper only (the default builds every architecture:
# minutes of nvcc).
build_nccl_tests_allreduce() {
  make -C "$NCCL_TESTS_SRC/src" -j "$JOBS" BUILDDIR="$1" NCCL_HOME=/usr CUDA_HOME=/usr/local/cuda \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" "$1/all_reduce_perf"
}

# resume_sweep SPEC OUT: the study SPEC on every rank, continuing whatever OUT already holds.
resume_sweep() { "${MPIRUN[@]}" -np "$NRANKS" "$DDPSCALE_BIN" sweep "$1" --out "$2" --resume; }

# build_once WORK: the build (scripts/setup.sh) and the GPU tests, once per machine (a warm
# machine keeps WORK/build.done); logs in WORK.
build_once() {
  [ -e "$1/build.done" ] && return 0
  local start=$SECONDS
  bash "$DDPSCALE_ROOT/scripts/setup.sh" >"$1/build.log" 2>&1 || { tail -n 40 "$1/build.log"; return 1; }
  (cd "$BUILD_DIR" && ctest -L gpu --output-on-failure) >"$1/gpu-tests.log" 2>&1 || log "GPU tests failed: $1/gpu-tests.log"
  echo "$((SECONDS - start)) s" >"$1/build.done"
}

# export_real_models_once WORK: scripts/export_model.py's five real models into
# models-out/real with their manifest (REAL_MODELS, the folder), once per machine.
REAL_MODELS="$DDPSCALE_ROOT/models-out/real"
export_real_models_once() {
  [ -e "$REAL_MODELS/manifest.json" ] && return 0
  python3 "$DDPSCALE_ROOT/scripts/export_model.py" resnet18 resnet50 bert-base gpt2-small vit-b16 --out "$REAL_MODELS" \
    --manifest "$REAL_MODELS/manifest.json.tmp" >"$1/export.log" 2>&1 || { tail -n 20 "$1/export.log"; return 1; }
  mv "$REAL_MODELS/manifest.json.tmp" "$REAL_MODELS/manifest.json"
}

# manifest_model_flags MANIFEST MODEL: the ddpscale model and its input flags, one word a line
# (torchscript:PATH, --input-shape or --input, its value, --classes, N), for a model named in
# what scripts/export_model.py --manifest writes; nothing where MANIFEST does not name it.
manifest_model_flags() {
  python3 -c 'import json, sys
for e in json.load(open(sys.argv[1])):
    if e["model"] == sys.argv[2]:
        print("torchscript:" + e["path"]); print(e["input_flag"]); print(e["input"]); print("--classes"); print(e["classes"])' \
    "$1" "$2"
}
