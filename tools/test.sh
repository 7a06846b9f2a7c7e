#!/usr/bin/env bash
# Installs the dependencies (when run as root), configures, builds (Release) and runs the whole
# test suite. Used by CI (.ci/run) and the README.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -eq 0 ] && [ -z "${BRISTLE_DEPS_INSTALLED:-}" ]; then bash tools/install-deps.sh; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --parallel
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
