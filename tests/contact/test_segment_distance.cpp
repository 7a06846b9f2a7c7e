// Segment-segment distance: known configurations (skew, crossing, parallel, collinear,
// degenerate), then random pairs of every kind against a brute-force search.

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include <doctest/doctest.h>

#include "bristle/contact/segment_distance.hpp"

using namespace bristle;

namespace {

Vec3 point_at(const Vec3& a, const Vec3& b, double u) { return a + u * (b - a); }

/// |P(s) - Q(t)| of the returned parameters: the distance must be that of real points.
double realised(const SegmentDistance& d, const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1) {
  return (point_at(p0, p1, d.s) - point_at(q0, q1, d.t)).norm();
}

/// Brute force, independent of the routine under test: P sampled at n + 1 evenly spaced
/// points, each against Q by the projection onto Q's line clamped to the segment (the
/// closest point of a segment to a point). The minimum over the samples is never below the
/// true distance and at most |p1 - p0| / (2 n) above it (the distance to Q is
/// |p1 - p0|-Lipschitz in s).
double brute_force(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, int n) {
  const Vec3 axis = q1 - q0;
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i <= n; ++i) {
    const Vec3 x = point_at(p0, p1, static_cast<double>(i) / n);
    double t = axis.squaredNorm() > 0.0 ? (x - q0).dot(axis) / axis.squaredNorm() : 0.0;
    t = std::min(1.0, std::max(0.0, t));
    best = std::min(best, (x - point_at(q0, q1, t)).norm());
  }
  return best;
}

void check_against_brute_force(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1,
                               const std::string& kind) {
  CAPTURE(kind);
  CAPTURE(p0.transpose());
  CAPTURE(p1.transpose());
  CAPTURE(q0.transpose());
  CAPTURE(q1.transpose());
  const SegmentDistance d = segment_distance(p0, p1, q0, q1);
  const double scale = 1.0 + (p1 - p0).norm() + (q1 - q0).norm() + (q0 - p0).norm();
  CHECK(d.s >= 0.0);
  CHECK(d.s <= 1.0);
  CHECK(d.t >= 0.0);
  CHECK(d.t <= 1.0);
  CHECK(std::abs(realised(d, p0, p1, q0, q1) - d.distance) <= 1e-14 * scale);
  const int n = 2000;
  const double brute = brute_force(p0, p1, q0, q1, n);
  // Never above the brute force (it is the minimum), and not below it by more than the
  // sampling's bound (it is a real distance).
  CHECK(d.distance <= brute + 1e-12 * scale);
  CHECK(d.distance >= brute - (p1 - p0).norm() / (2.0 * n) - 1e-12 * scale);
  // Symmetric: the same distance with the segments swapped or reversed.
  CHECK(segment_distance(q0, q1, p0, p1).distance == doctest::Approx(d.distance).epsilon(1e-12).scale(scale));
  CHECK(segment_distance(p1, p0, q1, q0).distance == doctest::Approx(d.distance).epsilon(1e-12).scale(scale));
}

}  // namespace

