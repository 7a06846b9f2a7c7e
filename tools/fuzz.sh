#!/usr/bin/env bash
# Fuzzing (docs/fuzzing.md), two parts, each skippable:
#   1. libFuzzer on the scene loader (tests/fuzz/fuzz_load_scene.cpp), built with clang,
#      ASan and UBSan in build-fuzz/; findings go to build-fuzz/findings/;
#   2. generated scenes through the whole command line (tools/fuzz_scenes.py) with the
#      bristle executable given (default build/bristle); reproducers go to
#      build-fuzz/scene-failures/.
# Both start from a fixed seed. CI (.ci/run) runs the defaults: 60 s and 150 scenes.
#
# usage: tools/fuzz.sh [--time S] [--seed N] [--scenes N] [--bristle PATH] [--time-scale X]
#                      [--no-libfuzzer] [--no-scenes]
set -euo pipefail
cd "$(dirname "$0")/.."

fuzz_time=60 seed=1 scenes=150 bristle=build/bristle time_scale=1 libfuzzer=1 generated=1
while [ $# -gt 0 ]; do
  case "$1" in
    --time) fuzz_time=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --scenes) scenes=$2; shift 2 ;;
    --bristle) bristle=$2; shift 2 ;;
    --time-scale) time_scale=$2; shift 2 ;;
    --no-libfuzzer) libfuzzer=0; shift ;;
    --no-scenes) generated=0; shift ;;
    *) echo "tools/fuzz.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done

source tools/sanitizer-env.sh
status=0

if [ "$libfuzzer" = 1 ]; then
  # Release keeps the asserts (CMakeLists.txt); line tables make the stacks point at lines.
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_CXX_FLAGS=-gline-tables-only -DBRISTLE_FUZZ=ON -DBRISTLE_BUILD_TESTS=OFF
  cmake --build build-fuzz --target fuzz_load_scene --parallel "$(nproc)"
  # libFuzzer writes new inputs to the first folder and only reads the others (the seeds:
  # bundled scenes, the malformed scenes of the tests, hand-written seeds covering every key).
  mkdir -p build-fuzz/corpus build-fuzz/findings
  # Byte mutations rarely turn one valid scene into another valid one, so libFuzzer also
  # starts from the scene generator's scenes (valid, extreme and malformed, same seed).
  rm -rf build-fuzz/generated-seeds
  python3 tools/fuzz_scenes.py --emit build-fuzz/generated-seeds --seed "$seed" --count 300
  # -timeout: one input taking longer is a hang; -rss_limit_mb: the largest scene the
  # loader accepts (10^7 vertices) fits, anything beyond is a finding; -max_len: well above
  # the seeds, so the fuzzer can grow them.
  build-fuzz/tests/fuzz/fuzz_load_scene -seed="$seed" -max_total_time="$fuzz_time" \
      -timeout=25 -rss_limit_mb=4096 -max_len=16384 -dict=tests/fuzz/scene.dict \
      -artifact_prefix=build-fuzz/findings/ -print_final_stats=1 \
      build-fuzz/corpus tests/fuzz/seeds build-fuzz/generated-seeds scenes tests/cli/malformed \
      tests/cli/analysis tests/scene/data \
    || { status=1; echo "tools/fuzz.sh: libFuzzer found a problem; the input is in build-fuzz/findings/" >&2; }
fi

if [ "$generated" = 1 ]; then
  python3 tools/fuzz_scenes.py --bristle "$bristle" --seed "$seed" --count "$scenes" \
      --time-scale "$time_scale" --work build-fuzz/scenes --failures build-fuzz/scene-failures \
    || status=1
fi
exit "$status"
