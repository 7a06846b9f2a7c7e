// The JSON Schema of scene files (scenes/bristle-scene.schema.json) held against the loader,
// with valijson (Debian's libvalijson-dev, draft-07) as the validator:
//  - every scene the project ships or stores (bundled, validation, fuzz seeds, the documented
//    examples, the golden manifests' expanded scenes) is valid under the schema;
//  - every malformed scene of tests/cli/malformed/ that the schema can judge is refused by it,
//    except an explicit list refused for reasons a schema cannot state;
//  - a table of single-value edits of two complete scenes gets the same verdict from both;
//  - no scene the loader accepts is refused by the schema (fuzz regression scenes included).
// So the test fails when the schema and the loader drift apart in either direction.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "bristle/scene/limits.hpp"
#include "bristle/scene/load_scene.hpp"
#include "bristle/scene/scene_error.hpp"
#include "test_paths.hpp"

using namespace bristle;

namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path source_path(const std::string& relative) { return fs::path(test::kSourceDir) / relative; }

const valijson::Schema& scene_schema() {
  static const std::unique_ptr<valijson::Schema> schema = [] {
    const nlohmann::json document = nlohmann::json::parse(read_text(source_path("scenes/bristle-scene.schema.json")));
    auto parsed = std::make_unique<valijson::Schema>();
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    parser.populateSchema(valijson::adapters::NlohmannJsonAdapter(document), *parsed);
    return parsed;
  }();
  return *schema;
}

// The schema's complaints about `document`, one line each ("<root> [rods] [0]: ..."); empty
// when it is valid.
std::vector<std::string> schema_errors(const nlohmann::json& document) {
  valijson::Validator validator;  // strict types: "3" is not a number
  valijson::ValidationResults results;
  validator.validate(scene_schema(), valijson::adapters::NlohmannJsonAdapter(document), &results);
  std::vector<std::string> errors;
  valijson::ValidationResults::Error error;
  while (results.popError(error)) {
    std::string where;
    for (const std::string& part : error.context) where += part + " ";
    errors.push_back(where + ": " + error.description);
  }
  return errors;
}

// The loader's verdict: "" when it accepts, its message when it refuses.
std::string loader_refusal(const std::string& text, const std::string& label) {
  try {
    load_scene_from_string(text, label);
  } catch (const SceneError& e) {
    return e.what();
  }
  return "";
}

std::vector<fs::path> json_files(const std::string& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(source_path(folder)))
    if (entry.is_regular_file() && entry.path().extension() == ".json" &&
        entry.path().filename() != "bristle-scene.schema.json")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// A scene the project ships must load and satisfy the schema.
void check_valid_scene(const nlohmann::json& document, const std::string& label) {
  CAPTURE(label);
  CHECK_MESSAGE(loader_refusal(document.dump(), label).empty(), loader_refusal(document.dump(), label));
  const std::vector<std::string> errors = schema_errors(document);
  CHECK_MESSAGE(errors.empty(), (errors.empty() ? "" : errors.front()));
}

