// Malformed scenes: each must be refused with a SceneError naming the JSON pointer of the
// offending value and saying what was expected.

#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "support/scene_refusal.hpp"
#include "bristle/scene/load_scene.hpp"
#include "test_paths.hpp"

using namespace bristle;
using nlohmann::json;

namespace {

json valid_scene() {
  std::ifstream in(std::string(bristle::test::kTestsDir) + "/scene/data/valid_3d.json");
  return json::parse(in);
}

json valid_2d_scene() {
  return json::parse(R"({
    "format": "bristle-scene/1", "dimension": 2,
    "time": { "dt": 0.001, "duration": 0.1 },
    "materials": { "steel": { "density": 7800, "radius": 0.0001, "youngs_modulus": 2e11 } },
    "rods": [ { "name": "tuft", "material": "steel",
                "generator": { "type": "brush", "layout": { "type": "grid", "columns": 3, "spacing": 0.001 },
                               "root": [0, 0], "direction": [0, 1], "length": 0.01, "segments": 2 } } ]
  })");
}

SceneError load_error(const std::string& text) { return test::scene_refusal(text); }

struct Malformed {
  const char* what;
  std::function<void(json&)> edit;  // turns the valid scene into the malformed one
  const char* pointer;              // where the error must point
  const char* mentions;             // a piece of the message saying what was expected
};

json::json_pointer at(const char* pointer) { return json::json_pointer(pointer); }

std::function<void(json&)> set(const char* pointer, json value) {
  return [pointer, value](json& scene) { scene[at(pointer)] = value; };
}

std::function<void(json&)> erase(const char* object, const char* key) {
  return [object, key](json& scene) { scene[at(object)].erase(key); };
}

