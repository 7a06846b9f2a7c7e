#pragma once
/// Analytic two-bone pose: place the middle and last vertex of a 3-vertex chain (root x0,
/// bones of lengths d1 and d2) so that the tip reaches a target.
///
/// Formula (seed 002, Ryan Juckett, "Analytic two-bone IK in 2D", 2008; verdict "correct" in
/// physics-notes.md). With the target at (x, y) relative to the root and D^2 = x^2 + y^2, the
/// law of cosines gives the turning angle at the middle vertex
///
///   cos theta2 = (D^2 - d1^2 - d2^2) / (2 d1 d2),  clamped to [-1, 1],
///   theta2 = bend * acos(...),                     bend = +1 or -1,
///   theta1 = atan2(y, x) - atan2(d2 sin theta2, d1 + d2 cos theta2),
///
/// theta1 the first bone's direction, theta2 the signed turning angle between the bones
/// (Bristle's 2D convention, counter-clockwise positive, as in energy/bend.hpp). The clamp
/// handles targets out of reach: the reachable set is the annulus |d1 - d2| <= D <= d1 + d2,
/// and with the clamped angle the tip lands on the point of that annulus closest to the target
/// (fully stretched towards it when too far, fully folded when too near). Zero-length bones:
/// the cosine is undefined (0/0), theta2 is then set to 0 (the seed allows any value) and the
/// reachable set is the circle D = d1 + d2, the tip going to its point closest to the target.
///
/// 3D: the chain bends in the plane that contains the root-target line and is perpendicular
/// to the given bend normal n (n is first made perpendicular to the root-target direction u);
/// with v = n x u the 2D formulas run in the (u, v) frame, so the turn at the middle vertex is
/// counter-clockwise about n: ((x1 - x0) x (x2 - x1)) . n >= 0. The 2D version is the 3D one
/// with n = bend z.
///
/// Degenerate inputs: a target at the root (D = 0) has no direction; `fallback_direction` is
/// used for u (a unit x by default). A bend normal parallel to u is replaced by a vector
/// perpendicular to u, and `normal_was_degenerate` says so.

#include "bristle/math/types.hpp"

namespace bristle {

enum class PoseReach {
  Reached,  ///< the tip is at the target
  TooFar,   ///< D > d1 + d2: clamped, stretched straight towards the target
  TooNear,  ///< D < |d1 - d2|: clamped, folded back
};

struct TwoBonePose {
  Vec3 x1 = Vec3::Zero();  ///< middle vertex [m]
  Vec3 x2 = Vec3::Zero();  ///< tip [m]
  /// 2D: direction of the first bone from +x [rad]. 3D: its angle from the root-target
  /// direction u, counter-clockwise about the bend normal [rad].
  double theta1 = 0.0;
  double theta2 = 0.0;     ///< signed turning angle at the middle vertex [rad], in [-pi, pi]
  PoseReach reach = PoseReach::Reached;
  double miss = 0.0;       ///< |x2 - target| [m]; 0 up to round-off when reached
  bool normal_was_degenerate = false;

  bool clamped() const { return reach != PoseReach::Reached; }
};

/// 2D: root and target in the plane, bend = +1 (counter-clockwise turn at x1) or -1.
TwoBonePose solve_two_bone_2d(const Vec2& root, double d1, double d2, const Vec2& target, int bend,
                              const Vec2& fallback_direction = Vec2::UnitX());

/// 3D: the turn at x1 is counter-clockwise about `bend_normal` (any length > 0).
TwoBonePose solve_two_bone(const Vec3& root, double d1, double d2, const Vec3& target,
                           const Vec3& bend_normal, const Vec3& fallback_direction = Vec3::UnitX());

}  // namespace bristle
