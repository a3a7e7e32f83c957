#!/usr/bin/env bash
# ddpscale beside PyTorch DDP on the real models (scripts/export_model.py's files), float32
# and bfloat16, 1 and 2 GPUs, in rounds (scripts/gpu/engines_side_by_side.py), in device calls
# of at most 10 minutes: run the same command again in the next call and it goes on from the
# last finished round (a warm machine keeps studies/side-by-side/).
#   bash scripts/gpu/real-models-side-by-side.sh [MODEL:BATCH ...]
#     default rows: resnet18:32 resnet50:32 bert-base:32 gpt2-small:16 vit-b16:32
#   ROUNDS=4 RUNS=2 STEPS=20 CALL_SECONDS=560 OUT (where the results and logs go)
# First, once per machine: the build (scripts/setup.sh), the GPU tests and the models.
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
deadline=$((SECONDS + ${CALL_SECONDS:-560}))
work="$DDPSCALE_ROOT/studies/side-by-side"
out="${OUT:-$work/out}"
mkdir -p "$work" "$out"
rows=("$@")
[ ${#rows[@]} -gt 0 ] || rows=(resnet18:32 resnet50:32 bert-base:32 gpt2-small:16 vit-b16:32)

build_once "$work" || exit 1
export_real_models_once "$work" || exit 1
models="$REAL_MODELS"

# No round starts later than the longest round so far (or 300 s) before the deadline.
longest=$(cat "$work/longest-round" 2>/dev/null || echo 300)
budget=$((deadline - SECONDS - longest - 20))
python3 "$DDPSCALE_ROOT/scripts/gpu/engines_side_by_side.py" --ddpscale "$DDPSCALE_BIN" \
  --manifest "$models/manifest.json" --rows "${rows[@]}" --rounds "${ROUNDS:-4}" --runs "${RUNS:-2}" \
  --steps "${STEPS:-20}" --deadline "$((budget > 0 ? budget : 0))" --out "$work/results" \
  --mpirun "${MPIRUN[*]}" 2>&1 | tee -a "$work/side-by-side.log"
grep -o 'round [0-9]*: [a-z-]* [0-9]* s' "$work/side-by-side.log" |
  awk '{sum[$2] += $4} END {m = 0; for (r in sum) if (sum[r] > m) m = sum[r]; print (m > 0 ? m : 300)}' \
  >"$work/longest-round"
tar -C "$work" -czf "$out/side-by-side.tar.gz" --exclude=out --exclude=study --exclude='*.h5' . 2>/dev/null || true
# ddpscale's study of each round apart: `ddpscale predict` checks itself on it from its 1-GPU half.
(cd "$work" && find results -path '*/study' -type d -print0 | tar --null -T - -czf "$out/side-by-side-studies.tar.gz") 2>/dev/null || true
ls -la "$out"
