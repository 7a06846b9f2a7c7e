#pragma once
/// Rigid obstacles the rods touch (interface.md section 1, `colliders`). Contact keeps the
/// rod's surface, at its radius from the centreline, outside the collider.

#include <string>

#include "bristle/math/types.hpp"

namespace bristle {

enum class ColliderType { Plane, Sphere, Capsule, Box };

struct Collider {
  ColliderType type = ColliderType::Plane;
  // Plane: a point on it and its outward unit normal.
  Vec3 point = Vec3::Zero();
  Vec3 normal = Vec3::UnitY();
  // Sphere and box: the centre. Sphere and capsule: the radius [m].
  Vec3 center = Vec3::Zero();
  double radius = 0.0;
  // Capsule: the segment's end points.
  Vec3 a = Vec3::Zero(), b = Vec3::Zero();
  // Box: half extents along its local axes, and the rotation from local to world.
  Vec3 half_extents = Vec3::Zero();
  Mat3 rotation = Mat3::Identity();
  /// Coulomb friction coefficient, >= 0.
  double friction = 0.0;
  /// Name of the handle that moves this collider ("" when static).
  std::string handle;
  /// Rigid motion over the step being taken: the pose at the end of the step is
  /// x -> step_rotation x + step_translation applied to the pose at its start. Identity for a
  /// static collider; set before each step by the handle driver (model/handle.hpp). Contact
  /// friction measures slip against the velocity of the surface it implies.
  Mat3 step_rotation = Mat3::Identity();
  Vec3 step_translation = Vec3::Zero();  ///< [m]
};

}  // namespace bristle
