#!/usr/bin/env bash
# The README's first command: set up, build, and run the main job on this machine
# (GPUs when there are, otherwise 2 CPU ranks over MPI).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$DDPSCALE_ROOT/scripts/setup.sh"

log "ddpscale info ($NRANKS ranks)"
"${MPIRUN[@]}" -np "$NRANKS" "$DDPSCALE_BIN" info
log "allreduce bandwidth ($NRANKS ranks, $DDPSCALE_MODE)"
max_bytes=64M
[ "$DDPSCALE_MODE" = gpu ] && max_bytes=2G
"${MPIRUN[@]}" -np "$NRANKS" "$DDPSCALE_BIN" commbench -b 8 -e "$max_bytes" -f 4
