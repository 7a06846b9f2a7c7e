#include "bristle/io/frame_json.hpp"

#include <climits>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "bristle/io/json_text.hpp"
#include "bristle/io/output_error.hpp"
#include "bristle/scene/limits.hpp"

namespace bristle {

namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json vectors_to_json(const std::vector<Vec3>& vectors, int dimension) {
  ordered_json array = ordered_json::array();
  for (const Vec3& v : vectors) {
    ordered_json row = ordered_json::array();
    for (int k = 0; k < dimension; ++k) row.push_back(v[k]);
    array.push_back(std::move(row));
  }
  return array;
}

/// A short description of a JSON value for error messages: its type and, when short, its text.
std::string describe(const nlohmann::json& value) {
  // A damaged file may hold a huge array or string here: say its size, never copy it whole.
  if (value.is_array() || value.is_object())
    if (value.size() > 8) return std::string(value.type_name()) + " of " + std::to_string(value.size()) + " entries";
  if (value.is_string() && value.get_ref<const std::string&>().size() > 40)
    return "string \"" + value.get_ref<const std::string&>().substr(0, 36) + "...\"";
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(value.type_name()) + " " + text;
}

[[noreturn]] void fail(const std::string& file, const std::string& pointer, const std::string& what) {
  throw OutputError(file, (pointer.empty() ? std::string() : pointer + ": ") + what);
}

const nlohmann::json& member(const nlohmann::json& object, const char* key, const std::string& pointer,
                             const std::string& file) {
  const auto it = object.find(key);
  if (it == object.end()) fail(file, pointer, std::string("missing key \"") + key + "\"");
  return *it;
}

double number(const nlohmann::json& value, const std::string& pointer, const std::string& file) {
  if (!value.is_number()) fail(file, pointer, "expected a number, found " + describe(value));
  return value.get<double>();
}

/// An integer in [minimum, maximum]. get<int>() would wrap 4294967299 to 3 silently.
int integer(const nlohmann::json& value, const std::string& pointer, const std::string& file,
            long long minimum, long long maximum) {
  const std::string range = " in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]";
  if (!value.is_number_integer()) fail(file, pointer, "expected an integer" + range + ", found " + describe(value));
  const bool in_range = value.is_number_unsigned()
                            ? value.get<unsigned long long>() <= static_cast<unsigned long long>(maximum)
                            : value.get<long long>() >= minimum && value.get<long long>() <= maximum;
  if (!in_range || minimum < INT_MIN || maximum > INT_MAX)
    fail(file, pointer, "expected an integer" + range + ", found " + describe(value));
  return static_cast<int>(value.get<long long>());
}

std::string string(const nlohmann::json& value, const std::string& pointer, const std::string& file) {
  if (!value.is_string()) fail(file, pointer, "expected a string, found " + describe(value));
  return value.get<std::string>();
}

std::vector<Vec3> vectors_from_json(const nlohmann::json& value, int count, int dimension,
                                    const std::string& pointer, const std::string& file) {
  if (!value.is_array() || static_cast<int>(value.size()) != count) {
    std::ostringstream what;
    what << "expected an array of " << count << " vectors, found "
         << (value.is_array() ? std::to_string(value.size()) + " entries" : describe(value));
    fail(file, pointer, what.str());
  }
  std::vector<Vec3> vectors(count, Vec3::Zero());
  for (int i = 0; i < count; ++i) {
    const nlohmann::json& row = value[i];
    const std::string row_pointer = pointer + "/" + std::to_string(i);
    if (!row.is_array() || static_cast<int>(row.size()) != dimension)
      fail(file, row_pointer, "expected an array of " + std::to_string(dimension) + " numbers, found " + describe(row));
    for (int k = 0; k < dimension; ++k) {
      if (!row[k].is_number())
        fail(file, row_pointer + "/" + std::to_string(k), "expected a finite number, found " + describe(row[k]));
      vectors[i][k] = row[k].get<double>();
    }
  }
  return vectors;
}

/// The material directors of a rod with twist: `count` unit 3-vectors. A director that is not
/// of unit length (to 1e-6) is damage: the renderer and exporters rely on it.
std::vector<Vec3> directors_from_json(const nlohmann::json& value, int count, const std::string& pointer,
                                      const std::string& file) {
  std::vector<Vec3> directors = vectors_from_json(value, count, 3, pointer, file);
  for (int j = 0; j < count; ++j)
    if (!(std::abs(directors[j].norm() - 1.0) <= kDirectorUnitTolerance))
      fail(file, pointer + "/" + std::to_string(j),
           "expected a unit vector (a material director), found one of length " + format_double(directors[j].norm()));
  return directors;
}

/// The pointer of the first non-finite number inside `value` ("" if none), depth first. The
/// stats are built by the runner, a few levels deep, so the recursion is shallow.
std::string first_non_finite_in(const nlohmann::json& value, const std::string& pointer) {
  if (value.is_number_float()) return std::isfinite(value.get<double>()) ? std::string() : pointer;
  if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      std::string found = first_non_finite_in(value[i], pointer + "/" + std::to_string(i));
      if (!found.empty()) return found;
    }
  } else if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      std::string found = first_non_finite_in(it.value(), pointer + "/" + it.key());
      if (!found.empty()) return found;
    }
  }
  return "";
}

