#include "bristle/contact/segment_contact_frame.hpp"

#include <algorithm>
#include <cmath>

#include "bristle/contact/segment_distance.hpp"

namespace bristle {

namespace {

// A unit vector perpendicular to `axis` (|axis| > 0), along `preferred` where it has a part
// across the axis, else across the coordinate axis least aligned with `axis`. In 2D (axis in
// the xy plane) the vector stays in the plane.
Vec3 perpendicular_unit(const Vec3& axis, const Vec3& preferred, int dimension) {
  const Vec3 a = axis.normalized();
  Vec3 wanted = preferred;
  if (dimension == 2) wanted.z() = 0.0;
  const Vec3 across = wanted - a * a.dot(wanted);
  if (across.norm() > 1e-12 * std::max(1.0, wanted.norm())) return across.normalized();
  if (dimension == 2) return Vec3(-a.y(), a.x(), 0.0);
  int least = 0;
  for (int i = 1; i < 3; ++i)
    if (std::abs(a[i]) < std::abs(a[least])) least = i;
  return a.cross(Vec3::Unit(least)).normalized();
}

}  // namespace

void tangent_basis(const Vec3& normal, Vec3& tangent1, Vec3& tangent2) {
  // Cross with the coordinate axis least aligned with the normal (the lowest index on ties):
  // never near parallel, so the result is well conditioned; a normal in the xy plane picks z.
  int least = 0;
  for (int i = 1; i < 3; ++i)
    if (std::abs(normal[i]) < std::abs(normal[least])) least = i;
  if (normal[2] == 0.0) least = 2;
  tangent1 = normal.cross(Vec3::Unit(least)).normalized();
  tangent2 = normal.cross(tangent1);
}

SegmentContactFrame segment_contact_frame(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1,
                                          double radius_p, double radius_q, const Vec3& fallback_normal,
                                          int dimension) {
  const SegmentDistance closest = segment_distance(p0, p1, q0, q1);
  SegmentContactFrame frame;
  frame.s = closest.s;
  frame.t = closest.t;
  frame.gap = closest.distance - (radius_p + radius_q);
  frame.weights << 1.0 - closest.s, closest.s, -(1.0 - closest.t), -closest.t;
  const Vec3 between = (p0 + closest.s * (p1 - p0)) - (q0 + closest.t * (q1 - q0));
  // The scale below which the closest points' difference is rounding: then the axes touch.
  const double scale = std::max({(p1 - p0).norm(), (q1 - q0).norm(), radius_p + radius_q});
  if (closest.distance > 1e-12 * scale) {
    frame.normal = between / closest.distance;
  } else {
    const Vec3 ep = p1 - p0, eq = q1 - q0;
    const Vec3 across = ep.cross(eq);
    if (dimension == 3 && across.norm() > 1e-12 * ep.norm() * eq.norm() && across.norm() > 0.0) {
      frame.normal = across.normalized();
      if (frame.normal.dot(fallback_normal) < 0.0) frame.normal = -frame.normal;
    } else if (ep.norm() > 0.0) {
      frame.normal = perpendicular_unit(ep, fallback_normal, dimension);
    } else if (eq.norm() > 0.0) {
      frame.normal = perpendicular_unit(eq, fallback_normal, dimension);
    } else {
      Vec3 wanted = fallback_normal;
      if (dimension == 2) wanted.z() = 0.0;
      frame.normal = wanted.norm() > 0.0 ? Vec3(wanted.normalized()) : Vec3(Vec3::UnitX());
    }
  }
  tangent_basis(frame.normal, frame.tangent1, frame.tangent2);
  return frame;
}

}  // namespace bristle
