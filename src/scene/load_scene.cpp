// Scene loading: text -> JSON document -> validated blocks -> Scene.
//
// The pipeline, each stage refusing bad input with a SceneError that names the file, line
// and JSON pointer:
//   1. parse (nlohmann/json), turning a syntax error's byte offset into line and column;
//   2. locate (JsonLocator): the line of every value, and keys given twice;
//   3. read the blocks in dependency order (dimension before any vector, materials before
//      rods, rods before the loads that name them), each filling in its defaults;
//   4. build the model's rods (make_rod) and finalize the DOF layout.

#include "bristle/scene/load_scene.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "bristle/io/json_parse.hpp"
#include "bristle/scene/json_locator.hpp"
#include "bristle/scene/json_value.hpp"
#include "bristle/scene/scene_blocks.hpp"

namespace bristle {
namespace {

constexpr const char* kFormat = "bristle-scene/1";

// "$schema" names the JSON Schema an editor checks the file against
// (scenes/bristle-scene.schema.json, docs/scene-format.md "JSON Schema"); Bristle ignores it.
const std::vector<std::string> kSceneKeys = {"format",  "name",   "dimension", "time",
                                             "gravity", "damping", "solver",   "materials",
                                             "rods",    "loads",   "colliders", "rod_contact", "render",
                                             "handles", "$schema"};

// Parses with the nesting limit of io/json_parse.hpp, before anything walks the document
// recursively. A syntax error is reported at its line and column; a value too deep or a
// number out of a double's range at its JSON pointer (and the line the locator finds for it).
nlohmann::json parse_document(const std::string& text, const std::string& file) {
  try {
    return parse_json_bounded(text);
  } catch (const JsonParseError& e) {
    if (e.syntax() || e.pointer().empty()) {
      const TextPosition at = text_position(text, e.byte());
      throw SceneError(file, "", at.line, "invalid JSON at column " + std::to_string(at.column) + ": " + e.reason());
    }
    // The locator scans iteratively and records lines only to a bounded depth, so it is safe
    // on the text that was just refused.
    const JsonLocator locator(text);
    throw SceneError(file, e.pointer(), locator.line_of(e.pointer()), "invalid JSON: " + e.reason());
  }
}

void check_no_duplicate_keys(const JsonSource& source) {
  const auto& duplicates = source.locator().duplicate_keys();
  if (duplicates.empty()) return;
  const std::string& pointer = duplicates.front();
  source.fail(pointer, "this key appears twice in the same object; JSON keeps only the last, so the "
                       "other would be silently ignored");
}

// The format comes first: a file in another format is reported as such, not as a list of
// unknown keys.
void check_format(const JsonValue& root) {
  if (!root.is_object()) root.fail_expected("a JSON object (the scene)");
  const std::string pointer = pointer_append(root.pointer(), std::string("format"));
  if (!root.json().contains("format"))
    root.source().fail(pointer, "missing required key \"format\" (\"" + std::string(kFormat) + "\")");
  const JsonValue format(root.source(), root.json().at("format"), pointer);
  if (!format.is_string() || format.string() != kFormat)
    format.fail_expected("\"" + std::string(kFormat) + "\"");
}

int read_dimension(const ObjectReader& root) {
  const auto value = root.find("dimension");
  if (!value) return 3;
  const std::int64_t dimension = value->integer();
  if (dimension != 2 && dimension != 3) value->fail_expected("2 or 3");
  return static_cast<int>(dimension);
}

Scene build_scene(const JsonValue& root_value, const std::string& default_name) {
  check_format(root_value);
  const ObjectReader root = root_value.object(kSceneKeys);
  Scene scene;
  Model& model = scene.model;
  nlohmann::json& out = scene.expanded;
  out["format"] = kFormat;
  // Only its type is checked; it is editor metadata, not part of the model, so the expanded
  // scene (and every manifest) leaves it out.
  if (const auto schema = root.find("$schema")) schema->string();

  scene.name = root.has("name") ? root.require("name").string() : default_name;
  out["name"] = scene.name;
  model.dimension = read_dimension(root);
  out["dimension"] = model.dimension;

  const auto time = read_time(root.require("time"));
  scene.time = time.value;
  out["time"] = time.expanded;

  if (const auto gravity = root.find("gravity")) model.gravity = gravity->vector(model.dimension);
  out["gravity"] = vector_json(model.gravity, model.dimension);

  const auto damping = read_damping(root.find_or_empty_object("damping"));
  model.damping_mass = damping.value.mass;
  model.damping_stiffness = damping.value.stiffness;
  out["damping"] = damping.expanded;

  const auto solver = read_solver(root.find_or_empty_object("solver"));
  scene.solver = solver.value.settings;
  scene.mode = solver.value.mode;
  out["solver"] = solver.expanded;

  const auto materials = read_materials(root.find_or_empty_object("materials"));
  out["materials"] = materials.expanded;

  auto rods = read_rods(root.require("rods"), model.dimension, materials.value);
  for (RodSpec& rod : rods.value) {
    for (std::string& warning : rod.warnings) scene.warnings.push_back(std::move(warning));
    model.rods.push_back(make_rod(rod.name, rod.material, std::move(rod.vertices), rod.fixed, rod.rest,
                                  model.dimension));
    model.rods.back().twist = rod.twist;
    model.rods.back().material_normal = rod.material_normal;
    model.rods.back().rest_twist = rod.rest_twist;
    model.rods.back().twist_root = rod.twist_root;
    model.rods.back().twist_tip = rod.twist_tip;
  }
  model.finalize();
  out["rods"] = std::move(rods.expanded);

  auto loads = read_loads(root.find_or_empty_array("loads"), model);
  model.loads = std::move(loads.value);
  out["loads"] = std::move(loads.expanded);
  check_model_finite(model, rods.value, root_value.source());

  auto colliders = read_colliders(root.find_or_empty_array("colliders"), model.dimension);
  model.colliders = std::move(colliders.value);
  out["colliders"] = std::move(colliders.expanded);

  const auto rod_contact = read_rod_contact(root.find_or_empty_object("rod_contact"));
  model.rod_contact = rod_contact.value;
  out["rod_contact"] = rod_contact.expanded;
  check_rod_contact_finite(model, root_value.source());

  auto handles = read_handles(root.find_or_empty_array("handles"), model);
  scene.handles = std::move(handles.value);
  out["handles"] = std::move(handles.expanded);
  if (scene.mode == SolverMode::Dynamic) check_handles_finite(model, scene.handles, scene.time.duration, root_value.source());

  // Drawing settings for `bristle render`; recorded only when given, so scenes without the
  // block keep the manifest they always had.
  if (const auto render = root.find("render")) out["render"] = read_render(*render, model.dimension);
  return scene;
}

std::string read_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw SceneError(path, "", 0, "is a directory, not a scene file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SceneError(path, "", 0, "cannot open the scene file (missing or unreadable)");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw SceneError(path, "", 0, "cannot read the scene file");
  return text.str();
}

}  // namespace

Scene load_scene_from_string(const std::string& text, const std::string& file_label) {
  const nlohmann::json document = parse_document(text, file_label);
  const JsonSource source(file_label, JsonLocator(text));
  check_no_duplicate_keys(source);
  // The default name is the file's stem ("scenes/cantilever.json" -> "cantilever").
  std::string default_name = std::filesystem::path(file_label).stem().string();
  if (default_name.empty()) default_name = file_label;
  return build_scene(JsonValue(source, document, ""), default_name);
}

Scene load_scene(const std::string& path) {
  Scene scene = load_scene_from_string(read_file(path), path);
  scene.source_path = path;
  return scene;
}

}  // namespace bristle
