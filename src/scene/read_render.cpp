// Reader of the optional `render` block: how `bristle render` draws the scene's frames
// (docs/rendering.md). Nothing in it changes the simulation; it is validated here like every
// other block (unknown keys refused, the JSON pointer of a bad value named) so that a typo is
// caught by `bristle validate` and `bristle run`, not hours later by `bristle render`. The
// block is copied into the manifest's scene, where the renderer reads it back
// (render/scene_render.hpp, parse_render_block).

#include <string>

#include "bristle/scene/scene_blocks.hpp"

namespace bristle {
namespace {

// cairo's image surfaces are limited to 32767 pixels a side.
constexpr int kMaxImageSide = 32767;

bool is_hex_colour(const std::string& text) {
  const std::size_t start = !text.empty() && text[0] == '#' ? 1 : 0;
  if (text.size() - start != 6) return false;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) return false;
  }
  return true;
}

// A colour: "#rrggbb" or [r, g, b] with components in [0, 1]. Returned as given.
nlohmann::json read_colour(const JsonValue& value) {
  const std::string expected = "a colour \"#rrggbb\" or [r, g, b] with components in [0, 1]";
  if (value.is_string()) {
    if (!is_hex_colour(value.string())) value.fail_expected(expected);
    return value.json();
  }
  if (!value.is_array() || value.json().size() != 3) value.fail_expected(expected);
  for (const JsonValue& component : value.elements(expected)) {
    const double c = component.number();
    if (!(c >= 0.0 && c <= 1.0)) component.fail_expected("a colour component in [0, 1]");
  }
  return value.json();
}

bool read_boolean(const JsonValue& value) {
  if (!value.json().is_boolean()) value.fail_expected("true or false");
  return value.json().get<bool>();
}

// `camera`: 3D scenes take any of the keys; a 2D scene is always drawn in its plane, seen
// from +z by an orthographic camera, so only where it looks, which way is up and how much it
// shows can be chosen.
nlohmann::json read_camera(const JsonValue& value, int dimension) {
  const ObjectReader reader = value.object({"type", "position", "target", "up", "fov", "height"});
  nlohmann::json expanded = nlohmann::json::object();
  if (dimension == 2) {
    for (const char* key : {"position", "fov"}) {
      if (reader.has(key))
        reader.fail_at(key, "a 2D scene is drawn in its plane, seen from +z with an orthographic camera; "
                            "set \"target\", \"up\" and \"height\" instead");
    }
  }
  if (const auto type = reader.find("type")) {
    const std::string name = type->choice({"perspective", "orthographic"});
    if (dimension == 2 && name != "orthographic")
      type->fail("a 2D scene is drawn in its plane with an orthographic camera; expected \"orthographic\"");
    expanded["type"] = name;
  }
  Vec3 position = Vec3::Zero(), target = Vec3::Zero();
  if (const auto p = reader.find("position")) {
    position = p->vector(dimension);
    expanded["position"] = vector_json(position, dimension);
  }
  if (const auto t = reader.find("target")) {
    target = t->vector(dimension);
    expanded["target"] = vector_json(target, dimension);
  }
  if (reader.has("position") && reader.has("target") && position == target)
    reader.fail_at("target", "the camera's target coincides with its position; the view has no direction");
  if (const auto up = reader.find("up")) expanded["up"] = vector_json(up->direction(dimension), dimension);
  if (const auto fov = reader.find("fov")) {
    const double degrees = fov->number();
    if (!(degrees > 0.0 && degrees < 180.0)) fov->fail_expected("a vertical field of view in (0, 180) degrees");
    expanded["fov"] = degrees;
  }
  if (const auto height = reader.find("height")) expanded["height"] = height->positive_number();
  return expanded;
}

}  // namespace

nlohmann::json read_render(const JsonValue& value, int dimension) {
  const ObjectReader reader = value.object({"width", "height", "background", "colors", "collider_color",
                                            "min_line_width", "time_stamp", "fps", "camera"});
  nlohmann::json expanded = nlohmann::json::object();
  for (const char* side : {"width", "height"}) {
    if (const auto pixels = reader.find(side)) expanded[side] = pixels->int_in(1, kMaxImageSide);
  }
  for (const char* key : {"background", "collider_color"}) {
    if (const auto colour = reader.find(key)) expanded[key] = read_colour(*colour);
  }
  if (const auto colors = reader.find("colors")) {
    const std::vector<JsonValue> entries = colors->elements("a non-empty array of colours");
    if (entries.empty()) colors->fail_expected("a non-empty array of colours");
    nlohmann::json list = nlohmann::json::array();
    for (const JsonValue& entry : entries) list.push_back(read_colour(entry));
    expanded["colors"] = std::move(list);
  }
  if (const auto width = reader.find("min_line_width")) expanded["min_line_width"] = width->positive_number();
  if (const auto stamp = reader.find("time_stamp")) expanded["time_stamp"] = read_boolean(*stamp);
  if (const auto fps = reader.find("fps")) expanded["fps"] = fps->positive_number();
  if (const auto camera = reader.find("camera")) expanded["camera"] = read_camera(*camera, dimension);
  return expanded;
}

}  // namespace bristle
