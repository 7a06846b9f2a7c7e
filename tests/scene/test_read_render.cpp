// The scene's optional `render` block (src/scene/read_render.cpp): validated by the loader
// with JSON pointers like every block, recorded in the expanded scene, and read back by the
// renderer from the manifest.

#include <fstream>
#include <string>

#include <doctest/doctest.h>

#include "bristle/render/render_error.hpp"
#include "bristle/render/scene_render.hpp"
#include "bristle/scene/load_scene.hpp"
#include "bristle/scene/scene_error.hpp"
#include "test_paths.hpp"

using namespace bristle;
using nlohmann::json;

namespace {

json scene_3d() {
  std::ifstream in(std::string(bristle::test::kTestsDir) + "/scene/data/valid_3d.json");
  return json::parse(in);
}

json scene_2d() {
  return json::parse(R"({
    "format": "bristle-scene/1", "dimension": 2,
    "time": { "dt": 0.001, "duration": 0.1 },
    "materials": { "steel": { "density": 7800, "radius": 0.0001, "youngs_modulus": 2e11 } },
    "rods": [ { "name": "a", "material": "steel",
                "generator": { "type": "straight", "from": [0, 0], "to": [0.01, 0], "segments": 4 } } ]
  })");
}

// The pointer of the SceneError loading `scene` throws ("" when it loads).
std::string refused_at(const json& scene, std::string* message = nullptr) {
  try {
    load_scene_from_string(scene.dump(2), "scene.json");
  } catch (const SceneError& e) {
    if (message) *message = e.message();
    return e.pointer();
  }
  return "";
}

}  // namespace

TEST_CASE("scene render block: absent, it leaves the expanded scene as it was") {
  const Scene scene = load_scene_from_string(scene_3d().dump(), "scene.json");
  CHECK_FALSE(scene.expanded.contains("render"));
}

TEST_CASE("scene render block: every key accepted, recorded, and read back by the renderer") {
  json s = scene_3d();
  s["render"] = json::parse(R"({
    "width": 640, "height": 360, "background": "#101820", "colors": ["#e69f00", [0.2, 0.4, 0.8]],
    "collider_color": [0.5, 0.5, 0.5], "min_line_width": 2, "time_stamp": false, "fps": 25,
    "camera": { "type": "perspective", "position": [0.1, 0.05, 0.2], "target": [0.01, 0, 0],
                "up": [0, 2, 0], "fov": 40, "height": 0.05 } })");
  const Scene scene = load_scene_from_string(s.dump(), "scene.json");
  const json& r = scene.expanded.at("render");
  CHECK(r["width"] == 640);
  CHECK(r["camera"]["up"] == json::array({0.0, 1.0, 0.0}));  // normalised
  CHECK(r["colors"].size() == 2);

  const RenderBlock block = parse_render_block(scene.expanded);
  CHECK(*block.width == 640);
  CHECK(*block.height == 360);
  CHECK(*block.background == color_from_rgb8(0x10, 0x18, 0x20));
  CHECK(block.colors.size() == 2);
  CHECK(block.collider_color->g == 0.5);
  CHECK(*block.min_line_width == 2.0);
  CHECK_FALSE(*block.time_stamp);
  CHECK(*block.fps == 25.0);
  CHECK(*block.camera_type == ProjectionType::Perspective);
  CHECK(block.position->isApprox(Vec3(0.1, 0.05, 0.2)));
  CHECK(*block.fov_deg == 40.0);
  // The expanded scene loads again to the same block (manifests can be re-run).
  CHECK(load_scene_from_string(scene.expanded.dump(), "again.json").expanded["render"] == r);
}

TEST_CASE("scene render block: 2D scenes take target, up and height in their plane") {
  json s = scene_2d();
  s["render"] = {{"camera", {{"type", "orthographic"}, {"target", {0.005, 0}}, {"height", 0.02}}}};
  const Scene scene = load_scene_from_string(s.dump(), "scene.json");
  const RenderBlock block = parse_render_block(scene.expanded);
  CHECK(block.target->isApprox(Vec3(0.005, 0.0, 0.0)));
  CHECK(*block.ortho_height == 0.02);

  std::string message;
  s["render"] = {{"camera", {{"position", {0, 0}}}}};
  CHECK(refused_at(s, &message) == "/render/camera/position");
  CHECK(message.find("2D scene") != std::string::npos);
  s["render"] = {{"camera", {{"type", "perspective"}}}};
  CHECK(refused_at(s) == "/render/camera/type");
  s["render"] = {{"camera", {{"target", {0, 0, 0}}}}};  // 3 components in 2D
  CHECK(refused_at(s) == "/render/camera/target");
}

TEST_CASE("scene render block: malformed values are refused with their JSON pointer") {
  struct Case {
    const char* what;
    json block;
    const char* pointer;
  };
  const Case cases[] = {
      {"not an object", json::array(), "/render"},
      {"unknown key", {{"widht", 100}}, "/render/widht"},
      {"width zero", {{"width", 0}}, "/render/width"},
      {"height not integral", {{"height", 10.5}}, "/render/height"},
      {"height too large", {{"height", 40000}}, "/render/height"},
      {"bad hex colour", {{"background", "#12345"}}, "/render/background"},
      {"colour out of range", {{"collider_color", {0, 1.5, 0}}}, "/render/collider_color/1"},
      {"empty palette", {{"colors", json::array()}}, "/render/colors"},
      {"bad palette entry", {{"colors", {"#000000", "red"}}}, "/render/colors/1"},
      {"line width negative", {{"min_line_width", -1}}, "/render/min_line_width"},
      {"time stamp not boolean", {{"time_stamp", "yes"}}, "/render/time_stamp"},
      {"fps zero", {{"fps", 0}}, "/render/fps"},
      {"camera unknown key", {{"camera", {{"fov_deg", 30}}}}, "/render/camera/fov_deg"},
      {"camera type", {{"camera", {{"type", "fisheye"}}}}, "/render/camera/type"},
      {"camera fov", {{"camera", {{"fov", 180}}}}, "/render/camera/fov"},
      {"camera up zero", {{"camera", {{"up", {0, 0, 0}}}}}, "/render/camera/up"},
      {"camera position = target", {{"camera", {{"position", {1, 2, 3}}, {"target", {1, 2, 3}}}}},
       "/render/camera/target"},
      {"camera height", {{"camera", {{"height", -0.1}}}}, "/render/camera/height"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    json s = scene_3d();
    s["render"] = c.block;
    CHECK(refused_at(s) == c.pointer);
  }
}
