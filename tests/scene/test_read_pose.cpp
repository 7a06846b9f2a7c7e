// `rods[i].pose`: the two-bone reach placed from the scene, checked against the law of cosines.

#include <cmath>
#include <string>

#include <doctest/doctest.h>

#include "bristle/scene/load_scene.hpp"

using namespace bristle;
using nlohmann::json;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// A scene with one 3-vertex rod (bones 0.03 m and 0.02 m, root at `root`) and the given pose.
json arm_scene(int dimension, const json& pose, const json& vertices = nullptr) {
  json scene = json::parse(R"({
    "format": "bristle-scene/1", "time": {"dt": 0.001, "duration": 0.01},
    "materials": {"m": {"density": 1000, "radius": 0.0005, "youngs_modulus": 1e9}},
    "rods": [{"name": "arm", "material": "m", "fixed": [0]}]
  })");
  scene["dimension"] = dimension;
  json& rod = scene["rods"][0];
  if (!vertices.is_null())
    rod["vertices"] = vertices;
  else if (dimension == 2)
    rod["vertices"] = json::parse("[[0.01, 0.02], [0.04, 0.02], [0.06, 0.02]]");
  else
    rod["vertices"] = json::parse("[[0.01, 0.02, 0.0], [0.04, 0.02, 0.0], [0.06, 0.02, 0.0]]");
  rod["pose"] = pose;
  return scene;
}

Scene load(const json& scene) { return load_scene_from_string(scene.dump(), "arm.json"); }

SceneError load_error(const json& scene) {
  try {
    load(scene);
  } catch (const SceneError& e) {
    return e;
  }
  FAIL("the scene loaded, but it should have been refused");
  return SceneError("", "", 0, "");
}

struct Arm {
  Vec3 x0, x1, x2;
};
Arm arm_of(const Scene& scene) {
  const std::vector<Vec3>& v = scene.model.rods[0].initial_positions;
  REQUIRE(v.size() == 3);
  return {v[0], v[1], v[2]};
}

}  // namespace

TEST_CASE("scene pose 2D: the tip lands on the target, bones keep their lengths, the turn obeys the law of cosines") {
  const double d1 = 0.03, d2 = 0.02;
  const Vec3 root(0.01, 0.02, 0.0);
  for (int bend : {1, -1}) {
    for (const Vec3& offset : {Vec3(0.03, 0.02, 0.0), Vec3(-0.01, 0.025, 0.0), Vec3(0.0, -0.045, 0.0), Vec3(0.02, 0.0, 0.0)}) {
      CAPTURE(bend);
      CAPTURE(offset.transpose());
      const Vec3 target = root + offset;
      const Scene scene = load(arm_scene(2, {{"target", {target.x(), target.y()}}, {"bend", bend}}));
      CHECK(scene.warnings.empty());
      const Arm a = arm_of(scene);
      CHECK(a.x0 == root);
      CHECK((a.x1 - a.x0).norm() == doctest::Approx(d1).epsilon(1e-12));
      CHECK((a.x2 - a.x1).norm() == doctest::Approx(d2).epsilon(1e-12));
      CHECK((a.x2 - target).norm() < 1e-12);
      // Law of cosines: D^2 = d1^2 + d2^2 + 2 d1 d2 cos(theta2), theta2 the turning angle.
      const Vec3 e1 = a.x1 - a.x0, e2 = a.x2 - a.x1;
      const double theta2 = std::atan2(e1.x() * e2.y() - e1.y() * e2.x(), e1.dot(e2));
      const double D = offset.norm();
      CHECK(std::cos(theta2) == doctest::Approx((D * D - d1 * d1 - d2 * d2) / (2.0 * d1 * d2)).epsilon(1e-9));
      CHECK(theta2 * bend > 0.0);  // +1 counter-clockwise, -1 clockwise
      CHECK(a.x0.z() == 0.0);
      CHECK(a.x2.z() == 0.0);
    }
  }
  // The expanded scene records the pose with its default filled in and reloads to the same rod.
  const Scene posed = load(arm_scene(2, {{"target", {0.04, 0.04}}}));
  const json& expanded_pose = posed.expanded["rods"][0]["pose"];
  CHECK(expanded_pose["bend"] == 1);
  const Scene again = load_scene_from_string(posed.expanded.dump(), "expanded.json");
  CHECK((arm_of(again).x1 - arm_of(posed).x1).norm() < 1e-15);
  CHECK((arm_of(again).x2 - arm_of(posed).x2).norm() < 1e-15);
}