// Malformed scenes the loader refuses for reasons no JSON Schema (draft-07) can state: each
// relates two values of the scene, needs arithmetic on them, or is about the text rather than
// the parsed document. The schema must accept exactly these (and the unparsable ones below);
// it must refuse every other file of tests/cli/malformed/.
const std::map<std::string, const char*> kBeyondTheSchema = {
    {"06_frame_dt_not_multiple", "frame_dt a whole multiple of dt: a relation of two values"},
    {"13_unknown_material", "a rod's material names an entry of \"materials\": a cross-reference"},
    {"15_zero_length_edge", "two consecutive vertices coincide: geometry"},
    {"16_fixed_out_of_range", "a fixed index beyond the rod's vertex count: a relation of two values"},
    {"25_load_unknown_rod", "a load names a rod that does not exist: a cross-reference"},
    {"26_load_vertex_out_of_range", "a load's vertex beyond its rod's vertex count: a cross-reference"},
    {"30_duplicate_rod_name", "rod names unique across entries: a relation between array items' keys"},
    {"36_duplicate_key", "a key given twice: a parser keeps one, so the schema never sees the other"},
    {"37_rod_folds_back", "consecutive edges exactly antiparallel: geometry"},
    {"38_brush_spacing_overlap", "spacing below twice the material's radius: a relation of two values"},
    {"45_frame_count_absurd", "round(duration / frame_dt) + 1 frames beyond 10^7: arithmetic"},
    {"46_load_on_fixed_vertex", "a load on a vertex its rod's \"fixed\" lists: a cross-reference"},
    {"54_straight_zero_length", "a straight generator's \"to\" equals its \"from\": a relation of two values"},
    {"57_weight_overflows", "density x gravity overflows a double: arithmetic"},
    {"58_generator_endpoint_overflows", "an edge longer than a double can hold: arithmetic"},
    {"61_brush_too_dense", "tilted bristles that cannot be drawn clear of each other: geometry"},
    {"62_brush_check_unbounded", "bristles too long and tilted to check for overlaps in bounded time: geometry"},
    {"86_handle_pivot_overflows", "a handle's pose moves its rod's vertices beyond a double (pivot x rotation): arithmetic"},
    {"87_handle_places_rod_beyond_precision", "a handle places its rod where its edges round to zero length: arithmetic"},
    {"90_handle_places_rod_beyond_drawing", "a handle places its rod beyond 1e100 m (translation plus pivot and rotation): arithmetic"},
    {"88_rod_contact_barrier_stiffness_overflows",
     "the rod-contact barrier's stiffness, sized to a heavy rod's weight under 1e308 m/s^2, overflows: arithmetic"},
    {"89_section_area_underflows", "a positive radius whose section's area underflows to zero (no mass): arithmetic"},
    {"79_brush_curl_spacing_overlap",
     "spacing below twice the material's radius plus twice the largest coil radius: a relation of three values"},
    {"71_ribbon_without_twist_in_3d",
     "a named material's section bends differently about its two axes (width != thickness) and a rod uses it "
     "without twist: a cross-reference and a relation of two values"},
};

// Malformed files that are no JSON document a validator could check (nlohmann/json refuses
// them, as the loader does).
const std::map<std::string, const char*> kNotJson = {
    {"33_syntax_error", "a JSON syntax error"},
    {"47_empty_file", "an empty file"},
    {"59_number_beyond_double", "1e400, beyond a double (JSON parsers refuse it or read infinity)"},
};

}  // namespace

TEST_CASE("schema: the shipped schema parses as a draft-07 schema") {
  const nlohmann::json document = nlohmann::json::parse(read_text(source_path("scenes/bristle-scene.schema.json")));
  CHECK(document["$schema"] == "http://json-schema.org/draft-07/schema#");
  CHECK(document["properties"]["format"]["const"] == "bristle-scene/1");
  CHECK_NOTHROW(scene_schema());
}

TEST_CASE("schema: its bounds on counts are those of limits.hpp") {
  const nlohmann::json schema = nlohmann::json::parse(read_text(source_path("scenes/bristle-scene.schema.json")));
  const nlohmann::json& solver = schema["properties"]["solver"]["properties"];
  const nlohmann::json& definitions = schema["definitions"];
  CHECK(solver["cg_max_iterations"]["maximum"] == kMaxCgIterations);
  CHECK(solver["newton_iterations"]["anyOf"][1]["maximum"] == kMaxNewtonIterations);
  CHECK(solver["max_newton_iterations"]["maximum"] == kMaxNewtonIterations);
  CHECK(solver["threads"]["maximum"] == kMaxThreads);
  CHECK(definitions["rod"]["properties"]["vertices"]["maxItems"] == kMaxSceneVertices);
  const nlohmann::json& straight = definitions["generator"]["allOf"][0]["then"]["properties"];
  const nlohmann::json& brush = definitions["generator"]["allOf"][1]["then"]["properties"];
  CHECK(straight["segments"]["maximum"] == kMaxGeneratedSegments);
  CHECK(brush["segments"]["maximum"] == kMaxGeneratedSegments);
  const nlohmann::json& grid = definitions["brush_layout"]["allOf"][0]["then"]["properties"];
  CHECK(grid["rows"]["maximum"] == kMaxBrushBristles);
  CHECK(grid["columns"]["maximum"] == kMaxBrushBristles);
}