std::string first_non_finite_vector(const std::vector<Vec3>& vectors, const std::string& pointer) {
  for (std::size_t i = 0; i < vectors.size(); ++i)
    for (int k = 0; k < 3; ++k)
      if (!std::isfinite(vectors[i][k])) return pointer + "/" + std::to_string(i) + "/" + std::to_string(k);
  return "";
}

}  // namespace

std::string first_non_finite(const Frame& frame) {
  if (!std::isfinite(frame.time)) return "/time";
  for (std::size_t r = 0; r < frame.rods.size(); ++r) {
    const std::string rod = "/rods/" + std::to_string(r);
    std::string found = first_non_finite_vector(frame.rods[r].positions, rod + "/positions");
    if (found.empty()) found = first_non_finite_vector(frame.rods[r].velocities, rod + "/velocities");
    if (found.empty()) found = first_non_finite_vector(frame.rods[r].directors, rod + "/directors");
    if (!found.empty()) return found;
  }
  return first_non_finite_in(frame.stats, "/stats");
}

std::string frame_to_text(const Frame& frame, int dimension) {
  ordered_json json;
  json["frame"] = frame.index;
  json["time"] = frame.time;
  ordered_json rods = ordered_json::array();
  for (const RodFrame& rod : frame.rods) {
    ordered_json entry;
    entry["name"] = rod.name;
    entry["positions"] = vectors_to_json(rod.positions, dimension);
    entry["velocities"] = vectors_to_json(rod.velocities, dimension);
    // Rods with twist only (format version 2); always 3 components (twist is 3D only).
    if (!rod.directors.empty()) entry["directors"] = vectors_to_json(rod.directors, 3);
    rods.push_back(std::move(entry));
  }
  json["rods"] = std::move(rods);
  json["stats"] = ordered_json(frame.stats);
  return pretty_json(json) + "\n";
}

std::string manifest_to_text(const Manifest& manifest) {
  ordered_json json;
  json["format"] = manifest_format(manifest);
  json["name"] = manifest.name;
  json["dimension"] = manifest.dimension;
  json["dt"] = manifest.dt;
  json["frame_dt"] = manifest.frame_dt;
  json["frame_count"] = manifest.frame_count;
  ordered_json rods = ordered_json::array();
  for (const RodInfo& rod : manifest.rods) {
    ordered_json entry;
    entry["name"] = rod.name;
    entry["vertex_count"] = rod.vertex_count;
    entry["radius"] = rod.radius;
    if (rod.twist) entry["twist"] = true;  // only then: a folder without twist stays version 1
    rods.push_back(std::move(entry));
  }
  json["rods"] = std::move(rods);
  json["frame_layout"] = frame_layout_name(manifest.frame_layout);
  json["frame_files"] = manifest.frame_files;
  json["status"] = manifest.status;
  json["generator"] = std::string("bristle ") + BRISTLE_VERSION;
  json["scene"] = ordered_json(manifest.scene);
  return pretty_json(json) + "\n";
}

Frame frame_from_json(const nlohmann::json& json, const Manifest& manifest, const std::string& file) {
  if (!json.is_object()) fail(file, "", "expected a frame object, found " + describe(json));
  Frame frame;
  frame.index = integer(member(json, "frame", "", file), "/frame", file, 0, static_cast<long long>(kMaxFrames));
  frame.time = number(member(json, "time", "", file), "/time", file);
  const nlohmann::json& rods = member(json, "rods", "", file);
  if (!rods.is_array() || rods.size() != manifest.rods.size())
    fail(file, "/rods",
         "expected an array of " + std::to_string(manifest.rods.size()) + " rods (the manifest's), found " +
             (rods.is_array() ? std::to_string(rods.size()) : describe(rods)));
  for (std::size_t r = 0; r < rods.size(); ++r) {
    const std::string pointer = "/rods/" + std::to_string(r);
    const nlohmann::json& rod = rods[r];
    if (!rod.is_object()) fail(file, pointer, "expected a rod object, found " + describe(rod));
    RodFrame rod_frame;
    rod_frame.name = string(member(rod, "name", pointer, file), pointer + "/name", file);
    if (rod_frame.name != manifest.rods[r].name)
      fail(file, pointer + "/name",
           "expected rod \"" + manifest.rods[r].name + "\" (manifest order), found \"" + rod_frame.name + "\"");
    const int count = manifest.rods[r].vertex_count;
    rod_frame.positions = vectors_from_json(member(rod, "positions", pointer, file), count,
                                            manifest.dimension, pointer + "/positions", file);
    rod_frame.velocities = vectors_from_json(member(rod, "velocities", pointer, file), count,
                                             manifest.dimension, pointer + "/velocities", file);
    if (manifest.rods[r].twist)
      rod_frame.directors = directors_from_json(member(rod, "directors", pointer, file),
                                                edge_count_of(count), pointer + "/directors", file);
    frame.rods.push_back(std::move(rod_frame));
  }
  const auto stats = json.find("stats");
  if (stats != json.end()) {
    if (!stats->is_object()) fail(file, "/stats", "expected an object, found " + describe(*stats));
    frame.stats = *stats;
  }
  return frame;
}

