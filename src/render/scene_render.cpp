#include "bristle/render/scene_render.hpp"

#include <cmath>

#include "bristle/render/render_error.hpp"
#include "bristle/render/render_frame.hpp"

namespace bristle {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& pointer, const std::string& expected, const json& found) {
  throw RenderError(pointer + ": expected " + expected + ", found " + found.dump());
}

const json& member(const json& obj, const char* key, const std::string& pointer) {
  if (!obj.contains(key)) {
    throw RenderError(pointer + ": missing required key \"" + key + "\"");
  }
  return obj[key];
}

double number(const json& v, const std::string& pointer) {
  if (!v.is_number() || !std::isfinite(v.get<double>())) fail(pointer, "a finite number", v);
  return v.get<double>();
}

double positive(const json& v, const std::string& pointer) {
  const double x = number(v, pointer);
  if (!(x > 0.0)) fail(pointer, "a positive number", v);
  return x;
}

// `bristle run` accepts a sphere or capsule of radius 0 (contact with a point or a segment),
// so its output must be drawable: such a collider is read, and drawn as nothing.
double non_negative(const json& v, const std::string& pointer) {
  const double x = number(v, pointer);
  if (!(x >= 0.0)) fail(pointer, "a number >= 0", v);
  return x;
}

// A 2- or 3-component vector (z = 0 when 2).
Vec3 vector(const json& v, const std::string& pointer) {
  if (!v.is_array() || (v.size() != 2 && v.size() != 3)) fail(pointer, "a vector of 2 or 3 numbers", v);
  Vec3 out = Vec3::Zero();
  for (std::size_t i = 0; i < v.size(); ++i) {
    out[static_cast<int>(i)] = number(v[i], pointer + "/" + std::to_string(i));
  }
  return out;
}

Vec3 nonzero_vector(const json& v, const std::string& pointer) {
  const Vec3 out = vector(v, pointer);
  if (out.norm() == 0.0) fail(pointer, "a non-zero vector", v);
  return out;
}

Mat3 rotation(const json& v, const std::string& pointer) {
  if (v.is_number()) {  // 2D: an angle about z
    return Eigen::AngleAxisd(number(v, pointer), Vec3::UnitZ()).toRotationMatrix();
  }
  if (v.is_object()) {
    Vec3 axis = Vec3::UnitZ();
    if (v.contains("axis")) axis = nonzero_vector(v["axis"], pointer + "/axis");
    const double angle = number(member(v, "angle", pointer), pointer + "/angle");
    return Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix();
  }
  if (v.is_array() && v.size() == 3) {  // a row-major 3x3 matrix
    Mat3 m;
    for (int r = 0; r < 3; ++r) {
      const json& row = v[static_cast<std::size_t>(r)];
      if (!row.is_array() || row.size() != 3) fail(pointer, "{\"axis\", \"angle\"} or a 3x3 matrix", v);
      for (int c = 0; c < 3; ++c) {
        m(r, c) = number(row[static_cast<std::size_t>(c)],
                         pointer + "/" + std::to_string(r) + "/" + std::to_string(c));
      }
    }
    return m;
  }
  fail(pointer, "{\"axis\": [..], \"angle\": radians}", v);
}

}  // namespace

Collider parse_collider(const json& v, const std::string& pointer) {
  if (!v.is_object()) fail(pointer, "a collider object", v);
  const json& type_value = member(v, "type", pointer);
  if (!type_value.is_string()) fail(pointer + "/type", "a string", type_value);
  const std::string type = type_value.get<std::string>();
  Collider c;
  if (type == "plane") {
    c.type = ColliderType::Plane;
    c.point = vector(member(v, "point", pointer), pointer + "/point");
    c.normal = nonzero_vector(member(v, "normal", pointer), pointer + "/normal").normalized();
  } else if (type == "sphere") {
    c.type = ColliderType::Sphere;
    c.center = vector(member(v, "center", pointer), pointer + "/center");
    c.radius = non_negative(member(v, "radius", pointer), pointer + "/radius");
  } else if (type == "capsule") {
    c.type = ColliderType::Capsule;
    c.a = vector(member(v, "a", pointer), pointer + "/a");
    c.b = vector(member(v, "b", pointer), pointer + "/b");
    c.radius = non_negative(member(v, "radius", pointer), pointer + "/radius");
  } else if (type == "box") {
    c.type = ColliderType::Box;
    c.center = vector(member(v, "center", pointer), pointer + "/center");
    c.half_extents = vector(member(v, "half_extents", pointer), pointer + "/half_extents");
    if ((c.half_extents.array() < 0.0).any()) {
      fail(pointer + "/half_extents", "non-negative half extents", v["half_extents"]);
    }
    if (v.contains("rotation")) c.rotation = rotation(v["rotation"], pointer + "/rotation");
  } else {
    fail(pointer + "/type", "\"plane\", \"sphere\", \"capsule\" or \"box\"", type_value);
  }
  if (v.contains("friction")) c.friction = number(v["friction"], pointer + "/friction");
  if (v.contains("handle") && v["handle"].is_string()) c.handle = v["handle"].get<std::string>();
  return c;
}

std::vector<Collider> colliders_from_scene(const json& scene) {
  std::vector<Collider> out;
  if (!scene.is_object() || !scene.contains("colliders")) return out;
  const json& list = scene["colliders"];
  if (!list.is_array()) fail("/scene/colliders", "an array", list);
  for (std::size_t i = 0; i < list.size(); ++i) {
    out.push_back(parse_collider(list[i], "/scene/colliders/" + std::to_string(i)));
  }
  return out;
}

