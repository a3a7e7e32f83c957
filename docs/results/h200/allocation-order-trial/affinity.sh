#!/usr/bin/env bash
# Trial: does pinning the process to 4 cores change the eager step, ddpscale's or PyTorch's?
B=${B:-build-carry/ddpscale-new}
ROWS=${ROWS:-"mlp-medium:8 transformer:32"} ROUNDS=${ROUNDS:-3} STOP=${STOP:-500}
arm() {
  local pin="" r m b; [[ $1 == *pinned ]] && pin="taskset -c 4-7"
  case $1 in
    ddp*) for r in $ROWS; do m=${r%%:*}; b=${r##*:}
        t=$($pin $B train -m $m -b $b --runs 3 --steps 100 2>&1 | grep throughput | awk '{print $3}')
        echo "$round $1 $r $t"; done ;;
    py*) $pin python3 scripts/gpu/pytorch_ddp_reference.py --rows $ROWS --variant eager --runs 3 --steps 100 2>/dev/null |
      python3 -c 'import sys,json
for l in sys.stdin:
  d=json.loads(l); print('"$round"', "'$1'", d["model"]+":"+str(d["batch_per_gpu"]), d["samples_per_s"])' ;;
  esac
}
for round in $(seq 1 $ROUNDS); do
  ((SECONDS > STOP)) && break
  if ((round % 2)); then order="ddp py ddp-pinned py-pinned"; else order="py-pinned ddp-pinned py ddp"; fi
  for a in $order; do arm $a; done
done
