#include "bristle/contact/capsule_ccd.hpp"

#include <algorithm>

#include "bristle/contact/segment_distance.hpp"

namespace bristle {

double capsule_time_of_impact(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, const Vec3& dp0,
                              const Vec3& dp1, const Vec3& dq0, const Vec3& dq1, double reach, double keep) {
  // Past this many advances the motion is taken only as far as it got (still safe): a pair
  // whose bounds are both loose (rotating fast at a tiny gap) would otherwise creep on in ever
  // smaller advances.
  constexpr int kMaxAdvances = 1000;
  const Vec3 mean = 0.25 * (dp0 + dp1 + dq0 + dq1);
  const Vec3 a0 = dp0 - mean, a1 = dp1 - mean, b0 = dq0 - mean, b1 = dq1 - mean;
  const double speed = std::max(a0.norm(), a1.norm()) + std::max(b0.norm(), b1.norm());
  auto closest_at = [&](double t) {
    return segment_distance(p0 + t * dp0, p1 + t * dp1, q0 + t * dq0, q1 + t * dq1);
  };
  SegmentDistance closest = closest_at(0.0);
  const double start_gap = closest.distance - reach;
  if (!(start_gap > 0.0)) return 0.0;
  if (!(speed > 0.0)) return 1.0;
  const double floor = keep * start_gap;
  double t = 0.0;
  double gap = start_gap;
  for (int k = 0; k < kMaxAdvances; ++k) {
    // The gap falls no faster than the smaller of two rates (docs/contact.md, "Continuous
    // collision detection"): `speed` bounds every point pair's relative motion, and the
    // separating plane's rate bounds the motion along the closest points' normal n, since
    // n . (P - Q) >= d for all points of two separated segments and each point moves as a
    // convex combination of its segment's ends. The plane does not charge sliding.
    double rate = speed;
    if (closest.distance > 0.0) {
      // P* - Q* from differences, not from absolute positions: its rounding is then relative to
      // the segments' size and motion, not to their distance from the origin.
      const Vec3 between = (p0 - q0) + t * (dp0 - dq0) + closest.s * ((p1 - p0) + t * (dp1 - dp0)) -
                           closest.t * ((q1 - q0) + t * (dq1 - dq0));
      const Vec3 n = between / closest.distance;
      const double approach = std::max(n.dot(dq0), n.dot(dq1)) - std::min(n.dot(dp0), n.dot(dp1));
      rate = std::min(rate, std::max(approach, 0.0));
    }
    if (!(rate > 0.0)) return 1.0;
    // 0.99 of the bound: the gap at the next point keeps a margin above the floor that
    // rounding cannot eat, and a head-on approach reaches it in two or three rounds.
    const double next = std::min(1.0, t + 0.99 * (gap - floor) / rate);
    closest = closest_at(next);
    const double next_gap = closest.distance - reach;
    if (next_gap < floor) return t;  // only by rounding: both bounds keep it above
    if (next >= 1.0) return 1.0;
    t = next;
    gap = next_gap;
    if (gap - floor <= 1e-3 * (start_gap - floor)) return t;
  }
  return t;
}

}  // namespace bristle
