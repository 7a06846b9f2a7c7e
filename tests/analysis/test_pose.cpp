#include <cmath>
#include <random>

#include <doctest/doctest.h>

#include "bristle/analysis/pose.hpp"

using namespace bristle;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// Signed turning angle at x1 about +z (Bristle's 2D convention).
double turning_2d(const Vec3& x0, const Vec3& x1, const Vec3& x2) {
  const Vec3 a = x1 - x0, b = x2 - x1;
  return std::atan2(a.x() * b.y() - a.y() * b.x(), a.dot(b));
}

/// The closest reachable tip to a target, by brute force over both joint angles.
double brute_force_miss(const Vec2& root, double d1, double d2, const Vec2& target) {
  double best = 1e300;
  const int n = 400;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double t1 = 2 * kPi * i / n, t2 = 2 * kPi * j / n;
      const Vec2 tip = root + d1 * Vec2(std::cos(t1), std::sin(t1)) + d2 * Vec2(std::cos(t1 + t2), std::sin(t1 + t2));
      best = std::min(best, (tip - target).norm());
    }
  return best;
}

}  // namespace

TEST_CASE("analysis pose: reachable targets satisfy the law of cosines, both bend directions") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0), len(0.2, 1.5);
  for (int trial = 0; trial < 200; ++trial) {
    const Vec2 root(u(rng), u(rng));
    const double d1 = len(rng), d2 = len(rng);
    // A reachable distance strictly inside the annulus.
    const double lo = std::abs(d1 - d2), hi = d1 + d2;
    const double distance = lo + (hi - lo) * (0.05 + 0.9 * (0.5 + 0.5 * u(rng)));
    const double direction = kPi * u(rng);
    const Vec2 target = root + distance * Vec2(std::cos(direction), std::sin(direction));
    for (int bend : {+1, -1}) {
      CAPTURE(trial);
      CAPTURE(bend);
      const TwoBonePose p = solve_two_bone_2d(root, d1, d2, target, bend);
      const Vec3 x0(root.x(), root.y(), 0.0);
      CHECK(p.reach == PoseReach::Reached);
      CHECK_FALSE(p.clamped());
      CHECK(p.miss < 1e-12);
      CHECK((p.x1 - x0).norm() == doctest::Approx(d1).epsilon(1e-12));
      CHECK((p.x2 - p.x1).norm() == doctest::Approx(d2).epsilon(1e-12));
      CHECK(p.x1.z() == 0.0);
      // cos theta2 = (D^2 - d1^2 - d2^2) / (2 d1 d2), signed as asked.
      CHECK(std::cos(p.theta2) == doctest::Approx((distance * distance - d1 * d1 - d2 * d2) / (2 * d1 * d2)).epsilon(1e-10));
      CHECK(p.theta2 * bend > 0.0);
      CHECK(turning_2d(x0, p.x1, p.x2) == doctest::Approx(p.theta2).epsilon(1e-10));
      // theta1 is the first bone's direction.
      CHECK(std::cos(p.theta1) * d1 == doctest::Approx(p.x1.x() - root.x()).epsilon(1e-10));
      CHECK(std::sin(p.theta1) * d1 == doctest::Approx(p.x1.y() - root.y()).epsilon(1e-10));
    }
    // The two bend directions mirror each other across the root-target line.
    const TwoBonePose a = solve_two_bone_2d(root, d1, d2, target, +1);
    const TwoBonePose b = solve_two_bone_2d(root, d1, d2, target, -1);
    const Vec2 axis = (target - root).normalized();
    const Vec2 ra = a.x1.head<2>() - root, rb = b.x1.head<2>() - root;
    CHECK(ra.dot(axis) == doctest::Approx(rb.dot(axis)).epsilon(1e-10));
    CHECK(ra.x() * axis.y() - ra.y() * axis.x() == doctest::Approx(-(rb.x() * axis.y() - rb.y() * axis.x())).epsilon(1e-10));
  }
}

TEST_CASE("analysis pose: out-of-reach targets clamp to the closest reachable point") {
  const Vec2 root(0.3, -0.2);
  SUBCASE("too far: stretched straight towards the target") {
    const Vec2 target = root + Vec2(2.0, 1.5);  // D = 2.5 > 1.0 + 0.6
    const TwoBonePose p = solve_two_bone_2d(root, 1.0, 0.6, target, +1);
    CHECK(p.reach == PoseReach::TooFar);
    CHECK(p.clamped());
    CHECK(p.theta2 == doctest::Approx(0.0));
    CHECK(p.miss == doctest::Approx(2.5 - 1.6));
    CHECK((p.x2.head<2>() - root).normalized().dot((target - root).normalized()) == doctest::Approx(1.0));
    CHECK(p.miss <= brute_force_miss(root, 1.0, 0.6, target) + 1e-12);
  }
  SUBCASE("too near: folded back, d1 > d2 and d1 < d2") {
    for (auto [d1, d2] : {std::pair{1.0, 0.6}, std::pair{0.5, 1.2}}) {
      const Vec2 target = root + Vec2(0.1, -0.15);  // D = 0.18 < |d1 - d2|
      for (int bend : {+1, -1}) {
        const TwoBonePose p = solve_two_bone_2d(root, d1, d2, target, bend);
        CHECK(p.reach == PoseReach::TooNear);
        CHECK(std::abs(p.theta2) == doctest::Approx(kPi));
        CHECK(p.miss == doctest::Approx(std::abs(d1 - d2) - (target - root).norm()).epsilon(1e-9));
        CHECK(p.miss <= brute_force_miss(root, d1, d2, target) + 1e-12);
      }
    }
  }
  SUBCASE("target at the root with equal bones: reached by folding") {
    const TwoBonePose p = solve_two_bone_2d(root, 0.7, 0.7, root, +1);
    CHECK(p.reach == PoseReach::Reached);
    CHECK(p.miss < 1e-12);
  }
}