const Malformed kMalformed3d[] = {
    {"wrong format", set("/format", "bristle-scene/2"), "/format", "expected \"bristle-scene/1\""},
    {"missing format", erase("", "format"), "/format", "missing required key \"format\""},
    {"dimension 4", set("/dimension", 4), "/dimension", "expected 2 or 3"},
    {"name not a string", set("/name", 12), "/name", "expected a string"},
    {"negative dt", set("/time/dt", -0.001), "/time/dt", "expected a positive number, found -0.001"},
    {"missing dt", erase("/time", "dt"), "/time/dt", "missing required key \"dt\""},
    {"zero duration", set("/time/duration", 0), "/time/duration", "expected a positive number"},
    {"frame_dt not a multiple", set("/time/frame_dt", 0.0015), "/time/frame_dt",
     "whole multiple of dt = 0.001"},
    {"frame_dt below dt", set("/time/frame_dt", 0.0004), "/time/frame_dt", "(at least dt)"},
    {"absurd frame count", set("/time/duration", 1e6), "/time/duration", "at most 10000000"},
    {"time not an object", set("/time", 0.001), "/time", "expected an object"},
    {"unknown top-level key", set("/gravty", json::array({0, 0, 0})), "/gravty",
     "did you mean \"gravity\"?"},
    {"unknown key with no close match", set("/time/speed", 1), "/time/speed",
     "expected \"dt\", \"frame_dt\" or \"duration\""},
    {"gravity with 2 components", set("/gravity", json::array({0, -9.81})), "/gravity",
     "a vector of 3 numbers"},
    {"gravity component not a number", set("/gravity/1", "down"), "/gravity/1", "expected a number"},
    {"negative mass damping", set("/damping/mass", -1), "/damping/mass", "expected a number >= 0"},
    {"negative stiffness damping", set("/damping/stiffness", -1e-3), "/damping/stiffness", ">= 0"},
    {"zero cg tolerance", set("/solver/cg_tolerance", 0), "/solver/cg_tolerance", "in (0, 1)"},
    {"zero cg iterations", set("/solver/cg_max_iterations", 0), "/solver/cg_max_iterations",
     "an integer in [1, 1000000]"},
    {"fractional cg iterations", set("/solver/cg_max_iterations", 2.5), "/solver/cg_max_iterations",
     "an integer in [1, 1000000], found 2.5"},
    {"zero newton iterations", set("/solver/newton_iterations", 0), "/solver/newton_iterations",
     "an integer in [1, 1000]"},
    {"unknown mode", set("/solver/mode", "statik"), "/solver/mode", "did you mean \"static\"?"},
    {"length correction as text", set("/solver/length_correction", "yes"), "/solver/length_correction",
     "expected true or false"},
    {"projection typo", set("/solver/projection", "bending_mode"), "/solver/projection",
     "did you mean \"bending_modes\"?"},
    {"negative density", set("/materials/nylon/density", -5), "/materials/nylon/density",
     "expected a positive number, found -5"},
    {"density as text", set("/materials/nylon/density", "heavy"), "/materials/nylon/density",
     "expected a positive number, found \"heavy\""},
    {"zero Young's modulus", set("/materials/nylon/youngs_modulus", 0), "/materials/nylon/youngs_modulus",
     "positive number"},
    {"material key typo", [](json& s) { s["materials"]["nylon"]["youngs_modulu"] = 1; },
     "/materials/nylon/youngs_modulu", "did you mean \"youngs_modulus\"?"},
    {"missing radius", erase("/materials/nylon", "radius"), "/materials/nylon/radius",
     "missing required key \"radius\""},
    {"inline material zero radius", set("/rods/1/material/radius", 0), "/rods/1/material/radius",
     "positive number"},
    {"unknown material name", set("/rods/0/material", "nylonn"), "/rods/0/material",
     "did you mean \"nylon\"?"},
    {"material neither name nor object", set("/rods/0/material", 3), "/rods/0/material",
     "a material name or an inline material object"},
    {"rods missing", erase("", "rods"), "/rods", "missing required key \"rods\""},
    {"no rods", set("/rods", json::array()), "/rods", "a non-empty array of rods"},
    {"one vertex", set("/rods/0/vertices", json::array({json::array({0, 0, 0})})), "/rods/0/vertices",
     "at least 2 vertices"},
    {"vertex with 2 components", set("/rods/0/vertices/1", json::array({0.001, 0})),
     "/rods/0/vertices/1", "a vector of 3 numbers"},
    {"zero-length edge", set("/rods/0/vertices/2", json::array({0.001, 0, 0})), "/rods/0/vertices/2",
     "vertex 2 coincides with vertex 1"},
    {"rod folds back", set("/rods/0/vertices/2", json::array({0, 0, 0})), "/rods/0/vertices/1",
     "folds back"},
    {"fixed out of range", set("/rods/0/fixed/1", 3), "/rods/0/fixed/1", "a vertex index in [0, 2]"},
    {"fixed negative", set("/rods/0/fixed/0", -1), "/rods/0/fixed/0", "a vertex index in [0, 2]"},
    {"fixed duplicated", set("/rods/0/fixed/1", 0), "/rods/0/fixed/1", "listed twice"},
    {"fixed not an array", set("/rods/0/fixed", 0), "/rods/0/fixed", "an array of vertex indices"},
    {"unknown rest", set("/rods/0/rest", "bent"), "/rods/0/rest", "\"initial\" or \"straight\""},
    {"vertices and generator", set("/rods/0/generator", json::object()), "/rods/0/generator",
     "either \"vertices\" or \"generator\""},
    {"neither vertices nor generator", erase("/rods/0", "vertices"), "/rods/0/vertices",
     "missing required key \"vertices\" (or \"generator\")"},
    {"duplicate rod name", set("/rods/1/name", "bent"), "/rods/1/name", "duplicate rod name \"bent\""},
    {"empty rod name", set("/rods/0/name", ""), "/rods/0/name", "a non-empty string"},
    {"unknown generator type", set("/rods/1/generator/type", "straigth"), "/rods/1/generator/type",
     "did you mean \"straight\"?"},
    {"generator without type", erase("/rods/1/generator", "type"), "/rods/1/generator/type",
     "missing required key \"type\""},
    {"zero segments", set("/rods/1/generator/segments", 0), "/rods/1/generator/segments",
     "an integer in [1, 1000000]"},
    {"straight generator of zero length", set("/rods/1/generator/to", json::array({0, 0, 0.01})),
     "/rods/1/generator/to", "zero length"},
    {"key of another generator", set("/rods/1/generator/length", 1), "/rods/1/generator/length",
     "unknown key \"length\""},
    {"load on an unknown rod", set("/loads/0/rod", "lin"), "/loads/0/rod", "did you mean \"line\"?"},
    {"load vertex out of range", set("/loads/0/vertex", 31), "/loads/0/vertex",
     "a vertex index in [0, 30]"},
    {"load on a fixed vertex", set("/loads/0/vertex", 0), "/loads/0/vertex", "is fixed"},
    {"load force with 2 components", set("/loads/0/force", json::array({0, 1})), "/loads/0/force",
     "a vector of 3 numbers"},
    {"negative ramp", set("/loads/0/ramp", -1), "/loads/0/ramp", ">= 0"},
    {"negative friction", set("/colliders/0/friction", -0.1), "/colliders/0/friction",
     "expected a number >= 0, found -0.1"},
    {"zero plane normal", set("/colliders/0/normal", json::array({0, 0, 0})), "/colliders/0/normal",
     "non-zero direction"},
    {"negative sphere radius", set("/colliders/1/radius", -0.002), "/colliders/1/radius", ">= 0"},
    {"negative capsule radius", set("/colliders/2/radius", -1), "/colliders/2/radius", ">= 0"},
    {"unknown collider type", set("/colliders/1/type", "sphre"), "/colliders/1/type",
     "did you mean \"sphere\"?"},
    {"sphere with a plane's key", set("/colliders/1/normal", json::array({0, 1, 0})),
     "/colliders/1/normal", "unknown key \"normal\""},
    {"flat box", set("/colliders/3/half_extents/1", 0), "/colliders/3/half_extents",
     "positive half extents"},
    {"box rotation without axis", erase("/colliders/3/rotation", "axis"), "/colliders/3/rotation/axis",
     "missing required key \"axis\""},
    {"rod_contact neither object nor boolean", set("/rod_contact", "on"), "/rod_contact",
     "expected true, false or an object with \"enabled\", \"friction\", \"self\" and \"method\", found \"on\""},
    {"rod_contact a number", set("/rod_contact", 1), "/rod_contact", "expected true, false or an object"},
    {"rod_contact enabled as text", set("/rod_contact", {{"enabled", "true"}}), "/rod_contact/enabled",
     "expected true or false, found \"true\""},
    {"rod_contact negative friction", set("/rod_contact", {{"enabled", true}, {"friction", -0.2}}),
     "/rod_contact/friction", "expected a number >= 0, found -0.2"},
    {"rod_contact friction as text", set("/rod_contact", {{"friction", "0.3"}}), "/rod_contact/friction",
     "expected a number >= 0, found \"0.3\""},
    {"rod_contact self a number", set("/rod_contact", {{"self", 0}}), "/rod_contact/self",
     "expected true or false, found 0"},
    {"rod_contact key typo", set("/rod_contact", {{"enabled", true}, {"frction", 0.3}}), "/rod_contact/frction",
     "unknown key \"frction\"; did you mean \"friction\"?"},
    {"rod_contact key of a collider", set("/rod_contact", {{"radius", 0.001}}), "/rod_contact/radius",
     "expected \"enabled\", \"friction\", \"self\" or \"method\""},
    {"rod_contact method misspelt", set("/rod_contact", {{"enabled", true}, {"method", "constraint"}}),
     "/rod_contact/method", "did you mean \"constraints\"?"},
    {"rod_contact method a boolean", set("/rod_contact", {{"method", true}}), "/rod_contact/method", "found true"},
};

}  // namespace

