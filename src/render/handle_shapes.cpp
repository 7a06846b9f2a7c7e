#include "bristle/render/handle_shapes.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>

#include "bristle/render/render_error.hpp"

namespace bristle {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& pointer, const std::string& expected, const json& found) {
  throw RenderError(pointer + ": expected " + expected + ", found " + found.dump());
}

double number(const json& v, const std::string& pointer) {
  if (!v.is_number() || !std::isfinite(v.get<double>())) fail(pointer, "a finite number", v);
  return v.get<double>();
}

Vec3 vector(const json& v, const std::string& pointer) {
  if (!v.is_array() || (v.size() != 2 && v.size() != 3)) fail(pointer, "a vector of 2 or 3 numbers", v);
  Vec3 out = Vec3::Zero();
  for (std::size_t i = 0; i < v.size(); ++i) out[static_cast<int>(i)] = number(v[i], pointer + "/" + std::to_string(i));
  return out;
}

const json& array_at(const json& obj, const char* key, const std::string& pointer) {
  static const json kEmpty = json::array();
  if (!obj.contains(key)) return kEmpty;
  const json& v = obj[key];
  if (!v.is_array()) fail(pointer + "/" + key, "an array", v);
  return v;
}

// A bristle of the brush entry `prefix`: "<prefix>_<digits>" (the loader's naming).
bool is_bristle_of(const std::string& name, const std::string& prefix) {
  if (name.size() < prefix.size() + 2 || name.compare(0, prefix.size(), prefix) != 0 || name[prefix.size()] != '_')
    return false;
  return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()) + 1, name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

HandleKey read_key(const json& k, const std::string& pointer) {
  if (!k.is_object()) fail(pointer, "a key object", k);
  HandleKey key;
  if (!k.contains("time")) throw RenderError(pointer + ": missing required key \"time\"");
  key.time = number(k["time"], pointer + "/time");
  if (k.contains("translation")) key.translation = vector(k["translation"], pointer + "/translation");
  if (k.contains("rotation")) {
    const json& r = k["rotation"];
    const std::string rp = pointer + "/rotation";
    if (!r.is_object()) fail(rp, "{\"axis\", \"angle\"}", r);
    if (r.contains("angle")) key.rotation_angle = number(r["angle"], rp + "/angle");
    if (r.contains("axis")) key.rotation_axis = vector(r["axis"], rp + "/axis");
  }
  return key;
}

// The fixed vertex indices of every rod of the scene, by name.
std::map<std::string, std::vector<int>> fixed_by_name(const json& scene) {
  std::map<std::string, std::vector<int>> out;
  if (!scene.contains("rods") || !scene["rods"].is_array()) return out;
  for (const json& rod : scene["rods"]) {
    if (!rod.is_object() || !rod.contains("name") || !rod["name"].is_string()) continue;
    std::vector<int>& list = out[rod["name"].get<std::string>()];
    if (rod.contains("fixed") && rod["fixed"].is_array())
      for (const json& i : rod["fixed"])
        if (i.is_number_integer()) list.push_back(i.get<int>());
  }
  return out;
}

}  // namespace

std::vector<RenderHandle> handles_from_scene(const json& scene, const Manifest& manifest) {
  std::vector<RenderHandle> out;
  if (!scene.is_object() || !scene.contains("handles")) return out;
  const json& list = scene["handles"];
  if (!list.is_array()) fail("/scene/handles", "an array", list);
  const auto fixed = fixed_by_name(scene);
  for (std::size_t h = 0; h < list.size(); ++h) {
    const std::string pointer = "/scene/handles/" + std::to_string(h);
    const json& entry = list[h];
    if (!entry.is_object()) fail(pointer, "a handle object", entry);
    RenderHandle rh;
    if (entry.contains("name") && entry["name"].is_string()) rh.handle.name = entry["name"].get<std::string>();
    if (entry.contains("pivot")) rh.handle.pivot = vector(entry["pivot"], pointer + "/pivot");
    if (entry.contains("interpolation")) {
      const json& i = entry["interpolation"];
      if (i == "smooth") {
        rh.handle.interpolation = HandleInterpolation::Smooth;
      } else if (i == "catmull_rom") {
        rh.handle.interpolation = HandleInterpolation::CatmullRom;
      } else if (i != "linear") {
        fail(pointer + "/interpolation", "\"linear\", \"smooth\" or \"catmull_rom\"", i);
      }
    }
    const json& keys = array_at(entry, "keys", pointer);
    for (std::size_t k = 0; k < keys.size(); ++k)
      rh.handle.keys.push_back(read_key(keys[k], pointer + "/keys/" + std::to_string(k)));
    if (rh.handle.keys.empty()) throw RenderError(pointer + "/keys: a handle needs at least one key");
    for (std::size_t k = 1; k < rh.handle.keys.size(); ++k)
      if (!(rh.handle.keys[k].time > rh.handle.keys[k - 1].time))
        throw RenderError(pointer + "/keys/" + std::to_string(k) + "/time: key times must increase strictly");
    const json& rods = array_at(entry, "rods", pointer);
    for (std::size_t i = 0; i < rods.size(); ++i) {
      const std::string rp = pointer + "/rods/" + std::to_string(i);
      if (!rods[i].is_string()) fail(rp, "a rod name", rods[i]);
      const std::string name = rods[i].get<std::string>();
      std::vector<int> selected;
      for (std::size_t r = 0; r < manifest.rods.size(); ++r)
        if (manifest.rods[r].name == name) selected.push_back(static_cast<int>(r));
      if (selected.empty())
        for (std::size_t r = 0; r < manifest.rods.size(); ++r)
          if (is_bristle_of(manifest.rods[r].name, name)) selected.push_back(static_cast<int>(r));
      if (selected.empty()) throw RenderError(rp + ": no rod of the manifest is named \"" + name + "\"");
      for (int r : selected) {
        rh.rods.push_back(r);
        const auto it = fixed.find(manifest.rods[static_cast<std::size_t>(r)].name);
        rh.fixed.push_back(it == fixed.end() ? std::vector<int>{} : it->second);
      }
    }
    const json& colliders = array_at(entry, "colliders", pointer);
    for (std::size_t i = 0; i < colliders.size(); ++i) {
      if (!colliders[i].is_number_integer() || colliders[i].get<long long>() < 0)
        fail(pointer + "/colliders/" + std::to_string(i), "a collider index", colliders[i]);
      rh.colliders.push_back(colliders[i].get<int>());
    }
    out.push_back(std::move(rh));
  }
  return out;
}

