#pragma once
/// Continuous collision detection between two capsules moving linearly over a step: how far
/// along the motion they can go and stay apart (docs/contact.md, "Rod-rod contact").
///
/// Conservative advancement: from the start, advance along the motion by as much as a lower
/// bound on the gap allows, recompute the gap there, and repeat, approaching the first touch
/// from below without ever passing it; stop once the gap is down to `keep` times its start.
/// Two bounds on how fast the gap can fall, per unit of the step's parameter; each round takes
/// the smaller:
/// - additive CCD's (Li, Kaufman and Jiang, "Codimensional Incremental Potential Contact",
///   SIGGRAPH 2021, section 5): with the four end points' displacements p_i, their mean
///   removed, no point of one segment approaches any point of the other faster than
///   l_p = max(|p_0|, |p_1|) + max(|p_2|, |p_3|);
/// - the separating plane's (conservative advancement, Mirtich 1996, "Impulse-based dynamic
///   simulation of rigid body systems", PhD thesis, UC Berkeley, section 2.3): with n the unit
///   vector between the closest points, n . (P - Q) >= d for every point P of one segment and
///   Q of the other, and no point moves along n faster than its segment's ends do, so the
///   gap falls no faster than max_j n . q_j - min_i n . p_i. Sliding along each other costs
///   nothing under it, where l_p charges it as approach (docs/contact.md).
/// Exact for any motion that is linear in the parameter, and needs nothing but distances.

#include "bristle/math/types.hpp"

namespace bristle {

/// Segments p0-p1 and q0-q1 at the start of the motion, their displacements over it, and
/// R = r_p + r_q. Returns t in [0, 1]: at the start positions plus t times the displacements
/// the gap (centre-line distance - R) is at least `keep` times the start gap, and 1 when the
/// whole motion keeps it so. The start gap must be positive (0 is returned otherwise).
double capsule_time_of_impact(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, const Vec3& dp0,
                              const Vec3& dp1, const Vec3& dq0, const Vec3& dq1, double reach, double keep = 0.1);

}  // namespace bristle
