#pragma once
/// Signed distance from a point to each collider shape, with its gradient and Hessian.
///
/// phi(x) > 0 outside the collider, < 0 inside, |grad phi| = 1 wherever it is differentiable.
/// Contact keeps a rod vertex x at phi(x) >= r, r the rod's radius: the rod's surface stays
/// outside. Every shape here is convex, so phi is a convex function of x; the contact solver
/// relies on that (a vertex placed on the tangent plane phi(x~) + n.(x - x~) = r is never
/// inside, see docs/contact.md).
///
/// Shapes (all vectors in world coordinates, [m]):
///   plane    phi = n.(x - p),                 grad = n,               H = 0
///   sphere   phi = |x - c| - R,               grad = (x - c)/|x - c|, H = (I - grad grad^T)/|x - c|
///   capsule  phi = |x - q(x)| - R, q(x) the closest point of segment ab; on the cylinder part
///            H = (I - a^ a^T - grad grad^T)/|x - q|, a^ the unit axis; at the caps as sphere
///   box      q = R^T (x - c), w = |q| - e (per axis, e the half extents);
///            outside (max w > 0): phi = |max(w, 0)|, grad = R (sign(q) o max(w, 0))/phi,
///              H = R (P_A - g g^T) R^T / phi with P_A the projector on the axes where w > 0
///              and g the local gradient;
///            inside: phi = max_k w_k, grad = R sign(q_k) e_k for the largest k, H = 0.
/// The gradient is not defined on the medial set (a sphere's centre, a capsule's axis, a box's
/// inner diagonals); there the functions return one of the one-sided values (documented per
/// function). Finite-difference tests stay away from those sets.

#include "bristle/math/types.hpp"
#include "bristle/model/collider.hpp"

namespace bristle {

/// Plane through `point` with normal `normal` (normalised here).
double plane_distance(const Vec3& x, const Vec3& point, const Vec3& normal);
Vec3 plane_distance_gradient(const Vec3& x, const Vec3& point, const Vec3& normal);
Mat3 plane_distance_hessian(const Vec3& x, const Vec3& point, const Vec3& normal);

/// Sphere of centre `center` and radius `radius`. At the centre the gradient is +y.
double sphere_distance(const Vec3& x, const Vec3& center, double radius);
Vec3 sphere_distance_gradient(const Vec3& x, const Vec3& center, double radius);
Mat3 sphere_distance_hessian(const Vec3& x, const Vec3& center, double radius);

/// Capsule: the points within `radius` of segment ab (a sphere when a == b). On the axis the
/// gradient is any unit vector perpendicular to it.
double capsule_distance(const Vec3& x, const Vec3& a, const Vec3& b, double radius);
Vec3 capsule_distance_gradient(const Vec3& x, const Vec3& a, const Vec3& b, double radius);
Mat3 capsule_distance_hessian(const Vec3& x, const Vec3& a, const Vec3& b, double radius);

/// Oriented box: centre, rotation (local to world, orthonormal) and half extents along its
/// local axes. An infinite half extent makes an infinite slab (used for boxes in 2D scenes,
/// whose z extent is ignored). Inside, ties between faces go to the lowest axis.
double box_distance(const Vec3& x, const Vec3& center, const Mat3& rotation, const Vec3& half_extents);
Vec3 box_distance_gradient(const Vec3& x, const Vec3& center, const Mat3& rotation,
                           const Vec3& half_extents);
Mat3 box_distance_hessian(const Vec3& x, const Vec3& center, const Mat3& rotation,
                          const Vec3& half_extents);

/// Dispatch on the collider's type.
double collider_distance(const Collider& collider, const Vec3& x);
Vec3 collider_distance_gradient(const Collider& collider, const Vec3& x);
Mat3 collider_distance_hessian(const Collider& collider, const Vec3& x);

}  // namespace bristle
