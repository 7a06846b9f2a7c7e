#include <doctest/doctest.h>

#include <cmath>

#include "bristle/render/render_error.hpp"
#include "bristle/render/scene_render.hpp"

using namespace bristle;
using nlohmann::json;

namespace {

// The message of the RenderError thrown by f, or "" when none is thrown.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const RenderError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("render scene: colliders are read from the manifest's scene") {
  const json scene = json::parse(R"({
    "colliders": [
      {"type": "plane", "point": [0, -0.02, 0], "normal": [0, 2, 0], "friction": 0.3},
      {"type": "sphere", "center": [0.01, 0.02, 0.03], "radius": 0.005},
      {"type": "capsule", "a": [0, 0, 0], "b": [0.1, 0, 0], "radius": 0.002, "handle": "h"},
      {"type": "box", "center": [1, 2, 3], "half_extents": [0.1, 0.2, 0.3],
       "rotation": {"axis": [0, 0, 1], "angle": 1.5707963267948966}},
      {"type": "box", "center": [1, 2], "half_extents": [0.1, 0.2], "rotation": 0.5}
    ]})");
  const std::vector<Collider> c = colliders_from_scene(scene);
  REQUIRE(c.size() == 5);
  CHECK(c[0].type == ColliderType::Plane);
  CHECK(c[0].point.isApprox(Vec3(0, -0.02, 0)));
  CHECK(c[0].normal.isApprox(Vec3(0, 1, 0)));
  CHECK(c[0].friction == 0.3);
  CHECK(c[1].type == ColliderType::Sphere);
  CHECK(c[1].radius == 0.005);
  CHECK(c[2].type == ColliderType::Capsule);
  CHECK(c[2].b.isApprox(Vec3(0.1, 0, 0)));
  CHECK(c[2].handle == "h");
  CHECK(c[3].type == ColliderType::Box);
  CHECK((c[3].rotation * Vec3::UnitX()).isApprox(Vec3::UnitY(), 1e-12));
  CHECK(c[4].center.isApprox(Vec3(1, 2, 0)));
  CHECK(c[4].half_extents.z() == 0.0);
  CHECK((c[4].rotation * Vec3::UnitX()).isApprox(Vec3(std::cos(0.5), std::sin(0.5), 0), 1e-12));
  CHECK(colliders_from_scene(json::object()).empty());
}

TEST_CASE("render scene: malformed colliders name their JSON pointer") {
  CHECK(error_of([] {
          colliders_from_scene(json::parse(R"({"colliders": [{"type": "sphere", "center": [0,0,0]}]})"));
        }).find("/scene/colliders/0") != std::string::npos);
  CHECK(error_of([] {
          colliders_from_scene(json::parse(
              R"({"colliders": [{"type": "plane", "point": [0,0,0], "normal": [0,0,0]}]})"));
        }).find("/scene/colliders/0/normal") != std::string::npos);
  CHECK(error_of([] {
          colliders_from_scene(json::parse(R"({"colliders": [{"type": "cone"}]})"));
        }).find("/scene/colliders/0/type") != std::string::npos);
  CHECK(error_of([] {
          colliders_from_scene(json::parse(
              R"({"colliders": [{"type": "sphere", "center": [0,"x",0], "radius": 1}]})"));
        }).find("/scene/colliders/0/center/1") != std::string::npos);
}

TEST_CASE("render scene: the render block sets image and camera") {
  const json scene = json::parse(R"({
    "dimension": 3,
    "render": {
      "width": 640, "height": 480, "background": "#102030",
      "colors": ["#ff0000", [0, 0, 1]], "min_line_width": 2.5, "time_stamp": false,
      "camera": {"type": "perspective", "position": [0, 0.1, 0.5], "target": [0, 0.01, 0],
                 "up": [0, 1, 0], "fov": 40}
    }})");
  const RenderBlock block = parse_render_block(scene);
  RenderOptions opt;
  apply_render_block(block, opt);
  CHECK(opt.width == 640);
  CHECK(opt.height == 480);
  CHECK(opt.background == color_from_rgb8(0x10, 0x20, 0x30));
  REQUIRE(opt.palette.size() == 2);
  CHECK(opt.palette[1] == Color{0, 0, 1});
  CHECK(opt.min_line_width == 2.5);
  CHECK_FALSE(opt.time_stamp);

  Bounds b;
  b.extend(Vec3(-0.01, 0, -0.01));
  b.extend(Vec3(0.01, 0.02, 0.01));
  const Camera cam = resolve_camera(block, b, 3, 640.0 / 480.0, Vec3::UnitY());
  CHECK(cam.type == ProjectionType::Perspective);
  CHECK(cam.position.isApprox(Vec3(0, 0.1, 0.5)));
  CHECK(cam.target.isApprox(Vec3(0, 0.01, 0)));
  CHECK(cam.fov_deg == 40.0);
}