TEST_CASE("scene: malformed 3D scenes are refused with the pointer and what was expected") {
  {
    // The unedited scene loads: every refusal below is the edit's doing.
    const json scene = valid_scene();
    CHECK_NOTHROW(load_scene_from_string(scene.dump(2), "scene.json"));
  }
  for (const Malformed& m : kMalformed3d) {
    CAPTURE(std::string(m.what));
    json scene = valid_scene();
    m.edit(scene);
    const SceneError e = load_error(scene.dump(2));
    CAPTURE(std::string(e.what()));
    CHECK(e.pointer() == m.pointer);
    CHECK(e.message().find(m.mentions) != std::string::npos);
    CHECK(e.line() > 0);
    CHECK(e.file() == "scene.json");
  }
}

TEST_CASE("scene: malformed 2D scenes and brushes are refused") {
  const Malformed cases[] = {
      {"3-component vector in 2D", set("/rods/0/generator/root", json::array({0, 0, 0})),
       "/rods/0/generator/root", "a vector of 2 numbers"},
      {"2D brush with two rows", set("/rods/0/generator/layout/rows", 2), "/rods/0/generator/layout/rows",
       "an integer in [1, 1]"},
      {"brush bristles overlapping", set("/rods/0/generator/layout/spacing", 0.00015),
       "/rods/0/generator/layout/spacing", "at least the bristle diameter"},
      // A diameter that overflows is written as twice the radius, not as null (tools/fuzz_scenes.py).
      {"brush radius near the largest double", set("/materials/steel/radius", 1.7976931348623157e308),
       "/rods/0/generator/layout/spacing", "the bristle diameter 2 x 1.7976931348623157e+308 (twice"},
      {"brush bristles tilted into each other",
       [](json& scene) {
         json& generator = scene["rods"][0]["generator"];
         generator["layout"] = {{"type", "grid"}, {"columns", 30}, {"spacing", 0.0002}};
         generator["jitter"] = {{"direction", 1.2}, {"seed", 3}};
       },
       "/rods/0/generator", "the bristles do not fit"},
      {"brush zero direction", set("/rods/0/generator/direction", json::array({0, 0})),
       "/rods/0/generator/direction", "non-zero direction"},
      {"brush negative length", set("/rods/0/generator/length", -0.01), "/rods/0/generator/length",
       "positive number"},
      {"brush missing layout", erase("/rods/0/generator", "layout"), "/rods/0/generator/layout",
       "missing required key \"layout\""},
      {"brush unknown layout", set("/rods/0/generator/layout/type", "hex"), "/rods/0/generator/layout/type",
       "\"grid\" or \"disk\""},
      {"brush jitter of the whole length", set("/rods/0/generator/jitter", json{{"length", 1.0}}),
       "/rods/0/generator/jitter/length", "a number in [0, 1)"},
      {"brush jitter tilt of pi/2", set("/rods/0/generator/jitter", json{{"direction", 1.6}}),
       "/rods/0/generator/jitter/direction", "a number in [0, "},
      {"brush negative seed", set("/rods/0/generator/jitter", json{{"seed", -1}}),
       "/rods/0/generator/jitter/seed", "an integer >= 0"},
      {"absurd brush", set("/rods/0/generator/layout/columns", 100001), "/rods/0/generator/layout/columns",
       "an integer in [1, 100000]"},
      {"brush fixed index beyond a bristle", set("/rods/0/fixed", json::array({0, 3})), "/rods/0/fixed/1",
       "a vertex index in [0, 2]"},
      {"brush name collides", [](json& s) {
         s["rods"].push_back({{"name", "tuft_1"}, {"material", "steel"},
                              {"vertices", json::array({json::array({1, 0}), json::array({2, 0})})}});
       },
       "/rods/1/name", "duplicate rod name \"tuft_1\""},
      {"load on the brush entry's own name", [](json& s) {
         s["loads"] = json::array({{{"rod", "tuft"}, {"vertex", 2}, {"force", json::array({1, 0})}}});
       },
       "/loads/0/rod", "no rod is named \"tuft\""},
      {"box rotation axis in 2D", [](json& s) {
         s["colliders"] = json::array({{{"type", "box"}, {"center", {0, 0}}, {"half_extents", {1, 1}},
                                        {"rotation", {{"axis", {0, 0, 1}}, {"angle", 1}}}}});
       },
       "/colliders/0/rotation/axis", "unknown key \"axis\""},
  };
  CHECK_NOTHROW(load_scene_from_string(valid_2d_scene().dump(2), "scene.json"));
  for (const Malformed& m : cases) {
    CAPTURE(std::string(m.what));
    json scene = valid_2d_scene();
    m.edit(scene);
    const SceneError e = load_error(scene.dump(2));
    CAPTURE(std::string(e.what()));
    CHECK(e.pointer() == m.pointer);
    CHECK(e.message().find(m.mentions) != std::string::npos);
  }
}

