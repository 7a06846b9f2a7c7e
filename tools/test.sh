#!/usr/bin/env bash
# Configure, build (Release) and run the whole test suite. Used by CI and the README.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --parallel
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
