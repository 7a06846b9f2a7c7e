#include "bristle/contact/capsule_ccd.hpp"

#include <algorithm>

#include "bristle/contact/segment_distance.hpp"

namespace bristle {

double capsule_time_of_impact(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, const Vec3& dp0,
                              const Vec3& dp1, const Vec3& dq0, const Vec3& dq1, double reach, double keep) {
  // Past this many advances the motion is taken only as far as it got (still safe): a pair
  // grazing at a tiny gap while moving fast would otherwise creep in ever smaller advances.
  // (A pair sliding along at a gap g advances by about g / slide per round: 1000 rounds cover
  // a slide of 1000 gaps.)
  constexpr int kMaxAdvances = 1000;
  const Vec3 mean = 0.25 * (dp0 + dp1 + dq0 + dq1);
  const Vec3 a0 = dp0 - mean, a1 = dp1 - mean, b0 = dq0 - mean, b1 = dq1 - mean;
  const double speed = std::max(a0.norm(), a1.norm()) + std::max(b0.norm(), b1.norm());
  auto gap_at = [&](double t) {
    return segment_distance(p0 + t * dp0, p1 + t * dp1, q0 + t * dq0, q1 + t * dq1).distance - reach;
  };
  const double start_gap = gap_at(0.0);
  if (!(start_gap > 0.0)) return 0.0;
  if (!(speed > 0.0)) return 1.0;
  const double floor = keep * start_gap;
  double t = 0.0;
  double advance = (1.0 - keep) * start_gap / speed;
  for (int k = 0; k < kMaxAdvances; ++k) {
    const double next = std::min(1.0, t + advance);
    const double gap = gap_at(next);
    // The first advance keeps the gap at least `keep` times its start by the bound itself
    // (head-on, exactly that, up to rounding): only later ones can end below the floor.
    if (k > 0 && gap < floor) return t;
    if (next >= 1.0) return 1.0;
    t = next;
    advance = 0.9 * gap / speed;
  }
  return t;
}

}  // namespace bristle
