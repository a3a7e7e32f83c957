#!/usr/bin/env bash
# Which cuDNN does each side run? The image has cuDNN 9.14 in /usr/lib/x86_64-linux-gnu (in the
# ld.so cache) beside PyTorch's wheel, cuDNN 9.19 (site-packages/nvidia/cudnn/lib). ddpscale
# links the wheel's libcudnn.so.9, but that library dlopens its sub-libraries (libcudnn_adv,
# where the RNN kernels are) by soname at run time. Python's torch preloads them from the
# wheel; a C++ program may get the cache's. Then: ddpscale's lstm b128 graph row against
# PyTorch's with the wheel's directory first on LD_LIBRARY_PATH.
#   bash docs/results/h100/lstm-graph-variants/cudnn-check.sh   (repository root, GPU machine)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
bash scripts/setup.sh >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
wheel_cudnn=$(python3 -c "import torch,os;print(os.path.realpath(os.path.join(os.path.dirname(torch.__file__),'..','nvidia','cudnn','lib')))")
echo "wheel cuDNN: $wheel_cudnn"
echo "## the cuDNN files ddpscale maps (lstm b128 graph, 20 steps)"
LD_DEBUG=libs build-gpu/trainer/ddpscale train -m lstm -b 128 --exec graph --runs 1 --steps 20 2>&1 >/dev/null |
  grep -oE "calling init: [^ ]*cudnn[^ ]*" | sort -u
echo "## the cuDNN files Python's torch maps (an LSTM on the GPU)"
python3 -c "
import torch
m = torch.nn.LSTM(8, 8).cuda(); m(torch.randn(3, 2, 8, device='cuda'))
print('\n'.join(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'cudnn' in l})))"
echo "## ddpscale with the wheel's cuDNN first on LD_LIBRARY_PATH, against PyTorch"
LD_LIBRARY_PATH="$wheel_cudnn${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OUT=$OUT/wheel-cudnn ROUNDS=6 DEADLINE=$((${STOP:-280} - SECONDS)) \
  PAIRING=row ROWS=lstm:128 VARIANTS=graph bash scripts/gpu/gpu-benchmark.sh >"$OUT/wheel-cudnn.log" 2>&1
grep -E "^\| lstm|configurations" "$OUT/wheel-cudnn/reference-paired.md"
