#!/usr/bin/env bash
# The README's second command: set up, build, and run the whole test suite
# (units, 2-rank MPI tests; GPU tests skip where there is no GPU).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$DDPSCALE_ROOT/scripts/setup.sh"
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 900 "$@"
