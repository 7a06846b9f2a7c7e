#include <doctest/doctest.h>

#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "bristle/export/export_colliders.hpp"
#include "bristle/io/output_error.hpp"

using namespace bristle;
using nlohmann::json;

namespace {

// A scene as a manifest records it: a rod, a static plane, and a sphere and a box carried by
// a handle that lifts them 1 m and turns them a quarter about y over 2 s.
json recorded_scene() {
  return json::parse(R"({
    "format": "bristle-scene/1", "name": "lifted", "dimension": 3,
    "time": { "dt": 0.01, "duration": 0.1 },
    "materials": { "m": { "density": 1000, "radius": 0.001, "youngs_modulus": 1e9 } },
    "rods": [ { "name": "r", "material": "m", "vertices": [[0, 1, 0], [0.1, 1, 0]], "fixed": [0] } ],
    "colliders": [
      { "type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0] },
      { "type": "sphere", "center": [1, 0, 0], "radius": 0.5 },
      { "type": "box", "center": [0, 0, 2], "half_extents": [1, 1, 1] } ],
    "handles": [ { "name": "lift", "colliders": [1, 2],
      "keys": [ { "time": 0 },
                { "time": 2, "translation": [0, 1, 0], "rotation": { "axis": [0, 1, 0], "angle": 1.5707963267948966 } } ] } ]
  })");
}

}  // namespace

TEST_CASE("export colliders: the recorded scene's colliders and the handles that move them") {
  const ExportColliders c = export_colliders(recorded_scene(), "out/manifest.json");
  REQUIRE(c.size() == 3);
  CHECK(c.rest[0].type == ColliderType::Plane);
  CHECK(c.rest[1].type == ColliderType::Sphere);
  CHECK(c.rest[1].radius == 0.5);
  CHECK(c.handle_of == std::vector<int>{-1, 0, 0});
  CHECK(c.any_moves());
  CHECK_FALSE(c.moves(0));
  // At t = 1 s, halfway: lifted 0.5 m, turned an eighth about y (linear interpolation).
  const RigidTransform half = c.pose(1, 1.0);
  const Vec3 centre = half.apply(c.rest[1].center);
  CHECK((centre - Vec3(std::sqrt(0.5), 0.5, -std::sqrt(0.5))).norm() < 1e-12);
  // The static plane does not move, whatever the time.
  CHECK(c.pose(0, 1.0).translation == Vec3::Zero());
  CHECK(c.pose(0, 1.0).rotation == Mat3::Identity());
}

TEST_CASE("export colliders: a scene without colliders is not loaded again") {
  // Not a loadable scene (no format, no rods), but without colliders it is not read at all.
  CHECK(export_colliders(json{{"name", "x"}}, "m.json").empty());
  CHECK(export_colliders(json{{"colliders", json::array()}}, "m.json").empty());
  CHECK(export_colliders(json(), "m.json").empty());
}

TEST_CASE("export colliders: a recorded scene that does not load names the manifest and pointer") {
  json scene = recorded_scene();
  scene["colliders"][1]["radius"] = -1;
  try {
    export_colliders(scene, "out/manifest.json");
    FAIL("a negative radius was accepted");
  } catch (const OutputError& error) {
    const std::string what = error.what();
    CHECK(what.find("out/manifest.json") == 0);
    CHECK(what.find("/scene/colliders/1/radius") != std::string::npos);
  }
}

TEST_CASE("export colliders: planes are sized from the rods' box") {
  ExportColliders c;
  Frame frame;
  frame.rods.resize(2);
  frame.rods[0].positions = {Vec3(0, 0, 0), Vec3(1, 0, 0)};
  frame.rods[1].positions = {Vec3(0, 2, -1)};
  Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity()), hi = -lo;
  fit_planes(c, lo, hi);  // no vertices: the defaults stay
  CHECK(c.plane_half_size == 1.0);
  extend_rod_box(frame, lo, hi);
  CHECK(lo == Vec3(0, 0, -1));
  CHECK(hi == Vec3(1, 2, 0));
  fit_planes(c, lo, hi);
  CHECK(c.focus.isApprox(Vec3(0.5, 1.0, -0.5)));
  CHECK(c.plane_half_size == doctest::Approx(std::sqrt(6.0)));
  fit_planes(c, Vec3::Zero(), Vec3::Zero());  // one point: still a visible square
  CHECK(c.plane_half_size == 1e-3);
}
