#!/usr/bin/env bash
# Does the NVML sampling thread cost ddpscale's graph step anything? ABBA over 3 rounds, with
# PyTorch's captured step beside it. Writes lines "round arm row samples/s".
B=build-gpu/trainer/ddpscale
for round in 1 2 3; do
  arms="on off"; ((round % 2 == 0)) && arms="off on"
  for arm in $arms; do
    extra=""; [ "$arm" = off ] && extra="--no-gpu-sampling"
    for m in "gru -b 32" "mlp-large -b 128"; do
      t=$($B train -m $m --exec graph --runs 10 --steps 1000 $extra 2>&1 | grep throughput | awk '{print $3}')
      echo "$round sampling-$arm ${m// /_} $t"
    done
  done
  python3 scripts/gpu/pytorch_ddp_reference.py --rows gru:32 mlp-large:128 --variant graph --runs 10 --steps 1000 2>/dev/null |
    python3 -c 'import sys,json
for l in sys.stdin:
  d=json.loads(l); print('"$round"', "pytorch-graph", d["model"]+"_-b_"+str(d["batch_per_gpu"]), d["samples_per_s"])'
done