TEST_CASE("scene: a gravity whose length squared overflows is not an overflowing weight") {
  // |g| = 1.7e300 is finite; the weight check once took it as infinite (tools/fuzz_scenes.py).
  json scene = valid_scene();
  scene["gravity"] = json::array({1e300, 1e300, 1e300});
  scene["materials"]["nylon"]["radius"] = 1e-30;
  CHECK_NOTHROW(load_scene_from_string(scene.dump(), "scene.json"));
  scene["materials"]["nylon"]["radius"] = 1e-3;  // a weight of 1e-3 kg x 1.7e300 N/kg: still finite
  CHECK_NOTHROW(load_scene_from_string(scene.dump(), "scene.json"));
  scene["materials"]["nylon"]["density"] = 1e10;  // masses above 1 kg: now the weight overflows
  scene["gravity"] = json::array({1e308, 1e308, 1e308});
  CHECK(load_error(scene.dump()).pointer() == "/gravity");
}

TEST_CASE("scene: a huge 3D disk brush is refused before it is generated") {
  json scene = valid_2d_scene();
  scene["dimension"] = 3;
  scene["rods"][0]["generator"] = {{"type", "brush"},
                                   {"layout", {{"type", "disk"}, {"radius", 1.0}, {"spacing", 0.001}}},
                                   {"root", {0, 0, 0}}, {"direction", {0, 1, 0}}, {"length", 0.01},
                                   {"segments", 2}};
  const SceneError e = load_error(scene.dump());
  CHECK(e.pointer() == "/rods/0/generator/layout");
  CHECK(e.message().find("at most 100000") != std::string::npos);
}

