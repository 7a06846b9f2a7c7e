#!/usr/bin/env bash
# Installs the dependencies, builds Bristle (Release), runs the bundled demo scene into
# out/demo and draws its frames into out/demo/images. Used by the README's first command.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --parallel --target bristle
./build/bristle run scenes/demo.json -o out/demo --force
./build/bristle render out/demo -o out/demo/images --force --quiet
echo "demo: frames in out/demo/frames, pictures in out/demo/images"