TEST_CASE("schema: every bundled, validation and fuzz-seed scene is valid under the schema") {
  int checked = 0;
  for (const std::string folder : {"scenes", "scenes/validation", "tests/fuzz/seeds"})
    for (const fs::path& file : json_files(folder)) {
      check_valid_scene(nlohmann::json::parse(read_text(file)), file.string());
      ++checked;
    }
  CHECK(checked >= 20);
}

TEST_CASE("schema: the golden manifests' expanded scenes are valid under the schema") {
  // The expanded scene (every default explicit, generators expanded) is itself a scene.
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(source_path("tests/golden"))) {
    const fs::path manifest = entry.path() / "manifest.json";
    if (!fs::exists(manifest)) continue;
    check_valid_scene(nlohmann::json::parse(read_text(manifest)).at("scene"), manifest.string());
    ++checked;
  }
  CHECK(checked >= 5);
}

TEST_CASE("schema: the complete scenes in docs/scene-format.md are valid under the schema") {
  std::ifstream in(source_path("docs/scene-format.md"));
  REQUIRE(in);
  std::string line, block;
  bool inside = false;
  int checked = 0;
  while (std::getline(in, line)) {
    if (!inside && line == "```json") {
      inside = true;
      block.clear();
    } else if (inside && line == "```") {
      inside = false;
      if (block.rfind("{", 0) != 0 || block.find("\"format\": \"bristle-scene/1\"") == std::string::npos) continue;
      check_valid_scene(nlohmann::json::parse(block), "docs/scene-format.md");
      ++checked;
    } else if (inside) {
      block += line + "\n";
    }
  }
  CHECK(checked >= 2);
}

TEST_CASE("schema: the malformed scenes are refused by the schema, except those beyond a schema") {
  const std::vector<fs::path> files = json_files("tests/cli/malformed");
  CHECK(files.size() >= 60);
  std::vector<std::string> names;
  for (const fs::path& file : files) {
    const std::string name = file.stem().string();
    names.push_back(name);
    CAPTURE(name);
    const std::string text = read_text(file);
    REQUIRE_FALSE(loader_refusal(text, file.string()).empty());

    nlohmann::json document;
    bool parsed = true;
    try {
      document = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      parsed = false;
    }
    CHECK(parsed == (kNotJson.count(name) == 0));
    if (!parsed) continue;
    const std::vector<std::string> errors = schema_errors(document);
    if (kBeyondTheSchema.count(name) != 0)
      CHECK_MESSAGE(errors.empty(), "listed as beyond the schema, but the schema refuses it: " << errors.front());
    else
      CHECK_MESSAGE(!errors.empty(), "the loader refuses it, the schema accepts it: tighten the schema");
  }
  // The lists name only files that exist, so a renamed file cannot hide in them.
  for (const auto& list : {kBeyondTheSchema, kNotJson})
    for (const auto& [name, why] : list) {
      CAPTURE(name);
      CHECK(std::find(names.begin(), names.end(), name) != names.end());
    }
}

