#!/usr/bin/env bash
# Trial: this tree's binary (NEW) against an older one (OLD), with PyTorch's step of the same
# mode in each round; the arms' order rotates. Lines: round arm row samples/s (median of the
# runs). First run for the recurrent models fed time-major with a kept zero state (b3f40e9)
# against the batch-first models of 709aee5, in graph mode; then for the one-kernel ReLU +
# dropout backward (7143f4c) against b3f40e9 on the MLP rows (OLD, ROWS, EXEC and PY_VARIANT
# set, see docs/benchmarks.md).
OLD=${OLD:-build-carry/ddpscale-709aee5} NEW=${NEW:-build-gpu/trainer/ddpscale}
ROWS=${ROWS:-"lstm:32 lstm:128 gru:32 gru:128"} ROUNDS=${ROUNDS:-30} RUNS=${RUNS:-3} STEPS=${STEPS:-300}
STOP=${STOP:-500} EXEC=${EXEC:-graph} PY_VARIANT=${PY_VARIANT:-${EXEC:-graph}}
arm() {
  local r t
  case $1 in
    old|new) local bin=$OLD; [ "$1" = new ] && bin=$NEW
      for r in $ROWS; do
        t=$($bin train -m ${r%%:*} -b ${r##*:} --exec $EXEC --runs $RUNS --steps $STEPS 2>&1 | grep throughput | awk '{print $3}')
        echo "$round $1 $r $t"
      done ;;
    pytorch) python3 scripts/gpu/pytorch_ddp_reference.py --rows $ROWS --variant $PY_VARIANT --runs $RUNS --steps $STEPS 2>/dev/null |
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
