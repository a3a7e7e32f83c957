#!/usr/bin/env bash
# Trial: what in ddpscale's 100-step graph runs costs time against PyTorch's? Old (fd757e9)
# and new binaries, the new one also without NVML sampling and without the step clock.
# Lines: round arm row samples/s (median of 3 runs of 10 + 100 steps, as the grid).
OLD=build-carry/ddpscale NEW=build-carry/ddpscale-new
ROWS=${ROWS:-"mlp-medium:8 gru:32 mlp-large:128"} ROUNDS=${ROUNDS:-8} STOP=${STOP:-500} STEPS=${STEPS:-100}
arm() {
  local r m b bin=$NEW extra=""
  case $1 in
    old) bin=$OLD ;;
    nosamp) extra="--no-gpu-sampling" ;;
    bare) extra="--no-gpu-sampling --no-phase-timing" ;;
  esac
  if [ "$1" = pytorch ]; then
    python3 scripts/gpu/pytorch_ddp_reference.py --rows $ROWS --variant graph --runs 3 --steps $STEPS 2>/dev/null |
      python3 -c 'import sys,json
for l in sys.stdin:
  d=json.loads(l); print('"$round"', "pytorch", d["model"]+":"+str(d["batch_per_gpu"]), d["samples_per_s"])'
    return
  fi
  for r in $ROWS; do m=${r%%:*}; b=${r##*:}
    t=$($bin train -m $m -b $b --exec graph --runs 3 --steps $STEPS $extra 2>&1 | grep throughput | awk '{print $3}')
    echo "$round $1 $r $t"
  done
}
arms=(old new nosamp bare pytorch)
for round in $(seq 1 $ROUNDS); do
  ((SECONDS > STOP)) && break
  n=${#arms[@]}
  for i in $(seq 0 $((n - 1))); do  # rotate the order every round
    if ((round % 2)); then a=${arms[$(((i + round) % n))]}; else a=${arms[$(((n - 1 - i + round) % n))]}; fi
    arm $a
  done
done
