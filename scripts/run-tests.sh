#!/usr/bin/env bash
# The README's second command: set up, build, and run the whole test suite
# (units, 2-rank MPI tests; GPU tests skip where there is no GPU).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$DDPSCALE_ROOT/scripts/setup.sh"
cd "$BUILD_DIR"
# Side by side, one test per core, 2-rank tests included; the tests whose assertions rest on
# timing run alone (RUN_SERIAL): the end of tests/CMakeLists.txt says which, and why.
ctest --output-on-failure --timeout 900 -j "$JOBS" "$@"
