#!/usr/bin/env bash
# Trial: the backward pass on the calling thread (0b19c2f) against autograd's GPU worker
# thread (the ad58cd1 build), ddpscale's eager step, and the same switch on PyTorch's side
# (variant eager-caller-thread against eager). Rounds alternate the arms' order.
OLD=${OLD:-build-carry/ddpscale-ad58cd1} NEW=${NEW:-build-gpu/trainer/ddpscale}
ROWS=${ROWS:-"mlp-medium:8 mlp-large:8 gru:32"} ROUNDS=${ROUNDS:-4} STOP=${STOP:-500}
arm() {
  local r m b t
  case $1 in
    ddp-old|ddp-new) local bin=$OLD; [ "$1" = ddp-new ] && bin=$NEW
      for r in $ROWS; do m=${r%%:*}; b=${r##*:}
        t=$($bin train -m $m -b $b --runs 3 --steps 100 2>&1 | grep throughput | awk '{print $3}')
        echo "$round $1 $r $t"; done ;;
    py|py-ct) local v=eager; [ "$1" = py-ct ] && v=eager-caller-thread
      python3 scripts/gpu/pytorch_ddp_reference.py --rows $ROWS --variant $v --runs 3 --steps 100 2>/dev/null |
      python3 -c 'import sys,json
for l in sys.stdin:
  d=json.loads(l); print('"$round"', "'$1'", d["model"]+":"+str(d["batch_per_gpu"]), d["samples_per_s"])' ;;
  esac
}
for round in $(seq 1 $ROUNDS); do
  ((SECONDS > STOP)) && break
  if ((round % 2)); then order="ddp-old ddp-new py py-ct"; else order="py-ct py ddp-new ddp-old"; fi
  for a in $order; do arm $a; done
done