RenderBlock parse_render_block(const json& scene) {
  RenderBlock block;
  if (!scene.is_object() || !scene.contains("render")) return block;
  const std::string base = "/scene/render";
  const json& r = scene["render"];
  if (!r.is_object()) fail(base, "an object", r);
  for (auto it = r.begin(); it != r.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    const std::string p = base + "/" + key;
    if (key == "width" || key == "height") {
      if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 32767) {
        fail(p, "an integer number of pixels in [1, 32767]", v);
      }
      (key == "width" ? block.width : block.height) = v.get<int>();
    } else if (key == "background") {
      block.background = parse_color(v, p);
    } else if (key == "colors") {
      if (!v.is_array() || v.empty()) fail(p, "a non-empty array of colours", v);
      for (std::size_t i = 0; i < v.size(); ++i) {
        block.colors.push_back(parse_color(v[i], p + "/" + std::to_string(i)));
      }
    } else if (key == "collider_color") {
      block.collider_color = parse_color(v, p);
    } else if (key == "fps") {
      block.fps = positive(v, p);
    } else if (key == "min_line_width") {
      block.min_line_width = positive(v, p);
    } else if (key == "time_stamp") {
      if (!v.is_boolean()) fail(p, "true or false", v);
      block.time_stamp = v.get<bool>();
    } else if (key == "camera") {
      if (!v.is_object()) fail(p, "an object", v);
      for (auto c = v.begin(); c != v.end(); ++c) {
        const std::string& ck = c.key();
        const std::string cp = p + "/" + ck;
        const json& cv = c.value();
        if (ck == "type") {
          if (cv == "perspective") {
            block.camera_type = ProjectionType::Perspective;
          } else if (cv == "orthographic") {
            block.camera_type = ProjectionType::Orthographic;
          } else {
            fail(cp, "\"perspective\" or \"orthographic\"", cv);
          }
        } else if (ck == "position") {
          block.position = vector(cv, cp);
        } else if (ck == "target") {
          block.target = vector(cv, cp);
        } else if (ck == "up") {
          block.up = nonzero_vector(cv, cp);
        } else if (ck == "fov") {
          const double fov = number(cv, cp);
          if (!(fov > 0.0 && fov < 180.0)) fail(cp, "a field of view in (0, 180) degrees", cv);
          block.fov_deg = fov;
        } else if (ck == "height") {
          block.ortho_height = positive(cv, cp);
        } else {
          throw RenderError(cp + ": unknown key (expected type, position, target, up, fov, height)");
        }
      }
    } else {
      throw RenderError(p + ": unknown key (expected width, height, background, colors, "
                            "collider_color, min_line_width, time_stamp, fps, camera)");
    }
  }
  if (block.position && block.target && (*block.position - *block.target).norm() == 0.0) {
    throw RenderError(base + "/camera: position and target coincide");
  }
  return block;
}

void apply_render_block(const RenderBlock& block, RenderOptions& options) {
  if (block.width) options.width = *block.width;
  if (block.height) options.height = *block.height;
  if (block.background) options.background = *block.background;
  if (!block.colors.empty()) options.palette = block.colors;
  if (block.collider_color) options.collider_color = *block.collider_color;
  if (block.min_line_width) options.min_line_width = *block.min_line_width;
  if (block.time_stamp) options.time_stamp = *block.time_stamp;
}

Camera resolve_camera(const RenderBlock& block, const Bounds& bounds, int dimension,
                      double aspect, const Vec3& default_up, const std::vector<PaddedPoint>& points) {
  const Vec3 up = block.up ? *block.up : default_up;
  Camera fitted = fit_camera(bounds, dimension, aspect, up);
  const ProjectionType type = block.camera_type ? *block.camera_type : fitted.type;
  const double fov = block.fov_deg ? *block.fov_deg : fitted.fov_deg;
  Bounds framed = bounds;
  if (block.target) {
    // Frame the box as seen from the given target: grow it symmetrically about the target.
    if (!bounds.empty()) {
      const Vec3 reach = (bounds.max - *block.target).cwiseMax(*block.target - bounds.min);
      framed.min = *block.target - reach;
      framed.max = *block.target + reach;
    } else {
      framed.extend(*block.target);
    }
  }
  Vec3 view_dir = fitted.target - fitted.position;
  if (block.position) {
    const Vec3 target = block.target ? *block.target : framed.center();
    view_dir = target - *block.position;
    if (view_dir.norm() == 0.0) view_dir = fitted.target - fitted.position;
  }
  static const std::vector<PaddedPoint> kNone;
  // The distance is fitted at the default field of view, so a given fov zooms (at a fitted
  // distance the picture would otherwise look the same whatever the fov).
  Camera cam = fit_camera_along(framed, view_dir, up, type, fitted.fov_deg, aspect, 0.08,
                                block.target ? kNone : points);
  if (block.target) cam.target = *block.target;
  if (block.position) cam.position = *block.position;
  if (block.ortho_height) cam.ortho_height = *block.ortho_height;
  if (block.up) cam.up = *block.up;
  cam.fov_deg = fov;
  return cam;
}

RenderSetup render_setup_from_manifest(const Manifest& manifest, const Bounds& bounds) {
  RenderSetup setup;
  setup.colliders = colliders_from_scene(manifest.scene);
  setup.handles = handles_from_scene(manifest.scene, manifest);
  const RenderBlock block = parse_render_block(manifest.scene);
  apply_render_block(block, setup.options);
  const double aspect = view_aspect(setup.options);
  setup.camera = resolve_camera(block, bounds, manifest.dimension, aspect, scene_up(manifest.scene));
  setup.fps = block.fps;
  return setup;
}

}  // namespace bristle