TEST_CASE("segment distance: known configurations") {
  SUBCASE("perpendicular skew segments crossing over each other") {
    const auto d = segment_distance(Vec3(-1, 0, 0), Vec3(1, 0, 0), Vec3(0, -1, 0.5), Vec3(0, 1, 0.5));
    CHECK(d.distance == doctest::Approx(0.5));
    CHECK(d.s == doctest::Approx(0.5));
    CHECK(d.t == doctest::Approx(0.5));
  }
  SUBCASE("crossing in a plane: distance zero at the crossing") {
    const auto d = segment_distance(Vec3(0, 0, 0), Vec3(2, 2, 0), Vec3(0, 2, 0), Vec3(2, 0, 0));
    CHECK(d.distance == doctest::Approx(0.0).scale(1.0));
    CHECK(d.s == doctest::Approx(0.5));
    CHECK(d.t == doctest::Approx(0.5));
  }
  SUBCASE("skew, closest at an endpoint of one and inside the other") {
    // Q's line passes under P's line at x = 3, beyond P's end at x = 1: the closest point
    // of P is p1, and of Q the foot of p1 on it.
    const auto d = segment_distance(Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(3, -1, 1), Vec3(3, 1, 1));
    CHECK(d.s == 1.0);
    CHECK(d.t == doctest::Approx(0.5));
    CHECK(d.distance == doctest::Approx(std::sqrt(4.0 + 1.0)));
  }
  SUBCASE("skew, closest at an endpoint of each") {
    const auto d = segment_distance(Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(2, 1, 0), Vec3(3, 5, 0));
    CHECK(d.s == 1.0);
    CHECK(d.t == 0.0);
    CHECK(d.distance == doctest::Approx(std::sqrt(2.0)));
  }
  SUBCASE("parallel, side by side: the separation") {
    const auto d = segment_distance(Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.25, 0.3, 0), Vec3(2, 0.3, 0));
    CHECK(d.distance == doctest::Approx(0.3));
    CHECK(std::abs((point_at(Vec3(0, 0, 0), Vec3(1, 0, 0), d.s) - point_at(Vec3(0.25, 0.3, 0), Vec3(2, 0.3, 0), d.t)).x()) < 1e-15);
  }
  SUBCASE("parallel and opposite, not side by side: endpoint to endpoint") {
    const auto d = segment_distance(Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(4, 0.3, 0), Vec3(2, 0.3, 0));
    CHECK(d.distance == doctest::Approx(std::hypot(1.0, 0.3)));
    CHECK(d.s == 1.0);
    CHECK(d.t == 1.0);
  }
  SUBCASE("collinear, overlapping: zero") {
    const auto d = segment_distance(Vec3(0, 0, 0), Vec3(0, 0, 2), Vec3(0, 0, 1), Vec3(0, 0, 3));
    CHECK(d.distance == 0.0);
  }
  SUBCASE("collinear, apart: the gap") {
    const auto d = segment_distance(Vec3(0, 0, 0), Vec3(1, 1, 1), Vec3(3, 3, 3), Vec3(2, 2, 2));
    CHECK(d.distance == doctest::Approx(std::sqrt(3.0)));
    CHECK(d.s == 1.0);
    CHECK(d.t == 1.0);
  }
  SUBCASE("sharing an endpoint") {
    const auto d = segment_distance(Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(1, 0, 0), Vec3(1, 1, 0));
    CHECK(d.distance == 0.0);
    CHECK(d.s == 1.0);
    CHECK(d.t == 0.0);
  }
  SUBCASE("a point against a segment, either way round") {
    const auto d = segment_distance(Vec3(0.5, 2, 0), Vec3(0.5, 2, 0), Vec3(0, 0, 0), Vec3(1, 0, 0));
    CHECK(d.distance == doctest::Approx(2.0));
    CHECK(d.s == 0.0);
    CHECK(d.t == doctest::Approx(0.5));
    const auto e = segment_distance(Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.5, 2, 0), Vec3(0.5, 2, 0));
    CHECK(e.distance == doctest::Approx(2.0));
    CHECK(e.s == doctest::Approx(0.5));
    CHECK(e.t == 0.0);
  }
  SUBCASE("two points") {
    const auto d = segment_distance(Vec3(1, 2, 3), Vec3(1, 2, 3), Vec3(4, 6, 3), Vec3(4, 6, 3));
    CHECK(d.distance == doctest::Approx(5.0));
    CHECK(d.s == 0.0);
    CHECK(d.t == 0.0);
  }
  SUBCASE("nearly parallel segments crossing at a tiny angle: zero, at the crossing") {
    // Angle 1e-9 rad: the endpoints are 5e-10 away from the other segment, the crossing in
    // the middle is at distance zero. Clamping without the interior point would miss it.
    const double angle = 1e-9;
    const Vec3 half(std::cos(angle / 2), std::sin(angle / 2), 0.0);
    const Vec3 other(std::cos(angle / 2), -std::sin(angle / 2), 0.0);
    const auto d = segment_distance(-half, half, -other, other);
    CHECK(d.distance < 1e-15);
    CHECK(d.s == doctest::Approx(0.5).epsilon(1e-6));
    CHECK(d.t == doctest::Approx(0.5).epsilon(1e-6));
  }
}

TEST_CASE("segment distance: random segments of every kind against brute force") {
  std::mt19937_64 rng(20240616);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  auto random_vector = [&] { return Vec3(uniform(rng), uniform(rng), uniform(rng)); };
  for (int k = 0; k < 300; ++k) {
    const Vec3 p0 = random_vector(), p1 = random_vector();
    const Vec3 q0 = random_vector(), q1 = random_vector();
    check_against_brute_force(p0, p1, q0, q1, "skew");
    // Parallel: Q is P's direction scaled (either sign), moved off the line.
    const double scale = 2.0 * uniform(rng);
    check_against_brute_force(p0, p1, q0, q0 + scale * (p1 - p0), "parallel");
    // Collinear: Q on P's line, overlapping or not.
    const double u0 = 2.0 * uniform(rng), u1 = 2.0 * uniform(rng);
    check_against_brute_force(p0, p1, point_at(p0, p1, u0), point_at(p0, p1, u1), "collinear");
    // Crossing: both through a common point inside each.
    const Vec3 x = random_vector();
    const Vec3 dp = random_vector(), dq = random_vector();
    const double a = 0.5 * (uniform(rng) + 1.0), b = 0.5 * (uniform(rng) + 1.0);
    check_against_brute_force(x - a * dp, x + (1 - a) * dp, x - b * dq, x + (1 - b) * dq, "crossing");
    // 2D (z = 0), as in 2D scenes.
    Vec3 p2 = p0, p3 = p1, q2 = q0, q3 = q1;
    p2.z() = p3.z() = q2.z() = q3.z() = 0.0;
    check_against_brute_force(p2, p3, q2, q3, "planar");
    // Degenerate: a point against a segment, a segment against a point, two points.
    check_against_brute_force(p0, p0, q0, q1, "point-segment");
    check_against_brute_force(p0, p1, q0, q0, "segment-point");
    check_against_brute_force(p0, p0, q0, q0, "point-point");
    // Nearly parallel: Q a tiny rotation of a shifted copy of P.
    const Vec3 tiny = 1e-9 * random_vector();
    check_against_brute_force(p0, p1, q0 + tiny, q0 + (p1 - p0) - tiny, "nearly parallel");
  }
}

