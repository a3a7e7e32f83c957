#!/usr/bin/env bash
# The README's second command: set up, build, and run the whole test suite
# (units, 2-rank MPI tests; GPU tests skip where there is no GPU).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$DDPSCALE_ROOT/scripts/setup.sh"
cd "$BUILD_DIR"
# Side by side, one test per core: the MPI tests claim both cores (PROCESSORS 2) and the
# timing tests run alone (RUN_SERIAL), tests/CMakeLists.txt says which.
ctest --output-on-failure --timeout 900 -j "$JOBS" "$@"
