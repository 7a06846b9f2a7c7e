// Reader of `rods[i].pose`: the two-bone reach of seed 002 as a scene helper. A 3-vertex rod
// (root x0, bones d1 = |x1 - x0| and d2 = |x2 - x1| from its given vertices) gets x1 and x2
// from the analytic solution (analysis/pose.hpp, law of cosines) so that its tip lands on
// `target`; out of reach, on the closest reachable point, with a warning.

#include <cmath>
#include <cstdio>
#include <string>

#include "bristle/analysis/pose.hpp"
#include "bristle/scene/scene_blocks.hpp"
#include "bristle/scene/scene_error.hpp"

namespace bristle {
namespace {

// A posed rod whose turning angle is this close to pi folds back on itself (as in read_rods).
constexpr double kFoldTolerance = 1e-10;

std::string warning_at(const JsonValue& value, const std::string& message) {
  const std::string& pointer = value.pointer();
  return SceneError(value.source().file(), pointer, value.source().locator().line_of(pointer), message).what();
}

std::string length_text(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", x);
  return buffer;
}

}  // namespace

PoseResult read_pose(const JsonValue& value, const std::vector<Vec3>& vertices, int dimension) {
  const ObjectReader reader = value.object(dimension == 2 ? std::vector<std::string>{"target", "bend"}
                                                          : std::vector<std::string>{"target", "normal"});
  if (vertices.size() != 3)
    value.fail("a pose places the middle and last vertex of a rod of exactly 3 vertices (two bones); "
               "this rod has " + std::to_string(vertices.size()));
  const JsonValue target_value = reader.require("target");
  const Vec3 target = target_value.vector(dimension);
  const Vec3 root = vertices[0];
  const double d1 = (vertices[1] - vertices[0]).norm(), d2 = (vertices[2] - vertices[1]).norm();

  PoseResult out;
  out.expanded = nlohmann::json::object();
  out.expanded["target"] = vector_json(target, dimension);
  TwoBonePose pose;
  if (dimension == 2) {
    int bend = 1;
    if (const auto b = reader.find("bend")) {
      const std::int64_t given = b->integer();
      if (given != 1 && given != -1)
        b->fail_expected("1 (the rod turns counter-clockwise at its middle vertex) or -1 (clockwise)");
      bend = static_cast<int>(given);
    }
    out.expanded["bend"] = bend;
    pose = solve_two_bone_2d(root.head<2>(), d1, d2, target.head<2>(), bend);
  } else {
    Vec3 normal;
    if (const auto n = reader.find("normal")) {
      normal = n->direction(3);
    } else {
      // The plane the given vertices already bend in, turning the same way.
      normal = (vertices[1] - vertices[0]).cross(vertices[2] - vertices[1]);
      if (!(normal.norm() > kFoldTolerance * d1 * d2))
        reader.fail_at("normal", "missing \"normal\": the given vertices are collinear, so they do not say "
                                 "in which plane the rod should bend (the turn at the middle vertex is "
                                 "counter-clockwise about \"normal\")");
      normal.normalize();
    }
    out.expanded["normal"] = vector_json(normal, 3);
    pose = solve_two_bone(root, d1, d2, target, normal);
  }

  // A target nearer the root than |d1 - d2| (PoseReach::TooNear) is closest to the fully
  // folded rod (turning angle pi), where bending has no direction: refused, not clamped.
  if (std::abs(std::abs(pose.theta2) - 3.14159265358979323846) <= 1e-8)
    target_value.fail("too near the root (" + length_text((target - root).norm()) + " m): the closest reachable " +
                      "point folds the rod back on itself (turning angle pi), where bending has no " +
                      "direction; bones " + length_text(d1) + " m and " + length_text(d2) +
                      " m reach from " + length_text(std::abs(d1 - d2)) + " m to " + length_text(d1 + d2) +
                      " m");
  if (pose.reach == PoseReach::TooFar)
    out.warning = warning_at(target_value, "out of reach: " + length_text((target - root).norm()) +
                                               " m from the root, bones " + length_text(d1) + " m + " +
                                               length_text(d2) + " m; the rod points straight at it and its tip stops " +
                                               length_text(pose.miss) + " m short");
  out.vertices = {root, pose.x1, pose.x2};
  if (dimension == 2)
    for (Vec3& v : out.vertices) v.z() = 0.0;
  return out;
}

}  // namespace bristle
