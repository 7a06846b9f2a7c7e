// Colliders as rows of the constraint impulse solve (rod_contact.method "constraints";
// contact/collider_contact_rows.hpp): a moving surface carries the rod at its own height, a 2D
// box is a rectangle, and the fixed-count solver keeps its count.

#include <cmath>
#include <vector>

#include <doctest/doctest.h>

#include "contact/contact_test_support.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

constexpr double kG = 9.81;
constexpr double kRadius = 0.002;

struct Ride {
  double deepest = 0.0;    // the largest penetration / radius of a vertex over the steps
  double final_gap = 0.0;  // the largest |gap| / radius of a vertex at the end
};

/// A nylon rod of 10 edges lying on the floor y = 0 that moves along its normal at `speed`
/// (the handle driver's part done here: the plane in its end pose, the step's translation
/// set), for 0.5 s.
Ride ride_moving_floor(int dimension, double dt, double speed) {
  const Material nylon = make_material(1140.0, kRadius, 3.0e9);
  const Vec3 end = dimension == 3 ? Vec3(0, kRadius, 0.1) : Vec3(0.1, kRadius, 0);
  Model model = single_rod_model(dimension, straight_rod(10, Vec3(0, kRadius, 0), end, dimension, {}, nylon),
                                 Vec3(0.0, -kG, 0.0));
  model.colliders.push_back(plane_collider(Vec3::Zero(), Vec3::UnitY(), 0.5));
  model.rod_contact.method = RodContactMethod::Constraints;
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  Ride ride;
  const int steps = static_cast<int>(std::lround(0.5 / dt));
  for (int k = 0; k < steps; ++k) {
    model.colliders[0].step_translation = Vec3(0.0, speed * dt, 0.0);
    model.colliders[0].point += model.colliders[0].step_translation;
    const StepReport report = integrator.step(state, dt);
    REQUIRE_MESSAGE(report.ok, report.failure);
    const double floor = model.colliders[0].point.y();
    ride.final_gap = 0.0;
    for (int i = 0; i < model.rods[0].vertex_count(); ++i) {
      const double gap = (vertex_position(model, state.positions, 0, i).y() - kRadius - floor) / kRadius;
      ride.deepest = std::max(ride.deepest, -gap);
      ride.final_gap = std::max(ride.final_gap, std::abs(gap));
    }
  }
  return ride;
}

}  // namespace

TEST_CASE("colliders as constraints: a rod on a floor rising or sinking rides on its surface") {
  // The floor's motion must count once: measured in its end pose twice, a rod rode a rising
  // floor V h above it (0.4 to 1.7 radii here) and sank V h into a sinking one. (A floor that
  // starts sinking leaves the rod behind until gravity has it at the floor's speed, up to
  // V^2 / 2g = 6% of the radius here: hence the gap at the end, not over the steps.)
  for (const int dimension : {3, 2})
    for (const double dt : {1.0 / 240.0, 1.0 / 60.0})
      for (const double speed : {0.2, -0.05}) {
        CAPTURE(dimension);
        CAPTURE(dt);
        CAPTURE(speed);
        const Ride ride = ride_moving_floor(dimension, dt, speed);
        MESSAGE("deepest " << ride.deepest << ", gap at the end " << ride.final_gap << " of the radius");
        CHECK(ride.deepest < 0.01);
        CHECK(ride.final_gap < 0.01);
      }
}

TEST_CASE("colliders as constraints: in 2D a box is a rectangle, and a rod rests on its top") {
  const Material nylon = make_material(1140.0, kRadius, 3.0e9);
  Model model = single_rod_model(2, straight_rod(8, Vec3(-0.04, 0.011, 0), Vec3(0.04, 0.011, 0), 2, {}, nylon),
                                 Vec3(0.0, -kG, 0.0));
  // A box 0.1 x 0.02 centred at the origin: its top at y = 0.01; its z extent is 0 (2D).
  model.colliders.push_back(box_collider(Vec3::Zero(), Mat3::Identity(), Vec3(0.05, 0.01, 0.0), 0.3));
  model.rod_contact.method = RodContactMethod::Constraints;
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  for (int k = 0; k < 30; ++k) {
    const StepReport report = integrator.step(state, 1.0 / 60.0);
    REQUIRE_MESSAGE(report.ok, report.failure);
    CHECK(report.contact.max_penetration_fraction < 0.01);
  }
  for (int i = 0; i < model.rods[0].vertex_count(); ++i)
    CHECK(vertex_position(model, state.positions, 0, i).y() == doctest::Approx(0.01 + kRadius).epsilon(1e-3));
}

TEST_CASE("rod contact as constraints: the fixed-count solver takes exactly its count of solves") {
  const Material nylon = make_material(1140.0, kRadius, 3.0e9);
  Model model = single_rod_model(3, straight_rod(10, Vec3(0, kRadius, 0), Vec3(0, kRadius, 0.1), 3, {}, nylon),
                                 Vec3(0.0, -kG, 0.0));
  model.colliders.push_back(plane_collider(Vec3::Zero(), Vec3::UnitY(), 0.5));
  model.rod_contact.method = RodContactMethod::Constraints;
  for (const int count : {1, 3}) {
    CAPTURE(count);
    SolverSettings settings;
    settings.newton_iterations = count;
    ImplicitEuler integrator(model, settings);
    State state = initial_state(model);
    for (int k = 0; k < 5; ++k) {
      const StepReport report = integrator.step(state, 1.0 / 60.0);
      REQUIRE_MESSAGE(report.ok, report.failure);
      CHECK(report.newton_iterations == count);
      CHECK(report.contact.max_penetration_fraction < 0.01);
    }
  }
}
