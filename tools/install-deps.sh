#!/usr/bin/env bash
# Installs Bristle's build and run dependencies from Debian's packages.
# As root it runs apt-get; otherwise it prints the command to run.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libeigen3-dev libspectra-dev nlohmann-json3-dev doctest-dev
  libcairo2-dev   # the time stamp and reading PNGs (bristle render), charts
  libpng-dev      # PNG writing (bristle render)
  libembree-dev   # ray tracing of rods and colliders (bristle render); pulls in libembree3-3
  zlib1g-dev      # deflated binary frames (bristle run --frames compressed, docs/output-format.md)
  libvalijson-dev # JSON Schema validation of the scenes in the tests (tests/scene/test_scene_schema.cpp)
  ffmpeg          # video assembly (bristle render --video)
  # The batch recipes of docs/batch.md, run by the tests as written (GNU parallel), and the
  # man page test's formatter (groff, tests/cli/check_man_page.sh).
  parallel groff-base
  # Fuzzing (tools/fuzz.sh, docs/fuzzing.md): libFuzzer and the sanitizer runtimes ship in
  # libclang-rt-14-dev, clang's OpenMP in libomp-dev, llvm-symbolizer (readable sanitizer
  # stacks) in llvm; the scene generator is a Python 3 script.
  clang libclang-rt-14-dev libomp-dev llvm python3
  # VTK's Python reader, which a test uses to read `bristle export --format vtk` files back
  # (tests/export/check_vtk_export.py, docs/export.md).
  python3-vtk9
  # numpy: tools/bristle_frames.py reads output folders into arrays; CTest checks it
  # (docs/output-format.md, "Reading frames with numpy").
  python3-numpy
)

if [ "$(id -u)" -ne 0 ]; then
  echo "Run as root (or with sudo):"
  echo "  apt-get update && apt-get install -y ${packages[*]}"
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}"
