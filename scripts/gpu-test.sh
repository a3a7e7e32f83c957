#!/usr/bin/env bash
# The GPU machine's command: build into build-gpu/ (no apt) and run the GPU test label, then
# say how many GPU tests ran and how many skipped, and why (scripts/analysis/gpu_test_summary.py).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [ "$DDPSCALE_MODE" != gpu ]; then
  log "no CUDA GPU with a CUDA PyTorch here: this script is for the GPU machine"
  exit 1
fi
nvidia-smi topo -m || true
bash "$DDPSCALE_ROOT/scripts/setup.sh"
cd "$BUILD_DIR"
test_log="$BUILD_DIR/gpu-tests.log"
status=0
ctest -L gpu -V --timeout 900 "$@" >"$test_log" 2>&1 || status=$?
# The failures' output, as --output-on-failure would show it, then the tally.
grep -E '^[0-9]+/[0-9]+ Test|\[  FAILED  \]|Failure|FATAL' "$test_log" || true
python3 "$DDPSCALE_ROOT/scripts/analysis/gpu_test_summary.py" "$test_log"
log "full log: $test_log"
exit "$status"