TEST_CASE("segment distance: closest_segment_parameter clamps and handles a point") {
  CHECK(closest_segment_parameter(Vec3(0.25, 1, 0), Vec3(0, 0, 0), Vec3(1, 0, 0)) == doctest::Approx(0.25));
  CHECK(closest_segment_parameter(Vec3(-3, 1, 0), Vec3(0, 0, 0), Vec3(1, 0, 0)) == 0.0);
  CHECK(closest_segment_parameter(Vec3(3, 1, 0), Vec3(0, 0, 0), Vec3(1, 0, 0)) == 1.0);
  CHECK(closest_segment_parameter(Vec3(3, 1, 0), Vec3(1, 1, 1), Vec3(1, 1, 1)) == 0.0);
}

TEST_CASE("segment distance: the lower bound is never above the distance, and tight side by side") {
  std::mt19937_64 rng(20261203);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  auto random_vector = [&] { return Vec3(uniform(rng), uniform(rng), uniform(rng)); };
  int positive = 0;
  for (int k = 0; k < 2000; ++k) {
    // Coordinates far from the origin (a brush 1 m from the scene's origin, 1 mm segments)
    // and near it, where rounding of the projections matters most relative to the gaps.
    const double size = k % 2 == 0 ? 1e-3 : 1.0;
    const Vec3 offset = k % 4 < 2 ? Vec3::Zero() : Vec3(1.0, -0.7, 0.3);
    const Vec3 p0 = offset + size * random_vector(), p1 = offset + size * random_vector();
    Vec3 q0 = offset + size * random_vector(), q1 = offset + size * random_vector();
    if (k % 3 == 0) {
      // Side by side: Q is P moved off by a random vector (parallel segments).
      const Vec3 shift = size * random_vector();
      q0 = p0 + shift;
      q1 = p1 + shift;
    } else if (k % 3 == 1 && k % 5 == 0) {
      // Nearly parallel: Q is P moved and turned a little.
      const Vec3 shift = size * random_vector();
      q0 = p0 + shift;
      q1 = p1 + shift + 0.01 * size * random_vector();
    }
    const double bound = segment_distance_lower_bound(p0, p1, q0, q1);
    const double exact = segment_distance(p0, p1, q0, q1).distance;
    CAPTURE(k);
    CHECK(bound >= 0.0);
    CHECK(bound <= exact);
    if (bound > 0.0) ++positive;
  }
  // A bound that is always zero would pass the check above: most random pairs are apart.
  CHECK(positive > 500);
  // Two parallel segments side by side, 1 mm long, 0.5 mm apart, 1 m from the origin: the
  // projections on the axis between the midpoints are points, the bound the distance.
  const Vec3 base(1.0, 0.2, -0.4), along(0.6e-3, 0.8e-3, 0.0), across(0.0, 0.0, 0.5e-3);
  const double side = segment_distance_lower_bound(base, base + along, base + across, base + across + along);
  CHECK(side == doctest::Approx(0.5e-3).epsilon(1e-8));
  CHECK(side <= 0.5e-3);
  // The same neighbours shifted along their length by 0.7 of it, and one turned a little
  // (a tilted brush's neighbouring bristles): the line through the midpoints runs mostly
  // along them, the part of it across P does not.
  const Vec3 shifted = base + across + 0.7 * along;
  const double along_side = segment_distance_lower_bound(base, base + along, shifted, shifted + along);
  CHECK(along_side == doctest::Approx(0.5e-3).epsilon(1e-8));
  CHECK(along_side <= 0.5e-3);
  const Vec3 turned = along + Vec3(0.0, 0.0, 0.02e-3);
  const double turned_side = segment_distance_lower_bound(base, base + along, shifted, shifted + turned);
  CHECK(turned_side <= segment_distance(base, base + along, shifted, shifted + turned).distance);
  CHECK(turned_side > 0.45e-3);
  // Crossing segments: zero.
  CHECK(segment_distance_lower_bound(Vec3(-1, 0, 0), Vec3(1, 0, 0), Vec3(0, -1, 0), Vec3(0, 1, 0)) == 0.0);
}
