// Coulomb friction on a tilted plane: a rod resting on a plane tilted at alpha stays put when
// tan(alpha) < mu and slides down with acceleration g (sin alpha - mu cos alpha) otherwise.
// mu = 0.5: the threshold is atan(0.5) = 26.57 degrees; two angles below it and two above,
// in 2D and in 3D (rod across the slope and along it). And a plane that moves (a handle)
// carries a rod with it by static friction.

#include <cmath>

#include <doctest/doctest.h>

#include "contact/contact_test_support.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

constexpr double kG = 9.81;
constexpr double kMu = 0.5;
constexpr double kRadius = 0.002;

struct Slope {
  Vec3 normal;    // outward unit normal of the plane through the origin
  Vec3 downhill;  // unit, in the plane
};

Slope slope(double alpha) {
  return {Vec3(-std::sin(alpha), std::cos(alpha), 0.0), Vec3(-std::cos(alpha), -std::sin(alpha), 0.0)};
}

struct SlideResult {
  RunSummary summary;
  double displacement = 0.0;   // mean downhill displacement of the vertices at the end [m]
  double acceleration = 0.0;   // measured downhill acceleration [m/s^2]
  double max_normal_drift = 0.0;  // largest |distance to the plane - radius| [m]
};

/// A straight rod of 10 edges resting on the tilted plane (its surface touching it), along
/// the slope or across it (3D only), released at rest; `steps` steps of dt.
SlideResult slide(int dimension, double alpha, bool along_slope, double dt, int steps) {
  const Slope s = slope(alpha);
  const Vec3 direction = along_slope ? s.downhill : Vec3::UnitZ();
  const Vec3 start = kRadius * s.normal;
  const Material nylon = make_material(1140.0, kRadius, 3.0e9);
  Model model = single_rod_model(dimension, straight_rod(10, start, start + 0.1 * direction, dimension, {}, nylon),
                                 Vec3(0.0, -kG, 0.0));
  model.colliders.push_back(plane_collider(Vec3::Zero(), s.normal, kMu));
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  const VecX x_start = state.positions;

  SlideResult result;
  const int vertices = model.layout.vertex_count();
  auto mean_downhill = [&](const VecX& values) {
    double sum = 0.0;
    for (int g = 0; g < vertices; ++g) {
      Vec3 p = Vec3::Zero();
      p.head(dimension) = values.segment(model.layout.vertex_dof(g), dimension);
      sum += p.dot(s.downhill);
    }
    return sum / vertices;
  };
  // Backward Euler integrates a constant acceleration exactly in velocity (v_n = n h a), so
  // the acceleration is the change of the mean downhill velocity over the second half.
  double v_half = 0.0, t_half = 0.0;
  result.summary = run_steps(model, integrator, state, dt, steps, [&](const State& st, const StepReport&) {
    if (std::abs(st.time - 0.5 * steps * dt) < 0.5 * dt) {
      v_half = mean_downhill(st.velocities);
      t_half = st.time;
    }
    for (int g = 0; g < vertices; ++g) {
      Vec3 p = Vec3::Zero();
      p.head(dimension) = st.positions.segment(model.layout.vertex_dof(g), dimension);
      result.max_normal_drift = std::max(result.max_normal_drift, std::abs(p.dot(s.normal) - kRadius));
    }
  });
  result.displacement = mean_downhill(state.positions - x_start);
  result.acceleration = (mean_downhill(state.velocities) - v_half) / (state.time - t_half);
  return result;
}

}  // namespace

TEST_CASE("friction: a rod on a plane tilted below atan(mu) stays put") {
  for (const int dimension : {2, 3})
    for (const double degrees : {15.0, 25.0})
      for (const bool along : {true, false}) {
        if (dimension == 2 && !along) continue;  // in 2D the rod lies in the slope's plane
        CAPTURE(dimension);
        CAPTURE(degrees);
        CAPTURE(along);
        const SlideResult r = slide(dimension, degrees * kPi / 180.0, along, 1.0 / 60.0, 60);
        REQUIRE(r.summary.ok);
        CHECK(r.summary.active_set_converged);
        CHECK(std::abs(r.displacement) < 1e-9);
        CHECK(r.max_normal_drift < 0.01 * kRadius);
        CHECK(r.summary.max_penetration_fraction < 0.1);
      }
}

