#pragma once
/// Keyframed handles: scripted rigid motion of rods' fixed vertices and of colliders.
///
/// A handle's pose at time t is the rigid map
///
///   P(t): x -> pivot + T(t) + R(t) (x - pivot)
///
/// applied to the rest geometry (the rods' initial positions, the colliders as built). T and
/// the rotation vector phi = angle * axis are interpolated between keys; R(t) = exp([phi(t)]x).
/// Interpolating the rotation vector (not a quaternion) keeps turns of more than pi between
/// two keys (a key at angle 4 pi spins twice) and is exact for a fixed axis, the usual case;
/// with different axes it is a smooth path, not the shortest one.
///
/// Interpolation between keys k and k+1, s = (t - t_k)/(t_{k+1} - t_k):
///   Linear      p = p_k + s (p_{k+1} - p_k)                          (C0, constant speed)
///   Smooth      s -> s^2 (3 - 2 s) (smoothstep) in the linear form   (C1, at rest at every key)
///   CatmullRom  cubic Hermite through the keys with tangents
///               m_k = (p_{k+1} - p_{k-1}) / (t_{k+1} - t_{k-1}), zero at the first and last
///               key                                                   (C1, moves through keys)
/// Before the first key the pose is the first key's, after the last the last key's.
///
/// Driving a step (HandleDriver::prepare_step, before each ImplicitEuler::step of dt from
/// state.time = t): every fixed vertex of a handled rod gets the velocity
/// (P(t + dt) x_rest - x(t)) / dt, which the integrator's prescribed-velocity contract turns
/// into x(t + dt) = P(t + dt) x_rest (to round-off), and every handled collider is moved to
/// its pose at t + dt with its motion over the step recorded (Collider::step_rotation,
/// step_translation) for friction.

#include <stdexcept>
#include <string>
#include <vector>

#include "bristle/math/types.hpp"
#include "bristle/model/collider.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// The rigid map x -> rotation x + translation.
struct RigidTransform {
  Mat3 rotation = Mat3::Identity();
  Vec3 translation = Vec3::Zero();  ///< [m]

  Vec3 apply(const Vec3& x) const { return rotation * x + translation; }
  /// Applies only the rotation (for directions such as normals).
  Vec3 apply_direction(const Vec3& d) const { return rotation * d; }
  RigidTransform inverse() const;
  /// (this * other)(x) = this(other(x)).
  RigidTransform operator*(const RigidTransform& other) const;
};

enum class HandleInterpolation { Linear, Smooth, CatmullRom };

struct HandleKey {
  double time = 0.0;                    ///< [s]
  Vec3 translation = Vec3::Zero();      ///< T at this key [m]
  Vec3 rotation_axis = Vec3::UnitZ();   ///< any nonzero vector; normalised (z in 2D scenes)
  double rotation_angle = 0.0;          ///< right-handed about the axis, about the pivot [rad]

  /// angle * axis / |axis| [rad].
  Vec3 rotation_vector() const;
};

struct Handle {
  std::string name;
  Vec3 pivot = Vec3::Zero();  ///< the point the rotation is about, in rest coordinates [m]
  HandleInterpolation interpolation = HandleInterpolation::Linear;
  std::vector<HandleKey> keys;     ///< strictly increasing times, at least one
  std::vector<std::string> rods;   ///< rods whose fixed vertices follow this handle

  /// Interpolated translation T(t) and rotation vector phi(t).
  Vec3 translation_at(double time) const;
  Vec3 rotation_vector_at(double time) const;
  /// P(t), as a rigid transform of rest coordinates.
  RigidTransform pose(double time) const;
};

/// Checks a handle: a name, at least one key, strictly increasing finite times, nonzero
/// rotation axes where the angle is nonzero. Throws std::invalid_argument naming the problem.
void validate_handle(const Handle& handle);

/// The collider `rest` moved rigidly by `pose` (point, normal, centre, end points, rotation).
Collider transform_collider(const Collider& rest, const RigidTransform& pose);

/// Applies handles to a model and state, step by step.
class HandleDriver {
 public:
  HandleDriver() = default;
  /// Resolves rod names and collider handle names and records the colliders' current geometry
  /// as their rest geometry (build the driver before moving anything). Throws
  /// std::invalid_argument for an invalid handle, an unknown rod, a rod claimed by two
  /// handles, or a collider naming an unknown handle.
  HandleDriver(const Model& model, std::vector<Handle> handles);

  /// Call before each step of dt from state.time: sets the velocity of every handled fixed
  /// vertex so that it lands exactly on its keyed position at state.time + dt, moves handled
  /// colliders to their pose at state.time + dt and records their motion over the step.
  void prepare_step(Model& model, State& state, double dt) const;

  /// Puts every vertex of each handled rod (moved rigidly, velocity zero) and every handled
  /// collider at its handle's pose at state.time, with no motion recorded: how a run starts
  /// (a handle whose first key is not the identity starts its rods there, unstretched).
  void place(Model& model, State& state) const;

  const std::vector<Handle>& handles() const { return handles_; }
  bool empty() const { return handles_.empty(); }

 private:
  std::vector<Handle> handles_;
  std::vector<std::vector<int>> handle_rods_;  // per handle: rod indices
  std::vector<int> collider_handle_;           // per collider: handle index or -1
  std::vector<Collider> rest_colliders_;
};

}  // namespace bristle