TEST_CASE("render scene: partial camera blocks are completed by fitting") {
  Bounds b;
  b.extend(Vec3(-0.01, 0, -0.01));
  b.extend(Vec3(0.01, 0.02, 0.01));
  SUBCASE("only the type") {
    const RenderBlock block =
        parse_render_block(json::parse(R"({"render": {"camera": {"type": "orthographic"}}})"));
    const Camera cam = resolve_camera(block, b, 3, 16.0 / 9.0, Vec3::UnitY());
    CHECK(cam.type == ProjectionType::Orthographic);
    CHECK(cam.ortho_height > 0.02);
    CHECK(cam.ortho_height < 0.1);
  }
  SUBCASE("only the position") {
    const RenderBlock block =
        parse_render_block(json::parse(R"({"render": {"camera": {"position": [0, 0.01, 1]}}})"));
    const Camera cam = resolve_camera(block, b, 3, 16.0 / 9.0, Vec3::UnitY());
    CHECK(cam.position.isApprox(Vec3(0, 0.01, 1)));
    CHECK(cam.target.isApprox(b.center()));
  }
  SUBCASE("no block: the fitted camera") {
    const RenderBlock block = parse_render_block(json::object());
    const Camera cam = resolve_camera(block, b, 2, 16.0 / 9.0, Vec3::UnitY());
    CHECK(cam.type == ProjectionType::Orthographic);
  }
}

TEST_CASE("render scene: unknown or malformed render keys are errors") {
  CHECK(error_of([] { parse_render_block(json::parse(R"({"render": {"widht": 3}})")); })
            .find("/scene/render/widht") != std::string::npos);
  CHECK(error_of([] { parse_render_block(json::parse(R"({"render": {"camera": {"fov": 200}}})")); })
            .find("/scene/render/camera/fov") != std::string::npos);
  CHECK(error_of([] { parse_render_block(json::parse(R"({"render": {"width": 0}})")); })
            .find("/scene/render/width") != std::string::npos);
  CHECK(error_of([] {
          parse_render_block(json::parse(R"({"render": {"camera": {"type": "fisheye"}}})"));
        }).find("/scene/render/camera/type") != std::string::npos);
}

TEST_CASE("render scene: setup from a manifest") {
  Manifest m;
  m.dimension = 2;
  m.scene = json::parse(R"({"gravity": [0, -9.81],
    "colliders": [{"type": "plane", "point": [0, 0], "normal": [0, 1]}],
    "render": {"width": 400, "height": 300}})");
  Bounds b;
  b.extend(Vec3(0, 0, 0));
  b.extend(Vec3(1, 1, 0));
  const RenderSetup setup = render_setup_from_manifest(m, b);
  CHECK(setup.options.width == 400);
  CHECK(setup.colliders.size() == 1);
  CHECK(setup.camera.type == ProjectionType::Orthographic);
}

TEST_CASE("render scene: a given fov zooms from the fitted eye instead of refitting it") {
  Bounds b;
  b.extend(Vec3(-0.02, -0.01, -0.01));
  b.extend(Vec3(0.03, 0.02, 0.01));
  const RenderBlock fitted_block;
  RenderBlock zoomed_block;
  zoomed_block.fov_deg = 10.0;
  const Camera fitted = resolve_camera(fitted_block, b, 3, 16.0 / 9.0, Vec3::UnitY());
  const Camera zoomed = resolve_camera(zoomed_block, b, 3, 16.0 / 9.0, Vec3::UnitY());
  CHECK(zoomed.fov_deg == 10.0);
  CHECK((zoomed.position - fitted.position).norm() < 1e-12);
  CHECK((zoomed.target - fitted.target).norm() < 1e-12);
  // A length at the target looks tan(15 deg) / tan(5 deg) = 3.06 times longer.
  const double kDeg = 3.14159265358979323846 / 180.0;
  const Projector wide(fitted, 640, 360), narrow(zoomed, 640, 360);
  const Vec3 a = fitted.target, c = fitted.target + 0.001 * wide.right();
  const double ratio = (narrow.project(c).pixel - narrow.project(a).pixel).norm() /
                       (wide.project(c).pixel - wide.project(a).pixel).norm();
  CHECK(ratio == doctest::Approx(std::tan(15.0 * kDeg) / std::tan(5.0 * kDeg)).epsilon(1e-6));
}
