#include "bristle/render/occlusion.hpp"

#include <algorithm>
#include <cmath>

namespace bristle {

namespace {

constexpr double kHalfPi = 1.57079632679489661923;

}  // namespace

double segment_occlusion(const Vec3& p, const Vec3& n, const Vec3& a, const Vec3& b, double radius) {
  const Vec3 axis = b - a;
  const double length = axis.norm();
  if (!(radius > 0.0)) return 0.0;
  if (!(length > 0.0)) {
    // A sphere of radius r at distance d: solid angle pi r^2 / d^2 seen at cos(theta).
    const Vec3 w = a - p;
    const double d = w.norm();
    if (d <= radius) return 1.0;
    return std::clamp(radius * radius / (d * d) * std::max(0.0, n.dot(w) / d), 0.0, 1.0);
  }
  const Vec3 t = axis / length;
  const double s0 = (p - a).dot(t);             // the foot of the perpendicular, along the axis
  const Vec3 w = a + s0 * t - p;                // from p to the axis, across it
  const double d = w.norm();
  if (d <= radius) {
    // Inside the tube's cross-section: covered when within the segment (with its round ends).
    return (s0 >= -radius && s0 <= length + radius) ? 1.0 : 0.0;
  }
  // Cross-section: the normal's part across the axis, and the angle of the axis from it.
  const Vec3 n_across = n - n.dot(t) * t;
  const double m = n_across.norm();
  double across = 0.0;
  if (m > 1e-9) {
    const double phi0 = std::acos(std::clamp(w.dot(n_across) / (d * m), -1.0, 1.0));
    const double alpha = std::asin(std::min(1.0, radius / d));
    const double hi = std::min(phi0 + alpha, kHalfPi), lo = std::max(phi0 - alpha, -kHalfPi);
    // The strip is tilted out of the normal's plane by the axis' slope: its factor scales by m.
    across = hi > lo ? 0.5 * (std::sin(hi) - std::sin(lo)) * m : 0.0;
  }
  const double ua = -s0, ub = length - s0;
  const double along = 0.5 * (ub / std::sqrt(ub * ub + d * d) - ua / std::sqrt(ua * ua + d * d));
  return std::clamp(across * along, 0.0, 1.0);
}

}  // namespace bristle
