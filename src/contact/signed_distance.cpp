#include "bristle/contact/signed_distance.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace bristle {
namespace {

/// Closest point parameter t in [0, 1] of segment ab to x; 0 for a degenerate segment.
double segment_parameter(const Vec3& x, const Vec3& a, const Vec3& b) {
  const Vec3 axis = b - a;
  const double length2 = axis.squaredNorm();
  if (length2 == 0.0) return 0.0;
  return std::clamp((x - a).dot(axis) / length2, 0.0, 1.0);
}

/// A unit vector perpendicular to `axis`: axis x z when the axis is not along z, so that in
/// a 2D scene (everything in the xy plane) it stays in the plane.
Vec3 any_perpendicular(const Vec3& axis) {
  const Vec3 trial = std::abs(axis.z()) < 0.9 ? Vec3::UnitZ() : Vec3::UnitX();
  return axis.cross(trial).normalized();
}

double sign_of(double value) { return value < 0.0 ? -1.0 : 1.0; }

/// Box in its local frame: q the local point, e the half extents.
struct LocalBox {
  Vec3 q, w;  // w = |q| - e
  bool outside;
  int inside_axis;  // the largest w when inside
};

LocalBox local_box(const Vec3& x, const Vec3& center, const Mat3& rotation, const Vec3& half_extents) {
  LocalBox box;
  box.q = rotation.transpose() * (x - center);
  box.w = box.q.cwiseAbs() - half_extents;
  box.outside = box.w.maxCoeff() > 0.0;
  box.inside_axis = 0;
  for (int k = 1; k < 3; ++k)
    if (box.w[k] > box.w[box.inside_axis]) box.inside_axis = k;
  return box;
}

}  // namespace

// ---- plane --------------------------------------------------------------------------------

double plane_distance(const Vec3& x, const Vec3& point, const Vec3& normal) {
  return normal.normalized().dot(x - point);
}

Vec3 plane_distance_gradient(const Vec3&, const Vec3&, const Vec3& normal) {
  return normal.normalized();
}

Mat3 plane_distance_hessian(const Vec3&, const Vec3&, const Vec3&) { return Mat3::Zero(); }

// ---- sphere -------------------------------------------------------------------------------

double sphere_distance(const Vec3& x, const Vec3& center, double radius) {
  return (x - center).norm() - radius;
}

Vec3 sphere_distance_gradient(const Vec3& x, const Vec3& center, double) {
  const Vec3 d = x - center;
  const double length = d.norm();
  return length > 0.0 ? Vec3(d / length) : Vec3(Vec3::UnitY());
}

Mat3 sphere_distance_hessian(const Vec3& x, const Vec3& center, double radius) {
  const double length = (x - center).norm();
  if (length == 0.0) return Mat3::Zero();
  const Vec3 n = sphere_distance_gradient(x, center, radius);
  return (Mat3::Identity() - n * n.transpose()) / length;
}

// ---- capsule ------------------------------------------------------------------------------

double capsule_distance(const Vec3& x, const Vec3& a, const Vec3& b, double radius) {
  const double t = segment_parameter(x, a, b);
  return (x - (a + t * (b - a))).norm() - radius;
}

Vec3 capsule_distance_gradient(const Vec3& x, const Vec3& a, const Vec3& b, double) {
  const double t = segment_parameter(x, a, b);
  const Vec3 d = x - (a + t * (b - a));
  const double length = d.norm();
  if (length > 0.0) return d / length;
  return (b - a).squaredNorm() > 0.0 ? any_perpendicular((b - a).normalized()) : Vec3(Vec3::UnitY());
}

Mat3 capsule_distance_hessian(const Vec3& x, const Vec3& a, const Vec3& b, double radius) {
  const double t = segment_parameter(x, a, b);
  const Vec3 d = x - (a + t * (b - a));
  const double length = d.norm();
  if (length == 0.0) return Mat3::Zero();
  const Vec3 n = d / length;
  Mat3 h = Mat3::Identity() - n * n.transpose();
  if (t > 0.0 && t < 1.0) {  // cylinder part: no curvature along the axis
    const Vec3 axis = (b - a).normalized();
    h -= axis * axis.transpose();
  }
  (void)radius;
  return h / length;
}

// ---- box ----------------------------------------------------------------------------------

double box_distance(const Vec3& x, const Vec3& center, const Mat3& rotation, const Vec3& half_extents) {
  const LocalBox box = local_box(x, center, rotation, half_extents);
  if (box.outside) return box.w.cwiseMax(0.0).norm();
  return box.w[box.inside_axis];
}

Vec3 box_distance_gradient(const Vec3& x, const Vec3& center, const Mat3& rotation,
                           const Vec3& half_extents) {
  const LocalBox box = local_box(x, center, rotation, half_extents);
  Vec3 g = Vec3::Zero();
  if (box.outside) {
    const Vec3 o = box.w.cwiseMax(0.0);
    const double length = o.norm();
    for (int k = 0; k < 3; ++k) g[k] = sign_of(box.q[k]) * o[k] / length;
  } else {
    g[box.inside_axis] = sign_of(box.q[box.inside_axis]);
  }
  return rotation * g;
}

Mat3 box_distance_hessian(const Vec3& x, const Vec3& center, const Mat3& rotation,
                          const Vec3& half_extents) {
  const LocalBox box = local_box(x, center, rotation, half_extents);
  if (!box.outside) return Mat3::Zero();
  const Vec3 o = box.w.cwiseMax(0.0);
  const double length = o.norm();
  Vec3 g;
  Mat3 projector = Mat3::Zero();
  for (int k = 0; k < 3; ++k) {
    g[k] = sign_of(box.q[k]) * o[k] / length;
    if (box.w[k] > 0.0) projector(k, k) = 1.0;
  }
  return rotation * ((projector - g * g.transpose()) / length) * rotation.transpose();
}

// ---- dispatch -----------------------------------------------------------------------------

double collider_distance(const Collider& c, const Vec3& x) {
  switch (c.type) {
    case ColliderType::Plane: return plane_distance(x, c.point, c.normal);
    case ColliderType::Sphere: return sphere_distance(x, c.center, c.radius);
    case ColliderType::Capsule: return capsule_distance(x, c.a, c.b, c.radius);
    case ColliderType::Box: return box_distance(x, c.center, c.rotation, c.half_extents);
  }
  assert(false && "unknown collider type");
  return 0.0;
}

Vec3 collider_distance_gradient(const Collider& c, const Vec3& x) {
  switch (c.type) {
    case ColliderType::Plane: return plane_distance_gradient(x, c.point, c.normal);
    case ColliderType::Sphere: return sphere_distance_gradient(x, c.center, c.radius);
    case ColliderType::Capsule: return capsule_distance_gradient(x, c.a, c.b, c.radius);
    case ColliderType::Box: return box_distance_gradient(x, c.center, c.rotation, c.half_extents);
  }
  assert(false && "unknown collider type");
  return Vec3::UnitY();
}

Mat3 collider_distance_hessian(const Collider& c, const Vec3& x) {
  switch (c.type) {
    case ColliderType::Plane: return plane_distance_hessian(x, c.point, c.normal);
    case ColliderType::Sphere: return sphere_distance_hessian(x, c.center, c.radius);
    case ColliderType::Capsule: return capsule_distance_hessian(x, c.a, c.b, c.radius);
    case ColliderType::Box: return box_distance_hessian(x, c.center, c.rotation, c.half_extents);
  }
  assert(false && "unknown collider type");
  return Mat3::Zero();
}

}  // namespace bristle
