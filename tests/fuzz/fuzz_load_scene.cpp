// libFuzzer target: arbitrary bytes through the scene loader's parse-and-validate entry point
// (load_scene_from_string, include/bristle/scene/load_scene.hpp). Refusing the input with a
// SceneError is the documented outcome for bad input; anything else is a finding:
//   - another exception: the loader let an internal error escape (the command line would
//     print "internal error" and exit 1 instead of naming the offending value);
//   - a crash, a sanitizer report, a timeout or running out of memory (libFuzzer's own checks).
// Build and run: docs/fuzzing.md.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "bristle/scene/load_scene.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const bristle::Scene scene = bristle::load_scene_from_string(text, "fuzz.json");
    (void)scene;
  } catch (const bristle::SceneError&) {
    // A refusal: what the loader promises for bad input.
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fuzz_load_scene: the loader threw a non-SceneError exception: %s\n", error.what());
    std::abort();  // libFuzzer records the input as a crash
  }
  return 0;
}
