#!/bin/sh
# Regenerates the golden output folders tests/golden/<scene>/ from scenes/<scene>.json, for
# the scenes listed in tests/golden/scenes.txt. Run it on purpose, after a change that is
# meant to change the physics, then review the diff (git diff --stat tests/golden) before
# committing.
#
#   tools/regenerate-golden.sh [BUILD_DIR]     (default: build)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
bristle=$build/bristle
if [ ! -x "$bristle" ]; then
  echo "regenerate-golden: $bristle not found; build first (cmake --build $build)" >&2
  exit 2
fi
grep -v '^[[:space:]]*#' "$root/tests/golden/scenes.txt" | while read -r scene; do
  [ -n "$scene" ] || continue
  out=$root/tests/golden/$scene
  rm -rf "$out"
  "$bristle" run "$root/scenes/$scene.json" -o "$out" --quiet
  size=$(du -sk "$out" | cut -f1)
  echo "regenerated tests/golden/$scene ($size KB)"
  if [ "$size" -gt 200 ]; then
    echo "regenerate-golden: warning: tests/golden/$scene is larger than 200 KB; shorten the scene" >&2
  fi
done
