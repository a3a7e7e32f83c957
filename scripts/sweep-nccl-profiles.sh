#!/usr/bin/env bash
# Runs a sweep once per NCCL profile of its spec, each profile in its own launch, into one
# study folder. NCCL reads its environment once per process (docs/methodology.md), so a
# single launch cannot switch profiles.
#   usage: scripts/sweep-nccl-profiles.sh SPEC.yaml OUT [extra ddpscale sweep options]
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
spec="${1:?usage: $0 SPEC.yaml OUT [options]}"
out="${2:?usage: $0 SPEC.yaml OUT [options]}"
shift 2
# Profile names are the keys under nccl_profiles: (two-space indent, no value on the line).
mapfile -t profiles < <(awk '/^nccl_profiles:/{inside=1; next} inside && /^[^ #]/{inside=0}
  inside && /^  [A-Za-z0-9_.-]+:/{name=$1; sub(":", "", name); print name}' "$spec")
if [ ${#profiles[@]} -eq 0 ]; then
  log "$spec defines no nccl_profiles: running it once"
  profiles=("")
fi
first=1
for profile in "${profiles[@]}"; do
  flags=("$@")
  [ -n "$profile" ] && flags+=(--nccl-profile "$profile")
  # The first launch creates the study (or resumes it); later ones add to it.
  [ $first -eq 0 ] && [[ " $* " != *" --resume "* ]] && flags+=(--resume)
  log "profile ${profile:-default}"
  "${MPIRUN[@]}" -np "$NRANKS" "$DDPSCALE_BIN" sweep "$spec" --out "$out" "${flags[@]}"
  first=0
done
