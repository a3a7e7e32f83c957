#!/usr/bin/env bash
# Trial: does the allocation order (Adam state lazily at the first step, inputs before labels,
# the cache emptied before capture, as PyTorch does) change ddpscale's graph step?
# OLD = fd757e9 binary (state beside the parameters), NEW = this tree. Lines: round arm row samples/s
OLD=build-carry/ddpscale NEW=${NEW:-build-gpu/trainer/ddpscale}
ROUNDS=${ROUNDS:-3} RUNS=${RUNS:-5} STEPS=${STEPS:-1000} STOP=${STOP:-540}
ROWS=${ROWS:-"gru:32 mlp-large:128"}
arm() {
  case $1 in
    old|new) local b=$OLD; [ "$1" = new ] && b=$NEW
      for r in $ROWS; do
        t=$($b train -m ${r%%:*} -b ${r##*:} --exec graph --runs $RUNS --steps $STEPS 2>&1 | grep throughput | awk '{print $3}')
        echo "$round $1 $r $t"
      done ;;
    pytorch) python3 scripts/gpu/pytorch_ddp_reference.py --rows $ROWS --variant graph --runs $RUNS --steps $STEPS 2>/dev/null |
      python3 -c 'import sys,json
for l in sys.stdin:
  d=json.loads(l); print('"$round"', "pytorch", d["model"]+":"+str(d["batch_per_gpu"]), d["samples_per_s"])' ;;
  esac
}
for round in $(seq 1 $ROUNDS); do
  ((SECONDS > STOP)) && break
  case $((round % 3)) in 1) order="old new pytorch";; 2) order="pytorch new old";; 0) order="new pytorch old";; esac
  for a in $order; do arm $a; done
done