TEST_CASE("schema: no fuzz regression scene the loader accepts is refused by the schema") {
  int accepted = 0;
  for (const fs::path& file : json_files("tests/fuzz/regressions/scenes")) {
    CAPTURE(file.string());
    const std::string text = read_text(file);
    if (!loader_refusal(text, file.string()).empty()) continue;
    ++accepted;
    const std::vector<std::string> errors = schema_errors(nlohmann::json::parse(text));
    CHECK_MESSAGE(errors.empty(), (errors.empty() ? "" : errors.front()));
  }
  CHECK(accepted >= 1);
}

namespace {

// Two complete scenes, one per dimension, using every block whose keys depend on the
// dimension: generators, brush layouts, poses, colliders with rotations, handles, the camera.
const char* const kScene3d = R"({
  "$schema": "bristle-scene.schema.json",
  "format": "bristle-scene/1", "name": "agreement", "dimension": 3,
  "time": { "dt": 0.01, "frame_dt": 0.02, "duration": 0.04 },
  "gravity": [0, -9.81, 0],
  "damping": { "mass": 0.1, "stiffness": 0 },
  "solver": { "newton_iterations": 2, "tolerance": 0.001, "max_step_splits": 4, "threads": 1 },
  "materials": { "nylon": { "density": 1140, "radius": 0.0001, "youngs_modulus": 3e9 } },
  "rods": [
    { "name": "tuft", "material": "nylon",
      "generator": { "type": "brush", "layout": { "type": "grid", "rows": 2, "columns": 2, "spacing": 0.0005 },
                     "root": [0, 0, 0], "direction": [0, 1, 0], "length": 0.01, "segments": 4,
                     "jitter": { "length": 0.1, "direction": 0.1, "seed": 3 } } },
    { "name": "arm", "material": "nylon", "vertices": [[0, 0.1, 0], [0.01, 0.1, 0], [0.02, 0.1, 0]],
      "fixed": [0], "pose": { "target": [0.015, 0.11, 0], "normal": [0, 0, 1] } }
  ],
  "loads": [ { "rod": "arm", "vertex": 2, "force": [0, -0.001, 0], "ramp": 0.01 } ],
  "colliders": [
    { "type": "plane", "point": [0, -0.01, 0], "normal": [0, 1, 0], "friction": 0.3 },
    { "type": "box", "center": [0.05, 0, 0], "half_extents": [0.01, 0.01, 0.01],
      "rotation": { "axis": [0, 1, 0], "angle": 0.5 } },
    { "type": "sphere", "center": [0.1, 0, 0], "radius": 0.01 }
  ],
  "handles": [ { "name": "ferrule", "rods": ["tuft"], "colliders": [1], "pivot": [0, 0, 0],
                 "interpolation": "smooth",
                 "keys": [ { "time": 0 }, { "time": 0.04, "translation": [0.001, 0, 0],
                                            "rotation": { "axis": [0, 0, 1], "angle": 0.1 } } ] } ],
  "render": { "width": 320, "height": 240, "background": "#ffffff", "colors": [[0.1, 0.2, 0.3]],
              "camera": { "type": "perspective", "position": [0, 0, 1], "target": [0, 0, 0],
                          "up": [0, 1, 0], "fov": 30 } }
})";

const char* const kScene2d = R"({
  "format": "bristle-scene/1", "dimension": 2,
  "time": { "dt": 0.01, "duration": 0.02 },
  "gravity": [0, -9.81],
  "materials": { "nylon": { "density": 1140, "radius": 0.0001, "youngs_modulus": 3e9 } },
  "rods": [
    { "name": "tuft", "material": "nylon",
      "generator": { "type": "brush", "layout": { "type": "grid", "columns": 3, "spacing": 0.0005 },
                     "root": [0, 0], "direction": [0, 1], "length": 0.01, "segments": 4 } },
    { "name": "arm", "material": "nylon", "vertices": [[0, 0.1], [0.01, 0.1], [0.02, 0.1]],
      "fixed": [0], "pose": { "target": [0.015, 0.11], "bend": 1 } },
    { "name": "limb", "material": "nylon", "fixed": [0],
      "generator": { "type": "straight", "from": [0, 0.2], "to": [0.04, 0.2], "segments": 2 },
      "pose": { "target": [0.03, 0.22], "bend": -1 } }
  ],
  "colliders": [ { "type": "box", "center": [0.05, 0], "half_extents": [0.01, 0.01], "rotation": { "angle": 0.5 } } ],
  "handles": [ { "name": "ferrule", "rods": ["tuft"],
                 "keys": [ { "time": 0 }, { "time": 0.02, "rotation": { "angle": 0.1 } } ] } ],
  "render": { "camera": { "type": "orthographic", "target": [0, 0], "up": [0, 1], "height": 0.1 } }
})";

