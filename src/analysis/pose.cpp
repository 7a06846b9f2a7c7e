#include "bristle/analysis/pose.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace bristle {
namespace {

/// A unit vector perpendicular to u.
Vec3 any_perpendicular(const Vec3& u) {
  const Vec3 axis = std::abs(u.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  return u.cross(axis).normalized();
}

}  // namespace

TwoBonePose solve_two_bone(const Vec3& root, double d1, double d2, const Vec3& target,
                           const Vec3& bend_normal, const Vec3& fallback_direction) {
  assert(d1 >= 0.0 && d2 >= 0.0);
  assert(root.allFinite() && target.allFinite() && bend_normal.allFinite());
  TwoBonePose pose;

  // The bending plane's frame: u towards the target, n perpendicular to u, v = n x u.
  const Vec3 to_target = target - root;
  const double distance = to_target.norm();
  Vec3 u = distance > 0.0 ? Vec3(to_target / distance) : fallback_direction;
  if (!(u.norm() > 0.0)) u = Vec3::UnitX();
  u.normalize();
  Vec3 n = bend_normal - bend_normal.dot(u) * u;
  if (!(n.norm() > 1e-12 * bend_normal.norm()) || !(bend_normal.norm() > 0.0)) {
    n = any_perpendicular(u);
    pose.normal_was_degenerate = true;
  }
  n.normalize();
  const Vec3 v = n.cross(u);

  // Reachable annulus |d1 - d2| <= D <= d1 + d2 (relative slack for round-off).
  const double slack = 1e-12 * std::max({d1 + d2, distance, std::numeric_limits<double>::min()});
  if (distance > d1 + d2 + slack) pose.reach = PoseReach::TooFar;
  else if (distance < std::abs(d1 - d2) - slack) pose.reach = PoseReach::TooNear;

  // Law of cosines, clamped; a zero-length bone leaves theta2 free: take 0.
  double theta2 = 0.0;
  if (d1 > 0.0 && d2 > 0.0) {
    const double c = (distance * distance - d1 * d1 - d2 * d2) / (2.0 * d1 * d2);
    theta2 = std::acos(std::clamp(c, -1.0, 1.0));
  }
  // In the (u, v) frame the target is at (D, 0): theta1 = 0 - atan2(d2 sin t2, d1 + d2 cos t2).
  const double theta1 = -std::atan2(d2 * std::sin(theta2), d1 + d2 * std::cos(theta2));

  pose.x1 = root + d1 * (std::cos(theta1) * u + std::sin(theta1) * v);
  pose.x2 = pose.x1 + d2 * (std::cos(theta1 + theta2) * u + std::sin(theta1 + theta2) * v);
  pose.theta1 = theta1;
  pose.theta2 = theta2;
  pose.miss = (pose.x2 - target).norm();
  return pose;
}

TwoBonePose solve_two_bone_2d(const Vec2& root, double d1, double d2, const Vec2& target, int bend,
                              const Vec2& fallback_direction) {
  assert(bend == 1 || bend == -1);
  const Vec3 fallback(fallback_direction.x(), fallback_direction.y(), 0.0);
  TwoBonePose pose = solve_two_bone(Vec3(root.x(), root.y(), 0.0), d1, d2,
                                    Vec3(target.x(), target.y(), 0.0), Vec3(0.0, 0.0, bend), fallback);
  // In the plane, report the signed angles about +z (the frame was built about bend z):
  // theta1 = atan2(y, x) - atan2(d2 sin theta2, d1 + d2 cos theta2), as in the seed.
  const Vec2 to_target = target - root;
  const Vec2 u = to_target.norm() > 0.0 ? to_target : fallback_direction;
  pose.theta2 *= bend;
  pose.theta1 = std::atan2(u.y(), u.x()) + bend * pose.theta1;
  return pose;
}

}  // namespace bristle