TEST_CASE("analysis pose: zero-length bones") {
  const Vec2 root(0.0, 0.0), target(0.3, 0.4);  // D = 0.5
  SUBCASE("first bone zero: x1 at the root, the second points at the target") {
    const TwoBonePose p = solve_two_bone_2d(root, 0.0, 0.8, target, +1);
    CHECK(p.x1.norm() == 0.0);
    CHECK(p.theta2 == 0.0);
    CHECK(p.reach == PoseReach::TooNear);
    CHECK((p.x2.head<2>() - 0.8 * target.normalized()).norm() < 1e-12);
    CHECK(std::isfinite(p.theta1));
  }
  SUBCASE("second bone zero, reachable exactly at distance d1") {
    const TwoBonePose p = solve_two_bone_2d(root, 0.5, 0.0, target, -1);
    CHECK(p.reach == PoseReach::Reached);
    CHECK(p.miss < 1e-12);
    CHECK((p.x1 - p.x2).norm() == 0.0);
  }
  SUBCASE("second bone zero, too far") {
    const TwoBonePose p = solve_two_bone_2d(root, 0.2, 0.0, target, +1);
    CHECK(p.reach == PoseReach::TooFar);
    CHECK(p.miss == doctest::Approx(0.3));
  }
  SUBCASE("both zero: everything at the root") {
    const TwoBonePose p = solve_two_bone_2d(root, 0.0, 0.0, target, +1);
    CHECK(p.x1.norm() == 0.0);
    CHECK(p.x2.norm() == 0.0);
    CHECK(p.reach == PoseReach::TooFar);
    CHECK(p.miss == doctest::Approx(0.5));
  }
  SUBCASE("target at the root, zero-length bones: no NaN") {
    const TwoBonePose p = solve_two_bone_2d(root, 0.0, 0.0, root, +1);
    CHECK(p.reach == PoseReach::Reached);
    CHECK(p.x2.allFinite());
  }
}

TEST_CASE("analysis pose: 3D, the turn is counter-clockwise about the bend normal") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 100; ++trial) {
    const Vec3 root(u(rng), u(rng), u(rng));
    const Vec3 direction = Vec3(u(rng), u(rng), u(rng)).normalized();
    const Vec3 normal(u(rng), u(rng), u(rng));
    const double d1 = 0.8, d2 = 0.5, distance = 0.9;
    const Vec3 target = root + distance * direction;
    const TwoBonePose p = solve_two_bone(root, d1, d2, target, normal);
    CAPTURE(trial);
    CHECK(p.reach == PoseReach::Reached);
    CHECK(p.miss < 1e-12);
    CHECK((p.x1 - root).norm() == doctest::Approx(d1));
    CHECK((p.x2 - p.x1).norm() == doctest::Approx(d2));
    const Vec3 turn = (p.x1 - root).cross(p.x2 - p.x1);
    CHECK(turn.dot(normal) > 0.0);
    // The elbow lies in the plane through the root-target line perpendicular to normal's
    // component across that line.
    const Vec3 n = (normal - normal.dot(direction) * direction).normalized();
    CHECK(std::abs((p.x1 - root).dot(n)) < 1e-12);
    CHECK(std::cos(p.theta2) == doctest::Approx((distance * distance - d1 * d1 - d2 * d2) / (2 * d1 * d2)));
  }
  // A normal along the root-target line cannot pick a plane: any is used, and it is said.
  const TwoBonePose p = solve_two_bone(Vec3::Zero(), 0.8, 0.5, Vec3(0.9, 0, 0), Vec3::UnitX());
  CHECK(p.normal_was_degenerate);
  CHECK(p.miss < 1e-12);
  // The 2D solver is the 3D one about +-z.
  const TwoBonePose q2 = solve_two_bone_2d(Vec2(0, 0), 0.8, 0.5, Vec2(0.5, 0.6), -1);
  const TwoBonePose q3 = solve_two_bone(Vec3::Zero(), 0.8, 0.5, Vec3(0.5, 0.6, 0), -Vec3::UnitZ());
  CHECK((q2.x1 - q3.x1).norm() < 1e-15);
}