TEST_CASE("friction: a rod on a plane tilted above atan(mu) slides at g (sin alpha - mu cos alpha)") {
  for (const int dimension : {2, 3})
    for (const double degrees : {30.0, 45.0})
      for (const bool along : {true, false}) {
        if (dimension == 2 && !along) continue;
        CAPTURE(dimension);
        CAPTURE(degrees);
        CAPTURE(along);
        const double alpha = degrees * kPi / 180.0;
        const double expected = kG * (std::sin(alpha) - kMu * std::cos(alpha));
        const SlideResult r = slide(dimension, alpha, along, 1.0 / 60.0, 60);
        REQUIRE(r.summary.ok);
        CHECK(r.summary.active_set_converged);
        CHECK(r.acceleration == doctest::Approx(expected).epsilon(0.05));
        // The displacement after t = 1 s agrees with backward Euler's x_n = h^2 a n (n + 1) / 2.
        CHECK(r.displacement == doctest::Approx(expected * (1.0 / 3600.0) * 60.0 * 61.0 / 2.0).epsilon(0.05));
        CHECK(r.max_normal_drift < 0.01 * kRadius);
        CHECK(r.summary.max_penetration_fraction < 0.1);
      }
}

TEST_CASE("friction: a frictionless plane lets the rod slide at g sin alpha") {
  // mu = 0 is the Slide state from the start (no sticking constraint at all).
  const double alpha = 10.0 * kPi / 180.0;
  const Slope s = slope(alpha);
  const Material nylon = make_material(1140.0, kRadius, 3.0e9);
  const Vec3 start = kRadius * s.normal;
  Model model = single_rod_model(3, straight_rod(5, start, start + 0.05 * Vec3::UnitZ(), 3, {}, nylon),
                                 Vec3(0.0, -kG, 0.0));
  model.colliders.push_back(plane_collider(Vec3::Zero(), s.normal, 0.0));
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  const RunSummary summary = run_steps(model, integrator, state, 0.01, 50);
  REQUIRE(summary.ok);
  const Vec3 v = vertex_position(model, state.velocities, 0, 2);
  CHECK(v.dot(s.downhill) == doctest::Approx(kG * std::sin(alpha) * 0.5).epsilon(1e-6));
  CHECK(std::abs(v.dot(s.normal)) < 1e-9);
}

TEST_CASE("friction: a moving plane carries a resting rod by static friction") {
  // A horizontal floor driven by a handle accelerates sideways at 1 m/s^2 (< mu g): the rod
  // lying on it sticks and moves with it.
  const Material nylon = make_material(1140.0, kRadius, 3.0e9);
  Model model = single_rod_model(3, straight_rod(10, Vec3(0, kRadius, 0), Vec3(0, kRadius, 0.1), 3, {}, nylon),
                                 Vec3(0.0, -kG, 0.0));
  model.colliders.push_back(plane_collider(Vec3::Zero(), Vec3::UnitY(), kMu));
  model.colliders[0].handle = "floor";
  Handle floor;
  floor.name = "floor";
  // x(t) = t^2 / 2, keyed at every step: linear interpolation gives a velocity that grows by
  // 1 m/s^2 * dt per step, as the rod's must.
  for (int k = 0; k <= 100; ++k) {
    HandleKey key;
    key.time = 0.01 * k;
    key.translation = Vec3(0.5 * key.time * key.time, 0.0, 0.0);
    floor.keys.push_back(key);
  }
  HandleDriver driver(model, {floor});
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  const double dt = 0.01;
  double worst_lag = 0.0;
  const RunSummary summary = run_steps(
      model, integrator, state, dt, 100,
      [&](const State& st, const StepReport&) {
        const double floor_x = floor.translation_at(st.time).x();
        for (int i = 0; i <= 10; ++i)
          worst_lag = std::max(worst_lag, std::abs(vertex_position(model, st.positions, 0, i).x() - floor_x));
      },
      &driver, &model);
  REQUIRE(summary.ok);
  CHECK(worst_lag < 1e-9);
  CHECK(summary.max_penetration_fraction < 0.1);
}