TEST_CASE("scene: errors name the line of the offending value in the original text") {
  const std::string text =
      "{\n"
      "  \"format\": \"bristle-scene/1\",\n"
      "  \"time\": { \"dt\": 0.001, \"duration\": 1 },\n"
      "  \"materials\": {\n"
      "    \"nylon\": { \"density\": 1140, \"radius\": 0.0001, \"youngs_modulus\": 3e9 }\n"
      "  },\n"
      "  \"rods\": [\n"
      "    { \"material\": \"nylon\",\n"
      "      \"vertices\": [[0, 0, 0],\n"
      "                   [0.001, 0, 0]] },\n"
      "    { \"material\": {\n"
      "        \"density\": 1140,\n"
      "        \"radius\": 0.0001,\n"
      "        \"youngs_modulus\": 3e9\n"
      "      },\n"
      "      \"vertices\": [[0, 0, 0], [0, 0, 0.001]] }\n"
      "  ]\n"
      "}\n";
  auto with = [&](const std::string& from, const std::string& to) {
    std::string edited = text;
    edited.replace(edited.find(from), from.size(), to);
    return load_error(edited);
  };
  CHECK_NOTHROW(load_scene_from_string(text, "scene.json"));

  SceneError e = with("\"density\": 1140,\n        \"radius\"", "\"density\": -5,\n        \"radius\"");
  CHECK(e.pointer() == "/rods/1/material/density");
  CHECK(e.line() == 12);
  CHECK(std::string(e.what()) == "scene.json:12: /rods/1/material/density: expected a positive number, found -5");

  e = with("[0.001, 0, 0]]", "[0.001, 0]]");
  CHECK(e.pointer() == "/rods/0/vertices/1");
  CHECK(e.line() == 10);

  e = with("\"dt\": 0.001", "\"dt\": 0.001, \"dtt\": 1");
  CHECK(e.pointer() == "/time/dtt");
  CHECK(e.line() == 3);
  CHECK(e.message() == "unknown key \"dtt\"; did you mean \"dt\"?");

  e = with("\"youngs_modulus\": 3e9\n      }", "\"youngs_modulus\": 3e9,\n        \"radius\": 2\n      }");
  CHECK(e.pointer() == "/rods/1/material/radius");
  CHECK(e.line() == 15);
  CHECK(e.message().find("appears twice") != std::string::npos);

  e = with("\"radius\": 0.0001,\n", "");  // missing key: the line of its object
  CHECK(e.pointer() == "/rods/1/material/radius");
  CHECK(e.line() == 11);
}

TEST_CASE("scene: syntax errors give the line and column of the fault") {
  SceneError e = load_error("{\n  \"format\": \"bristle-scene/1\",\n  \"time\": {\"dt\": 0.001,}\n}");
  CHECK(e.pointer().empty());
  CHECK(e.line() == 3);
  CHECK(e.message().find("invalid JSON at column 24: ") == 0);
  CHECK(e.message().find("parse_error") == std::string::npos);  // nlohmann's prefix is dropped

  e = load_error("");
  CHECK(e.line() == 1);
  CHECK(e.message().find("unexpected end of input") != std::string::npos);

  e = load_error("{\n\"format\": \"bristle-scene/1\",\n\"time\": {\"dt\": 1e400}}");
  CHECK(e.line() == 3);  // not a finite double
  CHECK(e.message().find("1e400") != std::string::npos);

  e = load_error("[1, 2]");
  CHECK(e.pointer().empty());
  CHECK(e.message().find("expected a JSON object") == 0);
}
