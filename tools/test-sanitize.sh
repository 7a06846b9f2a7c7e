#!/usr/bin/env bash
# The whole test suite built with AddressSanitizer and UndefinedBehaviorSanitizer (CMake
# option BRISTLE_SANITIZE) in build-asan/. CI (.ci/run) runs it after tools/test.sh; see
# docs/fuzzing.md. Any sanitizer report fails the test that triggered it:
#   - UBSan halts on the first error (-fno-sanitize-recover=undefined in CMakeLists.txt,
#     halt_on_error below for anything built without it);
#   - LeakSanitizer fails the process at exit; tools/lsan.supp silences third-party
#     libraries only (fontconfig's cache, reached through cairo).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -eq 0 ] && [ -z "${BRISTLE_DEPS_INSTALLED:-}" ]; then bash tools/install-deps.sh; fi

source tools/sanitizer-env.sh

# -O1, not Release's -O3: with both sanitizers gcc takes about twice as long at -O3 (15 s
# against 8 s of CPU for src/energy/stretch.cpp; 4 s without sanitizers), and the build
# dominates this job. Asserts stay on as in Release (CMakeLists.txt).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DBRISTLE_SANITIZE=ON
cmake --build build-asan --parallel "$(nproc)"
# The slowest entries take a few minutes under ASan; the timeout only catches a hang.
ctest --test-dir build-asan --output-on-failure --parallel "$(nproc)" --timeout 1500
