// Reader of `handles`: keyframed rigid motions (model/handle.hpp) of named rods' fixed
// vertices and of colliders. Every check the handle driver would make is made here first, so
// a bad handle is reported at its JSON pointer, never by the driver at run time.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>

#include "bristle/scene/scene_blocks.hpp"
#include "bristle/scene/suggest.hpp"

namespace bristle {
namespace {

const std::vector<std::string> kHandleKeys = {"name", "rods", "colliders", "pivot", "interpolation", "keys"};
const std::vector<std::string> kInterpolations = {"linear", "smooth", "catmull_rom"};

HandleInterpolation interpolation_of(const std::string& name) {
  if (name == "smooth") return HandleInterpolation::Smooth;
  if (name == "catmull_rom") return HandleInterpolation::CatmullRom;
  return HandleInterpolation::Linear;
}

/// True when `name` is `prefix` + "_" + decimal digits: a bristle of the brush entry `prefix`
/// (read_rods.cpp names a brush's rods "<name>_<k>").
bool is_bristle_of(const std::string& name, const std::string& prefix) {
  if (name.size() < prefix.size() + 2 || name.compare(0, prefix.size(), prefix) != 0 || name[prefix.size()] != '_')
    return false;
  return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()) + 1, name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

/// The rods one `rods` entry names: the rod of that name, or else every bristle of the brush
/// entry of that name.
std::vector<int> read_rod_selection(const JsonValue& value, const Model& model) {
  const std::string name = value.name();
  const int exact = model.rod_index(name);
  if (exact >= 0) return {exact};
  std::vector<int> bristles;
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r)
    if (is_bristle_of(model.rods[r].name, name)) bristles.push_back(r);
  if (!bristles.empty()) return bristles;
  std::vector<std::string> names;
  for (const Rod& rod : model.rods) names.push_back(rod.name);
  value.fail("no rod (and no brush's bristles " + quoted_text(name + "_<k>") + ") is named " + quoted_text(name) +
             did_you_mean(name, names));
}

// A key's rotation. 3D: {"axis": vector, "angle": rad}; 2D: {"angle": rad} about z, the only
// axis a planar motion can turn about (the same form as a box's "rotation").
void read_key_rotation(const JsonValue& value, int dimension, HandleKey& key, nlohmann::json& expanded) {
  const ObjectReader reader = dimension == 3 ? value.object({"axis", "angle"}) : value.object({"angle"});
  key.rotation_angle = reader.require("angle").number();
  key.rotation_axis = dimension == 3 ? reader.require("axis").direction(3) : Vec3(Vec3::UnitZ());
  expanded = {{"angle", key.rotation_angle}};
  if (dimension == 3) expanded["axis"] = vector_json(key.rotation_axis, 3);
}

std::vector<HandleKey> read_keys(const JsonValue& value, int dimension, nlohmann::json& expanded) {
  const std::string expected = "a non-empty array of keys {\"time\", \"translation\", \"rotation\"}";
  const std::vector<JsonValue> entries = value.elements(expected);
  if (entries.empty()) value.fail_expected(expected);
  std::vector<HandleKey> keys;
  expanded = nlohmann::json::array();
  for (const JsonValue& entry : entries) {
    const ObjectReader reader = entry.object({"time", "translation", "rotation"});
    HandleKey key;
    const JsonValue time = reader.require("time");
    key.time = time.number();
    if (!keys.empty() && !(key.time > keys.back().time))
      time.fail("key times must increase strictly: " + number_text(key.time) + " follows " +
                number_text(keys.back().time));
    if (const auto t = reader.find("translation")) key.translation = t->vector(dimension);
    nlohmann::json rotation = {{"angle", 0.0}};
    if (dimension == 3) rotation["axis"] = vector_json(Vec3::UnitZ(), 3);
    if (const auto r = reader.find("rotation")) read_key_rotation(*r, dimension, key, rotation);
    expanded.push_back({{"time", key.time},
                        {"translation", vector_json(key.translation, dimension)},
                        {"rotation", rotation}});
    keys.push_back(key);
  }
  return keys;
}

/// Claims shared across handles: a rod or collider follows at most one handle.
struct Claims {
  std::map<int, std::string> rods, colliders;  // index -> pointer of the claiming entry
};

}  // namespace

ReadResult<std::vector<Handle>> read_handles(const JsonValue& value, Model& model) {
  ReadResult<std::vector<Handle>> result{{}, nlohmann::json::array()};
  const int dimension = model.dimension;
  Claims claims;
  std::map<std::string, std::string> names;  // handle name -> its pointer
  for (const JsonValue& entry : value.elements("an array of handles")) {
    const ObjectReader reader = entry.object(kHandleKeys);
    Handle handle;
    nlohmann::json expanded;

    const JsonValue name = reader.require("name");
    handle.name = name.name();
    if (const auto [it, inserted] = names.emplace(handle.name, entry.pointer()); !inserted)
      name.fail("duplicate handle name " + quoted_text(handle.name) + ": " + it->second + " already uses it");
    expanded["name"] = handle.name;

    // Rods: the fixed vertices of each follow the handle.
    nlohmann::json rods = nlohmann::json::array();
    if (const auto list = reader.find("rods"))
      for (const JsonValue& item : list->elements("an array of rod names")) {
        for (int r : read_rod_selection(item, model)) {
          const Rod& rod = model.rods[r];
          if (rod.fixed.empty())
            item.fail("rod \"" + rod.name + "\" has no fixed vertices; a handle moves only fixed vertices");
          if (const auto [it, inserted] = claims.rods.emplace(r, item.pointer()); !inserted)
            item.fail("rod \"" + rod.name + "\" already follows the handle at " + it->second);
          handle.rods.push_back(rod.name);
        }
        rods.push_back(item.string());
      }
    expanded["rods"] = rods;

    // Colliders, by index into "colliders".
    nlohmann::json colliders = nlohmann::json::array();
    if (const auto list = reader.find("colliders"))
      for (const JsonValue& item : list->elements("an array of collider indices")) {
        const int count = static_cast<int>(model.colliders.size());
        if (count == 0) item.fail("the scene has no colliders");
        const int index = item.int_in(0, count - 1);
        if (const auto [it, inserted] = claims.colliders.emplace(index, item.pointer()); !inserted)
          item.fail("collider " + std::to_string(index) + " already follows the handle at " + it->second);
        model.colliders[index].handle = handle.name;
        colliders.push_back(index);
      }
    expanded["colliders"] = colliders;

    if (const auto pivot = reader.find("pivot")) handle.pivot = pivot->vector(dimension);
    expanded["pivot"] = vector_json(handle.pivot, dimension);
    std::string interpolation = "linear";
    if (const auto i = reader.find("interpolation")) interpolation = i->choice(kInterpolations);
    handle.interpolation = interpolation_of(interpolation);
    expanded["interpolation"] = interpolation;
    nlohmann::json keys;
    handle.keys = read_keys(reader.require("keys"), dimension, keys);
    expanded["keys"] = keys;

    try {
      validate_handle(handle);  // the reader's checks cover these; this guards the two in step
    } catch (const std::invalid_argument& e) {
      entry.fail(e.what());
    }
    result.value.push_back(std::move(handle));
    result.expanded.push_back(std::move(expanded));
  }
  return result;
}

}  // namespace bristle