struct Edit {
  const char* pointer;
  const char* value;  // JSON text; nullptr removes the key
  bool valid;         // the verdict both the loader and the schema must give
};

// Edits of one value each, at the edges of the loader's checks: the schema states the same
// bounds, types, choices and dimension-dependent keys, so both must agree on every line.
const Edit kEdits3d[] = {
    {"/$schema", "\"https://example.org/s.json\"", true},
    {"/$schema", "7", false},
    {"/name", "\"\"", true},
    {"/dimension", "2", false},
    {"/solver/newton_iterations", "\"converged\"", true},
    {"/solver/newton_iterations", "\"convergd\"", false},
    {"/solver/newton_iterations", "1000", true},
    {"/solver/newton_iterations", "0", false},
    {"/solver/cg_tolerance", "1", false},
    {"/solver/cg_max_iterations", "1000000", true},
    {"/solver/cg_max_iterations", "1000001", false},
    {"/solver/tolerance", "0.1", true},
    {"/solver/tolerance", "0.10001", false},
    {"/solver/energy_tolerance", "0", false},
    {"/solver/max_newton_iterations", "1001", false},
    {"/solver/max_step_splits", "0", true},
    {"/solver/max_step_splits", "11", false},
    {"/solver/threads", "1025", false},
    {"/solver/integrator", "\"bdf2\"", true},
    {"/solver/integrator", "\"rk4\"", false},
    {"/solver/projection", "\"gauss_newton\"", true},
    {"/solver/linearization", "\"end\"", false},
    {"/solver/line_search", "\"yes\"", false},
    {"/solver/newton_tolerance", "-1", false},
    {"/damping/stiffness", "-0.1", false},
    {"/rods/0/generator/segments", "1000000", true},
    {"/rods/0/generator/segments", "1000001", false},
    {"/rods/0/generator/length", "0", false},
    {"/rods/0/generator/direction", "[0, 0, 0]", false},
    {"/rods/0/generator/direction", "[0, 1]", false},
    {"/rods/0/generator/layout/rows", nullptr, false},
    {"/rods/0/generator/layout/columns", "100001", false},
    {"/rods/0/generator/layout/radius", "0.001", false},
    {"/rods/0/generator/jitter/direction", "1.57", true},
    {"/rods/0/generator/jitter/direction", "1.5707963267948966", false},
    {"/rods/0/generator/jitter/seed", "-1", false},
    {"/rods/0/generator/jitter/seed", "9223372036854775807", true},
    {"/rods/0/generator/from", "[0, 0, 0]", false},
    {"/rods/0/generator/curl", R"({"radius": 0.00005, "pitch": 0.002, "handedness": "random", "jitter": 0.2})", true},
    {"/rods/0/generator/curl", R"({"radius": 0.00005, "pitch": 0.002, "handedness": "clockwise"})", false},
    {"/rods/0/generator/curl", R"({"radius": 0, "pitch": 0.002})", false},
    {"/rods/0/generator/curl", R"({"radius": 0.00005, "pitch": 0})", false},
    {"/rods/0/generator/curl", R"({"radius": 0.00005})", false},
    {"/rods/0/generator/curl", R"({"radius": 0.00005, "pitch": 0.002, "jitter": 1})", false},
    {"/rods/0/generator/curl", R"({"radius": 0.00005, "pitch": 0.002, "turns": 3})", false},
    {"/rods/0/generator/curl", "true", false},
    // A curly brush twists by default, so it takes a material normal without "twist".
    {"/rods/0", R"({"name": "tuft", "material": "nylon", "material_normal": [1, 0, 0], "rest_twist": 2,
                   "generator": {"type": "brush", "layout": {"type": "grid", "rows": 2, "columns": 2, "spacing": 0.0005},
                                 "root": [0, 0, 0], "direction": [0, 1, 0], "length": 0.01, "segments": 4,
                                 "curl": {"radius": 0.00005, "pitch": 0.004}}})", true},
    {"/rods/0", R"({"name": "tuft", "material": "nylon", "material_normal": [1, 0, 0], "twist": false,
                   "generator": {"type": "brush", "layout": {"type": "grid", "rows": 2, "columns": 2, "spacing": 0.0005},
                                 "root": [0, 0, 0], "direction": [0, 1, 0], "length": 0.01, "segments": 4,
                                 "curl": {"radius": 0.00005, "pitch": 0.004}}})", false},
    {"/rods/0/material", "{\"density\": 1, \"radius\": 0.0001, \"youngs_modulus\": 1}", true},
    {"/rods/0/material", "\"\"", false},
    {"/materials/nylon/cross_section", R"({"type": "circle", "radius": 0.0001})", false},
    {"/materials/nylon/radius", nullptr, false},
    {"/materials/flat", R"({"density": 1, "cross_section": {"type": "rectangle", "width": 0.001, "thickness": 0.0001},
                           "youngs_modulus": 1})", true},
    {"/materials/flat", R"({"density": 1, "cross_section": {"type": "ellipse", "a": 0.001, "b": 0.0001},
                           "youngs_modulus": 1})", true},
    {"/materials/flat", R"({"density": 1, "cross_section": {"type": "circle", "radius": 0.001}, "youngs_modulus": 1})", true},
    {"/materials/flat", R"({"density": 1, "cross_section": {"type": "square", "width": 0.001}, "youngs_modulus": 1})", false},
    {"/materials/flat", R"({"density": 1, "cross_section": {"width": 0.001, "thickness": 0.001}, "youngs_modulus": 1})", false},
    {"/materials/flat", R"({"density": 1, "cross_section": {"type": "rectangle", "width": 0.001, "thickness": 0},
                           "youngs_modulus": 1})", false},
    {"/materials/flat", R"({"density": 1, "cross_section": {"type": "ellipse", "a": 0.001, "width": 0.001},
                           "youngs_modulus": 1})", false},
    {"/materials/flat", R"({"density": 1, "cross_section": {"type": "circle", "radius": -1}, "youngs_modulus": 1})", false},
    {"/materials/flat", R"({"density": 1, "cross_section": 0.001, "youngs_modulus": 1})", false},
    {"/rods/1", R"({"name": "arm", "material": "nylon", "vertices": [[0, 0.1, 0], [0.01, 0.1, 0], [0.02, 0.1, 0]],
                   "fixed": [0], "twist": true, "rest_twist": -3, "twist_fixed": {"root": true, "tip": false}})", true},
    {"/rods/1", R"({"name": "arm", "material": "nylon", "vertices": [[0, 0.1, 0], [0.01, 0.1, 0], [0.02, 0.1, 0]],
                   "fixed": [1], "twist": true, "twist_fixed": {"root": true}})", false},
    {"/rods/1", R"({"name": "arm", "material": "nylon", "vertices": [[0, 0.1, 0], [0.01, 0.1, 0], [0.02, 0.1, 0]],
                   "fixed": [1], "twist": true, "twist_fixed": {"root": false}})", true},
    {"/rods/1", R"({"name": "arm", "material": "nylon", "vertices": [[0, 0.1, 0], [0.01, 0.1, 0], [0.02, 0.1, 0]],
                   "fixed": [0], "twist": true, "twist_fixed": {"root": "yes"}})", false},
    {"/rods/1", R"({"name": "arm", "material": "nylon", "vertices": [[0, 0.1, 0], [0.01, 0.1, 0], [0.02, 0.1, 0]],
                   "fixed": [0], "twist": true, "twist_fixed": {"middle": true}})", false},
    {"/rods/1", R"({"name": "arm", "material": "nylon", "vertices": [[0, 0.1, 0], [0.01, 0.1, 0], [0.02, 0.1, 0]],
                   "fixed": [0], "twist": true, "rest_twist": "1"})", false},
    {"/rods/1/rest_twist", "1", false},
    {"/rods/1/twist_fixed", R"({"root": false})", false},
    {"/rods/0/fixed", "[0, 1, 2]", true},
    {"/rods/0/fixed", "[-1]", false},
    {"/rods/0/rest", "\"straight\"", true},
    {"/rods/1/name", "\"\"", false},
    {"/rods/1/pose/bend", "1", false},
    {"/rods/1/pose/normal", "[0, 0, 0]", false},
    {"/rods/1/pose/target", "[0.015, 0.11]", false},
    {"/rods/1/vertices/2", "[0.02, 0.1]", false},
    {"/rods/1/vertices/3", "[0.03, 0.1, 0]", false},
    {"/rods/0/pose", "{\"target\": [0, 0.01, 0], \"normal\": [0, 0, 1]}", false},
    {"/loads/0/vertex", "-1", false},
    {"/loads/0/ramp", "0", true},
    {"/loads/0/force", "[0, -0.001]", false},
    {"/colliders/0/normal", "[0, 0, 0]", false},
    {"/colliders/0/radius", "0.1", false},
    {"/colliders/1/rotation/axis", nullptr, false},
    {"/colliders/1/rotation/axis", "[0, 0, 0]", false},
    {"/colliders/1/half_extents", "[0.01, 0, 0.01]", false},
    {"/colliders/2/radius", "0", true},
    {"/colliders/2/radius", "-0.01", false},
    {"/colliders/2/friction", "-0.1", false},
    {"/rod_contact", "true", true},
    {"/rod_contact", "false", true},
    {"/rod_contact", "{}", true},
    {"/rod_contact", R"({"enabled": true, "friction": 0.5, "self": false})", true},
    {"/rod_contact", R"({"friction": 0})", true},
    {"/rod_contact", R"({"friction": -0.1})", false},
    {"/rod_contact", R"({"friction": "0.1"})", false},
    {"/rod_contact", R"({"enabled": 1})", false},
    {"/rod_contact", R"({"enabled": "true"})", false},
    {"/rod_contact", R"({"self": "yes"})", false},
    {"/rod_contact", R"({"frction": 0.1})", false},
    {"/rod_contact", R"({"enabled": true, "radius": 0.001})", false},
    {"/rod_contact", "\"on\"", false},
    {"/rod_contact", "1", false},
    {"/rod_contact", "null", false},
    {"/rod_contact", "[true]", false},
    {"/handles/0/keys", "[]", false},
    {"/handles/0/interpolation", "\"catmull_rom\"", true},
    {"/handles/0/interpolation", "\"cubic\"", false},
    {"/handles/0/colliders/0", "-1", false},
    {"/handles/0/rods/0", "\"\"", false},
    {"/handles/0/keys/1/rotation/axis", nullptr, false},
    {"/handles/0/keys/1/translation", "[0.001, 0]", false},
    {"/handles/0/pivot", "[0, 0]", false},
    {"/render/width", "32768", false},
    {"/render/background", "\"#A0b0C0\"", true},
    {"/render/background", "\"a0b0c0\"", true},
    {"/render/background", "\"#a0b0c\"", false},
    {"/render/background", "[0, 0.5, 1]", true},
    {"/render/background", "[0, 0.5, 1.5]", false},
    {"/render/colors", "[]", false},
    {"/render/colour", "\"#000000\"", false},
    {"/render/fps", "0", false},
    {"/render/time_stamp", "true", true},
    {"/render/camera/fov", "179", true},
    {"/render/camera/fov", "180", false},
    {"/render/camera/up", "[0, 0, 0]", false},
    {"/render/camera/type", "\"fisheye\"", false},
};

