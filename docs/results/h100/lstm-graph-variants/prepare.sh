#!/usr/bin/env bash
# Here, before the device calls: lays each *.patch beside this script over a copy of the files
# it touches, under build-carry/variants/NAME/ (git-ignored, carried to the GPU machine), which
# build.sh then copies over the tree one variant at a time.
#   bash docs/results/h100/lstm-graph-variants/prepare.sh     (repository root)
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
for p in "$here"/*.patch; do
  name="$(basename "$p" .patch)"
  dir="build-carry/variants/$name"
  rm -rf "$dir"
  for f in $(sed -n 's|^+++ b/||p' "$p"); do
    mkdir -p "$dir/$(dirname "$f")"
    cp "$f" "$dir/$f"
  done
  patch -s -p1 -d "$dir" <"$p"
  echo "$dir"
done
