// Issue 13, scene side: inputs that used to crash, hang or exhaust the machine (a fuzzer
// found them) are refused quickly, at a JSON pointer, with a short message.

#include <chrono>
#include <string>

#include <doctest/doctest.h>

#include "support/scene_refusal.hpp"
#include "bristle/io/json_parse.hpp"
#include "bristle/scene/load_scene.hpp"
#include "bristle/scene/suggest.hpp"

using namespace bristle;

namespace {

SceneError refusal(const std::string& text) { return test::scene_refusal(text); }

// A small valid scene with `material` and `gravity` and `generator_to` substituted.
std::string scene_with(const std::string& material, const std::string& gravity, const std::string& to = "[0.03, 0, 0]") {
  return R"({
  "format": "bristle-scene/1",
  "time": { "dt": 0.001, "duration": 0.01 },
  "gravity": )" + gravity + R"(,
  "materials": { "nylon": )" + material + R"( },
  "rods": [ { "name": "bristle", "material": "nylon",
              "generator": { "type": "straight", "from": [0, 0, 0], "to": )" + to + R"(, "segments": 10 },
              "fixed": [0, 1] } ]
})";
}

const std::string kNylon = R"({ "density": 1140, "radius": 0.0001, "youngs_modulus": 3e9 })";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("limits: a value nested 100000 deep is refused at its pointer, without recursion") {
  // 200 KB of brackets: the error message used to describe the value with a recursive dump
  // and overflowed the stack.
  const std::string text = "{\"format\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  const SceneError e = refusal(text);
  std::string pointer = "/format";
  for (int level = 1; level < kMaxJsonDepth; ++level) pointer += "/0";  // the 65th container
  CHECK(e.pointer() == pointer);
  CHECK(e.line() == 1);
  CHECK(e.message().find("nested deeper than 64") != std::string::npos);
}

TEST_CASE("limits: nesting up to the limit is accepted by the parser, one more level is not") {
  const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  CHECK_NOTHROW(parse_json_bounded(nested(kMaxJsonDepth)));
  CHECK_THROWS_AS(parse_json_bounded(nested(kMaxJsonDepth + 1)), JsonParseError);
  // Objects count too, and the pointer follows keys.
  try {
    std::string text;
    for (int level = 0; level <= kMaxJsonDepth; ++level) text += "{\"a/b\": ";
    text += "1" + std::string(kMaxJsonDepth + 1, '}');
    parse_json_bounded(text);
    FAIL("not refused");
  } catch (const JsonParseError& e) {
    CHECK(e.pointer().rfind("/a~1b/a~1b/", 0) == 0);
  }
}

TEST_CASE("limits: a number beyond a double is refused at its pointer") {
  const SceneError e = refusal("{\n\"format\": \"bristle-scene/1\",\n\"time\": {\"dt\": 1e400}}");
  CHECK(e.pointer() == "/time/dt");
  CHECK(e.line() == 3);
  CHECK(e.message().find("1e400") != std::string::npos);
}

TEST_CASE("limits: a 20 MB misspelt value is refused at once with a short message") {
  // The suggestion used to fill a 20M x 6 edit-distance table (1.47 GB, over 5 s).
  const std::string huge(20'000'000, 'x');
  // The suggestion alone: microseconds now; it used to take over 5 s (0.5 s leaves room for a
  // loaded machine).
  const auto start = std::chrono::steady_clock::now();
  CHECK(did_you_mean(huge, {"dynamic", "static"}).empty());
  CHECK(seconds_since(start) < 0.5);
  // Through the loader (2 MB keeps the test fast): a short message at the pointer.
  const SceneError e = refusal(R"({"format": "bristle-scene/1", "time": {"dt": 0.001, "duration": 0.01},
    "solver": {"mode": ")" + huge.substr(0, 2'000'000) + R"("}, "rods": []})");
  CHECK(e.pointer() == "/solver/mode");
  CHECK(e.message().size() < 300);
  CHECK(e.message().find("(2000000 bytes)") != std::string::npos);

  // The same for a long unknown key.
  const SceneError key = refusal("{\"format\": \"bristle-scene/1\", \"" + std::string(100000, 'k') + "\": 1}");
  CHECK(key.message().size() < 400);
}

TEST_CASE("limits: suggestions skip words too long or too different in length to be typos") {
  CHECK(closest_match("densty", {"density"}) == std::optional<std::string>("density"));
  CHECK_FALSE(closest_match(std::string(kLongestTypo + 1, 'd'), {"density"}).has_value());
  CHECK_FALSE(closest_match("d", {"density"}).has_value());
  CHECK(did_you_mean(std::string(1'000'000, 'a'), {"static", "dynamic"}).empty());
}

TEST_CASE("limits: finite numbers whose products overflow are refused at the key responsible") {
  SceneError e = refusal(scene_with(R"({ "density": 1e300, "radius": 0.0001, "youngs_modulus": 3e9 })",
                                    "[0, -1e300, 0]"));
  CHECK(e.pointer() == "/gravity");
  CHECK(e.message().find("overflows") != std::string::npos);

  e = refusal(scene_with(R"({ "density": 1e300, "radius": 1e200, "youngs_modulus": 3e9 })", "[0, -9.81, 0]"));
  CHECK(e.pointer() == "/materials/nylon/density");

  e = refusal(scene_with(R"({ "density": 1140, "radius": 1e100, "youngs_modulus": 1e300 })", "[0, 0, 0]"));
  CHECK(e.pointer() == "/materials/nylon/youngs_modulus");

  // A generator endpoint at 1.79e308: each coordinate finite, the edges beyond a double.
  e = refusal(scene_with(kNylon, "[0, -9.81, 0]", "[1.79e308, 0, 0]"));
  CHECK(e.pointer() == "/rods/0/generator");
  CHECK(e.message().find("longer than a double") != std::string::npos);
  // 1.8e308 itself is beyond a double: refused where it stands.
  CHECK(refusal(scene_with(kNylon, "[0, -9.81, 0]", "[1.8e308, 0, 0]")).pointer() == "/rods/0/generator/to/0");

  CHECK_NOTHROW(load_scene_from_string(scene_with(kNylon, "[0, -9.81, 0]"), "scene.json"));
}

TEST_CASE("limits: counts taken from the scene are bounded") {
  const auto solver = [](const std::string& block) {
    return R"({"format": "bristle-scene/1", "time": {"dt": 0.001, "duration": 0.01}, "solver": )" + block +
           R"(, "materials": {"m": {"density": 1, "radius": 0.001, "youngs_modulus": 1e6}},
              "rods": [{"material": "m", "vertices": [[0,0,0],[1,0,0]]}]})";
  };
  CHECK(refusal(solver(R"({"newton_iterations": 1001})")).pointer() == "/solver/newton_iterations");
  CHECK(refusal(solver(R"({"cg_max_iterations": 2000000000})")).pointer() == "/solver/cg_max_iterations");
  CHECK(refusal(solver(R"({"threads": 1025})")).pointer() == "/solver/threads");
  // 10^7 frames of 10^3 steps: each bound alone holds, the total (10^10 steps) does not.
  const SceneError steps = refusal(R"({"format": "bristle-scene/1", "time": {"dt": 1e-6, "frame_dt": 1e-3, "duration": 9999},
    "rods": []})");
  CHECK(steps.pointer() == "/time/duration");
  CHECK(steps.message().find("time steps") != std::string::npos);
}
