#!/usr/bin/env bash
# Installs the dependencies, builds Bristle (Release) and runs the bundled demo scene into
# out/demo. Used by the README's first command.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --parallel --target bristle
./build/bristle run scenes/demo.json -o out/demo --force
