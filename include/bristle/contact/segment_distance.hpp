#pragma once
/// Closest distance between two 3D segments: the narrow phase of rod-rod overlap checks
/// (contact/rod_overlaps.hpp) and of future rod-rod contact.
///
/// Segment P runs from p0 to p1, P(s) = p0 + s (p1 - p0); segment Q from q0 to q1,
/// Q(t) = q0 + t (q1 - q0); s, t in [0, 1]. The result minimises |P(s) - Q(t)| over the unit
/// square. It is exact (up to rounding) for every configuration: skew, crossing, parallel,
/// collinear (overlapping or apart), and degenerate segments of zero length (a point), on
/// one side or both. Where the minimiser is not unique (parallel segments side by side) it
/// returns one of them, always the same for the same input.

#include "bristle/math/types.hpp"

namespace bristle {

struct SegmentDistance {
  double distance = 0.0;  ///< |P(s) - Q(t)| [m]
  double s = 0.0;         ///< closest parameter on P, in [0, 1]
  double t = 0.0;         ///< closest parameter on Q, in [0, 1]
};

/// The closest points of segments p0-p1 and q0-q1 and their distance. Inputs finite.
SegmentDistance segment_distance(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1);

/// A lower bound on the distance of segments p0-p1 and q0-q1, a few operations against
/// segment_distance's five candidates: the larger gap between their projections on the line
/// through their midpoints and on its part across P (any unit axis u gives one, since
/// |x - y| >= |(x - y) . u|), less a margin
/// well above the rounding of both this and segment_distance, so that segment_distance's
/// result is never below it. Tight for segments side by side (the projections are points),
/// zero for segments that cross or whose midpoints meet. For a broad phase to drop far pairs
/// without their exact distance.
double segment_distance_lower_bound(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1);

/// The parameter t in [0, 1] of the point of segment a-b closest to x (0 when a == b).
double closest_segment_parameter(const Vec3& x, const Vec3& a, const Vec3& b);

}  // namespace bristle