const Edit kEdits2d[] = {
    {"/gravity", "[0, -9.81, 0]", false},
    {"/rods/1/material", R"({"density": 1, "cross_section": {"type": "rectangle", "width": 0.001, "thickness": 0.0001},
                            "youngs_modulus": 1})", true},
    {"/rods/1/rest_twist", "1", false},
    {"/rods/1/twist_fixed", R"({"root": false})", false},
    {"/rods/0/generator/layout/rows", "1", true},
    {"/rods/0/generator/layout/rows", "2", false},
    {"/rods/0/generator/direction", "[0, 1, 0]", false},
    {"/rods/0/generator/curl", R"({"radius": 0.00005, "pitch": 0.002})", false},
    {"/rods/1/pose/bend", "-1", true},
    {"/rods/1/pose/bend", "0", false},
    {"/rods/1/pose/normal", "[0, 0, 1]", false},
    {"/rods/2/pose/target", "[0.04, 0.21]", true},
    {"/rods/2/generator/segments", "3", false},
    {"/rods/1/vertices/0", "[0, 0.1, 0]", false},
    {"/colliders/0/rotation/axis", "[0, 0, 1]", false},
    {"/colliders/0/half_extents", "[0.01, 0.01, 0.01]", false},
    {"/handles/0/keys/1/rotation/axis", "[0, 0, 1]", false},
    {"/handles/0/keys/1/translation", "[0.001, 0]", true},
    {"/render/camera/type", "\"perspective\"", false},
    {"/render/camera/position", "[0, 0]", false},
    {"/render/camera/fov", "30", false},
    {"/render/camera/target", "[0, 0, 0]", false},
    {"/rod_contact", R"({"enabled": true, "friction": 0.2, "self": true})", true},
    {"/rod_contact", "true", true},
    {"/rod_contact", R"({"friction": -1e-300})", false},
};