Manifest manifest_from_json(const nlohmann::json& json, const std::string& file) {
  if (!json.is_object()) fail(file, "", "expected a manifest object, found " + describe(json));
  Manifest manifest;
  manifest.format = string(member(json, "format", "", file), "/format", file);
  if (manifest.format != kFramesFormat1 && manifest.format != kFramesFormat2)
    fail(file, "/format",
         std::string("expected \"") + kFramesFormat1 + "\" or \"" + kFramesFormat2 + "\", found \"" + manifest.format +
             "\"");
  manifest.name = string(member(json, "name", "", file), "/name", file);
  manifest.dimension = integer(member(json, "dimension", "", file), "/dimension", file, 2, 3);
  manifest.dt = number(member(json, "dt", "", file), "/dt", file);
  manifest.frame_dt = number(member(json, "frame_dt", "", file), "/frame_dt", file);
  manifest.frame_count =
      integer(member(json, "frame_count", "", file), "/frame_count", file, 0, static_cast<long long>(kMaxFrames));
  const nlohmann::json& rods = member(json, "rods", "", file);
  if (!rods.is_array()) fail(file, "/rods", "expected an array, found " + describe(rods));
  for (std::size_t r = 0; r < rods.size(); ++r) {
    const std::string pointer = "/rods/" + std::to_string(r);
    if (!rods[r].is_object()) fail(file, pointer, "expected an object, found " + describe(rods[r]));
    RodInfo info;
    info.name = string(member(rods[r], "name", pointer, file), pointer + "/name", file);
    info.vertex_count =
        integer(member(rods[r], "vertex_count", pointer, file), pointer + "/vertex_count", file, 0, kMaxSceneVertices);
    info.radius = number(member(rods[r], "radius", pointer, file), pointer + "/radius", file);
    // Version 2: a rod with twist, whose frames hold its material directors.
    const auto twist = rods[r].find("twist");
    if (twist != rods[r].end()) {
      if (!twist->is_boolean()) fail(file, pointer + "/twist", "expected true or false, found " + describe(*twist));
      info.twist = twist->get<bool>();
      if (info.twist && manifest.format == kFramesFormat1)
        fail(file, pointer + "/twist",
             std::string("a rod with twist needs format \"") + kFramesFormat2 + "\" (the manifest says \"" +
                 kFramesFormat1 + "\")");
      if (info.twist && manifest.dimension != 3)
        fail(file, pointer + "/twist", "rods with twist exist only in 3D (the manifest's dimension is 2)");
    }
    manifest.rods.push_back(std::move(info));
  }
  // Absent in folders written before binary frames: those are JSON.
  const auto layout = json.find("frame_layout");
  if (layout != json.end()) {
    const std::string name = string(*layout, "/frame_layout", file);
    const std::optional<FrameLayout> parsed = frame_layout_from_name(name);
    if (!parsed) fail(file, "/frame_layout", "expected \"json\" or \"npz\", found " + describe(*layout));
    manifest.frame_layout = *parsed;
  }
  const nlohmann::json& files = member(json, "frame_files", "", file);
  if (!files.is_array()) fail(file, "/frame_files", "expected an array, found " + describe(files));
  for (std::size_t k = 0; k < files.size(); ++k) {
    const std::string pointer = "/frame_files/" + std::to_string(k);
    std::string name = string(files[k], pointer, file);
    if (!is_frame_file_name(name, manifest.frame_layout))
      fail(file, pointer,
           std::string("expected a frame file name \"frames/NNNNNN") + frame_file_extension(manifest.frame_layout) +
               "\" inside the folder (frame_layout \"" + frame_layout_name(manifest.frame_layout) + "\"), found " +
               describe(files[k]));
    manifest.frame_files.push_back(std::move(name));
  }
  if (static_cast<int>(manifest.frame_files.size()) != manifest.frame_count)
    fail(file, "/frame_count",
         "says " + std::to_string(manifest.frame_count) + " frames but /frame_files lists " +
             std::to_string(manifest.frame_files.size()));
  manifest.status = string(member(json, "status", "", file), "/status", file);
  const auto scene = json.find("scene");
  if (scene != json.end()) manifest.scene = *scene;
  return manifest;
}

}  // namespace bristle
