#!/usr/bin/env bash
# Trial: the recurrent models fed time-major with a kept zero state (this tree) against the
# batch-first models of the 709aee5 build, graph mode, with PyTorch's captured step in each
# round; the arms' order rotates. Lines: round arm row samples/s (median of the runs).
OLD=${OLD:-build-carry/ddpscale-709aee5} NEW=${NEW:-build-gpu/trainer/ddpscale}
ROWS=${ROWS:-"lstm:32 lstm:128 gru:32 gru:128"} ROUNDS=${ROUNDS:-30} RUNS=${RUNS:-3} STEPS=${STEPS:-300}
STOP=${STOP:-500} EXEC=${EXEC:-graph}
arm() {
  local r t
  case $1 in
    old|new) local bin=$OLD; [ "$1" = new ] && bin=$NEW
      for r in $ROWS; do
        t=$($bin train -m ${r%%:*} -b ${r##*:} --exec $EXEC --runs $RUNS --steps $STEPS 2>&1 | grep throughput | awk '{print $3}')
        echo "$round $1 $r $t"
      done ;;
    pytorch) python3 scripts/gpu/pytorch_ddp_reference.py --rows $ROWS --variant $EXEC --runs $RUNS --steps $STEPS 2>/dev/null |
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
