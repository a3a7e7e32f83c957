#!/usr/bin/env bash
# Trial: is ddpscale's graph step slower in a sweep of 100-step runs than in `train`, and
# does it depend on the run length? PyTorch's captured step at both lengths beside it.
# Lines: round arm row samples/s
B=${B:-build-carry/ddpscale-new}
ROWS=${ROWS:-"gru:32 mlp-medium:8"} ROUNDS=${ROUNDS:-3} STOP=${STOP:-500}
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader)
spec() {  # spec MODEL BATCH STEPS FILE
  printf 'name: ctx\nmodels: [%s]\nbatch_sizes: [%s]\nworld_sizes: [1]\nexec: [graph]\nruns: 3\nwarmup: 10\nsteps: %s\noptimizer: adam\nlr: 0.001\nseed: 42\n' "$1" "$2" "$3" >"$4"
}
arm() {
  local r m b
  case $1 in
    train100|train1000) for r in $ROWS; do m=${r%%:*}; b=${r##*:}
        t=$($B train -m $m -b $b --exec graph --runs 3 --steps ${1#train} 2>&1 | grep throughput | awk '{print $3}')
        echo "$round $1 $r $t"; done ;;
    sweep100) for r in $ROWS; do m=${r%%:*}; b=${r##*:}
        spec $m $b 100 /tmp/ctx.yaml
        "${MPIRUN[@]}" -np 1 $B sweep /tmp/ctx.yaml --out /tmp/ctx-study --overwrite >/tmp/ctx.log 2>&1
        $B report /tmp/ctx-study --no-plots --out /tmp/ctx-report >/dev/null 2>&1
        t=$(python3 -c 'import csv;r=next(csv.DictReader(open("/tmp/ctx-report/summary.csv")));print(r["samples_per_s_median"])')
        echo "$round $1 $r $t"; done ;;
    py100|py1000) python3 scripts/gpu/pytorch_ddp_reference.py --rows $ROWS --variant graph --runs 3 --steps ${1#py} 2>/dev/null |
      python3 -c 'import sys,json
for l in sys.stdin:
  d=json.loads(l); print('"$round"', "'$1'", d["model"]+":"+str(d["batch_per_gpu"]), d["samples_per_s"])' ;;
  esac
}
for round in $(seq 1 $ROUNDS); do
  ((SECONDS > STOP)) && break
  if ((round % 2)); then order="train100 sweep100 py100 train1000 py1000"; else order="py1000 train1000 py100 sweep100 train100"; fi
  for a in $order; do arm $a; done
done
