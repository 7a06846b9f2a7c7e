#pragma once
/// Continuous collision detection between two capsules moving linearly over a step: how far
/// along the motion they can go and stay apart (docs/contact.md, "Rod-rod contact").
///
/// Additive CCD (Li, Kaufman and Jiang, "Codimensional Incremental Potential Contact",
/// SIGGRAPH 2021, section 5): with the four end points' displacements p_i, their mean removed
/// (a common translation does not bring the segments closer), no point of one segment
/// approaches any point of the other faster than l_p = max(|p_0|, |p_1|) + max(|p_2|, |p_3|)
/// per unit of the step's parameter. So after advancing by (gap / l_p) the gap is still >= 0;
/// advancing by 0.9 of that, again and again, approaches the first touch from below without
/// ever passing it, and stops once the gap falls below `keep` times the gap at the start.
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