std::vector<Collider> colliders_at(const std::vector<Collider>& rest, const std::vector<RenderHandle>& handles,
                                   double time) {
  std::vector<Collider> out = rest;
  for (const RenderHandle& h : handles) {
    const RigidTransform pose = h.handle.pose(time);
    for (int c : h.colliders)
      if (c >= 0 && c < static_cast<int>(rest.size()))
        out[static_cast<std::size_t>(c)] = transform_collider(rest[static_cast<std::size_t>(c)], pose);
  }
  return out;
}

std::vector<BrushPart> brush_parts(const Manifest& manifest, const Frame& frame,
                                   const std::vector<RenderHandle>& handles) {
  std::vector<BrushPart> parts;
  for (const RenderHandle& h : handles) {
    // Per rod: its root end (the fixed end vertex) and the direction out of the brush.
    Vec3 axis = Vec3::Zero();
    std::vector<Vec3> inner, clamped;
    double rod_radius = 0.0, length_sum = 0.0;
    int rods_used = 0;
    for (std::size_t i = 0; i < h.rods.size(); ++i) {
      const std::size_t r = static_cast<std::size_t>(h.rods[i]);
      if (r >= frame.rods.size()) continue;
      const std::vector<Vec3>& x = frame.rods[r].positions;
      const int n = static_cast<int>(x.size());
      std::vector<int> f;
      for (int k : h.fixed[i])
        if (k >= 0 && k < n) f.push_back(k);
      std::sort(f.begin(), f.end());
      if (f.empty() || n < 2) continue;
      const bool from_start = f.front() == 0;
      if (!from_start && f.back() != n - 1) continue;
      // The run of fixed vertices from the root end inwards.
      int deepest = from_start ? 0 : n - 1;
      if (from_start) {
        while (std::binary_search(f.begin(), f.end(), deepest + 1) && deepest + 1 < n - 1) ++deepest;
      } else {
        while (std::binary_search(f.begin(), f.end(), deepest - 1) && deepest - 1 > 0) --deepest;
      }
      const Vec3 root = x[static_cast<std::size_t>(from_start ? 0 : n - 1)];
      const Vec3 next = x[static_cast<std::size_t>(from_start ? 1 : n - 2)];
      const Vec3 out_dir = root - next;
      if (!root.allFinite() || !next.allFinite() || !(out_dir.norm() > 0.0)) continue;
      axis += out_dir.normalized();
      inner.push_back(x[static_cast<std::size_t>(deepest)]);
      for (int k : f) clamped.push_back(x[static_cast<std::size_t>(k)]);
      rod_radius = std::max(rod_radius, r < manifest.rods.size() ? manifest.rods[r].radius : 0.0);
      for (int k = 0; k + 1 < n; ++k) {
        const double e = (x[static_cast<std::size_t>(k + 1)] - x[static_cast<std::size_t>(k)]).norm();
        if (std::isfinite(e)) length_sum += e;
      }
      ++rods_used;
    }
    if (rods_used == 0 || !(axis.norm() > 0.0)) continue;
    axis.normalize();
    Vec3 center = Vec3::Zero();
    for (const Vec3& p : inner) center += p;
    center /= static_cast<double>(inner.size());
    double lowest = 0.0, reach = 0.0;
    for (const Vec3& p : clamped) {
      const Vec3 rel = p - center;
      const double along = rel.dot(axis);
      lowest = std::min(lowest, along);
      reach = std::max(reach, (rel - along * axis).norm());
    }
    const double bristle = length_sum / rods_used;
    const double radius = std::max({1.05 * (reach + rod_radius), 3.0 * rod_radius, 0.02 * bristle});
    // The ferrule's round end reaches down to the lowest clamped vertex.
    const Vec3 ferrule_start = center + (lowest + radius) * axis;
    const Vec3 ferrule_end = ferrule_start + std::max(0.4 * bristle, radius) * axis;
    BrushPart ferrule;
    ferrule.kind = BrushPart::Kind::Ferrule;
    ferrule.points = {ferrule_start, ferrule_end};
    ferrule.radii = {radius, radius};
    BrushPart handle;
    handle.kind = BrushPart::Kind::Handle;
    const double handle_length = 2.5 * bristle;
    handle.points = {ferrule_end, ferrule_end + 0.5 * handle_length * axis, ferrule_end + handle_length * axis};
    handle.radii = {0.8 * radius, 0.85 * radius, 0.55 * radius};
    parts.push_back(std::move(ferrule));
    parts.push_back(std::move(handle));
  }
  return parts;
}

}  // namespace bristle