TEST_CASE("scene pose 3D: the turn is counter-clockwise about the normal; the default normal keeps the given bend") {
  const Vec3 root(0.01, 0.02, 0.0), target(0.02, 0.03, 0.03);
  for (const Vec3& normal : {Vec3(0, 0, 1), Vec3(0, 0, -1), Vec3(1, -1, 0.5)}) {
    CAPTURE(normal.transpose());
    const Scene scene = load(arm_scene(3, {{"target", {target.x(), target.y(), target.z()}},
                                           {"normal", {normal.x(), normal.y(), normal.z()}}}));
    const Arm a = arm_of(scene);
    CHECK((a.x1 - a.x0).norm() == doctest::Approx(0.03).epsilon(1e-12));
    CHECK((a.x2 - a.x1).norm() == doctest::Approx(0.02).epsilon(1e-12));
    CHECK((a.x2 - target).norm() < 1e-12);
    CHECK((a.x1 - a.x0).cross(a.x2 - a.x1).dot(normal) > 0.0);
  }
  // Bent given vertices and no normal: the pose bends the same way they do.
  const json bent = json::parse("[[0.01, 0.02, 0.0], [0.04, 0.02, 0.0], [0.04, 0.0, 0.0]]");  // clockwise about z
  const Scene scene = load(arm_scene(3, {{"target", {0.03, 0.0, 0.01}}}, bent));
  const Arm a = arm_of(scene);
  CHECK((a.x1 - a.x0).cross(a.x2 - a.x1).z() < 0.0);
  CHECK((a.x2 - Vec3(0.03, 0.0, 0.01)).norm() < 1e-12);
  CHECK(scene.expanded["rods"][0]["pose"]["normal"][2].get<double>() == doctest::Approx(-1.0));

  // Straight given vertices and no normal: refused, pointing at where the normal belongs.
  const SceneError error = load_error(arm_scene(3, {{"target", {0.03, 0.0, 0.01}}}));
  CHECK(error.pointer() == "/rods/0/pose/normal");
}

TEST_CASE("scene pose: a target out of reach is clamped with a warning; one too near, or a bad pose, is refused") {
  // Too far: straight towards the target, the tip d1 + d2 from the root, a warning naming it.
  const Scene far = load(arm_scene(2, {{"target", {0.11, 0.02}}, {"bend", -1}}));
  REQUIRE(far.warnings.size() == 1);
  CHECK(far.warnings[0].find("/rods/0/pose/target") != std::string::npos);
  CHECK(far.warnings[0].find("out of reach") != std::string::npos);
  const Arm a = arm_of(far);
  CHECK(a.x2.x() == doctest::Approx(0.06).epsilon(1e-12));
  CHECK(std::abs(a.x1.y() - 0.02) < 1e-15);
  CHECK(std::abs(a.x2.y() - 0.02) < 1e-15);

  // Too near (closer than |d1 - d2| = 0.01 m): the closest reachable point folds the rod.
  const SceneError near = load_error(arm_scene(2, {{"target", {0.015, 0.02}}}));
  CHECK(near.pointer() == "/rods/0/pose/target");
  CHECK(near.message().find("folds") != std::string::npos);

  // Wrong bend, unknown key, wrong vertex count, a brush.
  CHECK(load_error(arm_scene(2, {{"target", {0.04, 0.04}}, {"bend", 2}})).pointer() == "/rods/0/pose/bend");
  CHECK(load_error(arm_scene(2, {{"target", {0.04, 0.04}}, {"normal", {0, 0, 1}}})).pointer() == "/rods/0/pose/normal");
  CHECK(load_error(arm_scene(2, {{"bend", 1}})).pointer() == "/rods/0/pose/target");
  const SceneError four = load_error(arm_scene(2, {{"target", {0.04, 0.04}}}, json::parse("[[0, 0], [1, 0], [2, 0], [3, 0]]")));
  CHECK(four.pointer() == "/rods/0/pose");
  CHECK(four.message().find("exactly 3 vertices") != std::string::npos);
  // A zero-length bone is reported at the vertex, as without a pose.
  CHECK(load_error(arm_scene(2, {{"target", {0.04, 0.04}}}, json::parse("[[0, 0], [0, 0], [2, 0]]"))).pointer() ==
        "/rods/0/vertices/1");
}

TEST_CASE("scene pose: rest \"initial\" makes the pose the rest shape, \"straight\" bends the rod into it") {
  json scene = arm_scene(2, {{"target", {0.03, 0.05}}});
  const Scene initial = load(scene);
  CHECK(std::abs(initial.model.rods[0].rest_angles[1]) > 0.1);
  scene["rods"][0]["rest"] = "straight";
  const Scene straight = load(scene);
  CHECK(straight.model.rods[0].rest_angles[1] == 0.0);
  CHECK((arm_of(straight).x2 - arm_of(initial).x2).norm() == 0.0);
  (void)kPi;
}
