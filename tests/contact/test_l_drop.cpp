// Seed 003's second case, which XPBD failed (particles faster than 70 m/s, explosion): a 2D
// three-vertex L of stiff rods with a 90 degree rest angle, dropped from 2 m onto the ground
// with friction, at dt = 1/60 s. Implicit Euler with contact filtered into the same solve
// must keep every vertex below 1.05 times the free-fall impact speed sqrt(2 g h), the angle
// within 0.1 rad of 90 degrees, the edges within 1% of their length, and bring the L to rest
// on the ground without sinking into it.
//
// Three orientations: standing on its horizontal leg (two vertices land together), turned
// 0.3 rad (one end lands first and the L swings down onto its leg), and turned -0.6 rad (the
// corner lands first; the L rocks on it, tips over and falls onto a leg). The speed bound
// holds with margin: the fastest vertex is the falling one just before impact (backward
// Euler's free fall is slightly slower than the exact one).

#include <cmath>

#include <doctest/doctest.h>
#include <Eigen/Geometry>

#include "contact/contact_test_support.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

constexpr double kEdge = 0.5;      // [m], seed 003's rod length
constexpr double kRadius = 0.01;   // [m]
constexpr double kDropHeight = 2.0;  // [m], from the ground to the lowest point of the rod's surface
constexpr double kDt = 1.0 / 60.0;

/// Interior angle at the corner (pi/2 at rest) [rad].
double corner_angle(const std::vector<Vec3>& p) {
  const Vec3 u = p[0] - p[1], w = p[2] - p[1];
  return std::atan2(u.cross(w).norm(), u.dot(w));
}

struct DropResult {
  RunSummary summary;
  double worst_angle_error = 0.0;   // [rad]
  double worst_stretch = 0.0;       // relative
  std::vector<Vec3> final_positions;
  double final_speed = 0.0;
};

/// Drops the L turned by `turn` [rad] about z (0: standing on its horizontal leg) for
/// `duration` seconds.
DropResult drop_l(double turn, double friction, int newton_iterations, double duration) {
  const Mat3 r = Eigen::AngleAxisd(turn, Vec3::UnitZ()).toRotationMatrix();
  std::vector<Vec3> vertices = l_shape_vertices(kEdge);
  for (Vec3& p : vertices) p = r * p;
  double lowest = vertices[0].y();
  for (const Vec3& p : vertices) lowest = std::min(lowest, p.y());
  for (Vec3& p : vertices) p.y() += kDropHeight + kRadius - lowest;

  const Material stiff = make_material(7850.0, kRadius, 2.0e11);  // steel
  Model model = single_rod_model(2, rod_from_vertices(vertices, 2, {}, stiff, RestShape::Initial, "L"),
                                 earth_gravity());
  model.colliders.push_back(plane_collider(Vec3::Zero(), Vec3::UnitY(), friction));
  SolverSettings settings;
  settings.newton_iterations = newton_iterations;
  ImplicitEuler integrator(model, settings);
  State state = initial_state(model);

  DropResult result;
  const std::vector<double> rest = model.rods[0].rest_lengths;
  result.summary = run_steps(model, integrator, state, kDt, static_cast<int>(std::lround(duration / kDt)),
                             [&](const State& s, const StepReport&) {
                               const std::vector<Vec3> p = rod_positions(model, s.positions, 0);
                               result.worst_angle_error = std::max(
                                   result.worst_angle_error, std::abs(corner_angle(p) - 0.5 * kPi));
                               for (int j = 0; j < 2; ++j)
                                 result.worst_stretch = std::max(
                                     result.worst_stretch, std::abs((p[j + 1] - p[j]).norm() / rest[j] - 1.0));
                             });
  result.final_positions = rod_positions(model, state.positions, 0);
  result.final_speed = max_speed(model, state.velocities);
  return result;
}

void check_drop(const DropResult& r) {
  const double impact_speed = std::sqrt(2.0 * 9.81 * kDropHeight);
  INFO("failure: " << r.summary.failure);
  REQUIRE(r.summary.ok);
  CHECK(r.summary.active_set_converged);
  CHECK(r.summary.max_speed <= 1.05 * impact_speed);
  CHECK(r.worst_angle_error <= 0.1);
  CHECK(r.worst_stretch <= 0.01);
  CHECK(r.summary.max_penetration_fraction < 0.1);
  // At rest on the ground: still, every vertex above the ground, the lowest one touching it.
  CHECK(r.final_speed < 1e-3);
  double lowest = 1e9;
  for (const Vec3& p : r.final_positions) lowest = std::min(lowest, p.y());
  CHECK(lowest >= 0.9 * kRadius);
  CHECK(lowest <= 1.01 * kRadius);
}

}  // namespace

TEST_CASE("seed 003: stiff L dropped 2 m onto the ground at dt = 1/60 s, standing on a leg") {
  const DropResult r = drop_l(0.0, 0.5, 1, 2.0);
  check_drop(r);
  // It lands on its horizontal leg and stays upright.
  CHECK(r.final_positions[0].y() == doctest::Approx(kRadius).epsilon(0.01));
  CHECK(r.final_positions[1].y() == doctest::Approx(kRadius).epsilon(0.01));
  CHECK(r.final_positions[2].y() == doctest::Approx(kRadius + kEdge).epsilon(0.01));
}

TEST_CASE("seed 003: stiff L dropped 2 m onto the ground at dt = 1/60 s, one end first") {
  check_drop(drop_l(0.3, 0.5, 1, 3.0));
}

TEST_CASE("seed 003: stiff L dropped 2 m onto the ground at dt = 1/60 s, corner first, tipping over") {
  check_drop(drop_l(-0.6, 0.5, 1, 5.0));
}