void check_edits(const char* base_text, const Edit* begin, const Edit* end) {
  const nlohmann::json base = nlohmann::json::parse(base_text);
  REQUIRE(loader_refusal(base.dump(), "base.json") == "");
  REQUIRE(schema_errors(base).empty());
  for (const Edit* edit = begin; edit != end; ++edit) {
    nlohmann::json scene = base;
    const nlohmann::json::json_pointer pointer(edit->pointer);
    if (edit->value)
      scene[pointer] = nlohmann::json::parse(edit->value);
    else
      scene[pointer.parent_pointer()].erase(pointer.back());
    const std::string where = edit->pointer, what = edit->value ? edit->value : "(removed)";
    CAPTURE(where);
    CAPTURE(what);
    const std::string refusal = loader_refusal(scene.dump(), "edited.json");
    CHECK_MESSAGE(refusal.empty() == edit->valid, "loader: " << (refusal.empty() ? "accepts" : refusal));
    const std::vector<std::string> errors = schema_errors(scene);
    CHECK_MESSAGE(errors.empty() == edit->valid, "schema: " << (errors.empty() ? "accepts" : errors.front()));
  }
}

}  // namespace

TEST_CASE("schema: the loader and the schema agree on edits at the edges of every check") {
  SUBCASE("3D") { check_edits(kScene3d, std::begin(kEdits3d), std::end(kEdits3d)); }
  SUBCASE("2D") { check_edits(kScene2d, std::begin(kEdits2d), std::end(kEdits2d)); }
}
