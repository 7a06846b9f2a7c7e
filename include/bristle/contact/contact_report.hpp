#pragma once
/// What contact did during one step: per-collider counts and forces, and how the active set
/// converged. Part of the integrator's StepReport.

#include <vector>

#include "bristle/math/types.hpp"

namespace bristle {

struct ColliderContactStats {
  int contacts = 0;             ///< rod vertices in contact with this collider at the end of the step
  int sticking = 0;             ///< of which held by static friction (the others slide)
  double normal_force = 0.0;    ///< sum over its contacts of the normal force magnitude [N]
  double friction_force = 0.0;  ///< sum over its contacts of the friction force magnitude [N]
  Vec3 force = Vec3::Zero();    ///< total force the collider exerts on the rods [N]
};

struct ContactReport {
  std::vector<ColliderContactStats> colliders;  ///< one per Model::colliders entry, same order
  int solves = 0;               ///< linear solves used to settle the active set (all Newton iterations)
  /// Rods those solves solved, summed over them: solves times rods for whole-system solves;
  /// fewer where rods do not couple and only the rods whose contacts changed are solved again.
  long long rod_solves = 0;
  bool converged = true;        ///< false when the active set hit ContactSettings::max_iterations
  double max_penetration = 0.0; ///< deepest penetration of a free vertex's surface at the step end [m], >= 0
  double max_penetration_fraction = 0.0;  ///< the largest penetration / radius over free vertices, >= 0
  /// The largest |friction impulse| / (mu lambda_n) over the step's contacts (per vertex, the
  /// bound summed over its colliders): at most 1 (to round-off) when friction stays in the
  /// Coulomb cone. Contacts with no friction impulse count 0; friction where mu lambda_n <= 0,
  /// infinity.
  double max_friction_ratio = 0.0;
  /// The largest amount by which a contact's friction force exceeds mu times its normal force,
  /// (|friction impulse| - mu lambda_n) / h over the step's vertices [N], >= 0: zero when
  /// friction stays in the cone. (A force, not the ratio: contacts pressed by nothing, whose
  /// round-off friction makes the ratio infinite, count as the round-off they are.)
  double max_friction_excess = 0.0;

  int contact_count() const {
    int total = 0;
    for (const auto& c : colliders) total += c.contacts;
    return total;
  }
};

}  // namespace bristle
