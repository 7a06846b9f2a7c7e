// Reproducers the fuzzer found in the step with colliders (issue 13, finding 1): the contact
// solver's first constrained pass not converging left the step's velocity change unassigned,
// and the step copied it before checking. Each must end in a completed step or a failure
// that names the rod and vertex, never a crash.

#include <string>

#include <doctest/doctest.h>

#include "bristle/integrator/implicit_euler.hpp"
#include "contact/contact_test_support.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

/// Steps a clamped 3D bristle with one collider; every report is complete or names where.
void step_without_crash(const Collider& collider, int steps) {
  Model model = single_rod_model(
      3, straight_rod(10, Vec3::Zero(), Vec3(0.05, 0.0, 0.0), 3, {0, 1}, make_material(1140.0, 1e-3, 3e8), "rod"),
      earth_gravity());
  model.colliders.push_back(collider);
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  for (int k = 0; k < steps; ++k) {
    const StepReport report = integrator.step(state, 1.0 / 60.0);
    if (!report.ok) {
      CAPTURE(report.failure);
      CHECK(report.failure.find("rod 'rod'") != std::string::npos);
      CHECK(state.positions.allFinite());  // the state is left as it was
      return;
    }
    CHECK(state.positions.allFinite());
  }
}

}  // namespace

TEST_CASE("contact regressions: a rod starting 0.1 mm inside a plane steps or fails by name") {
  // The plane's surface is 0.1 mm above the rod's lower surface: every vertex starts inside.
  step_without_crash(plane_collider(Vec3(0.0, -1e-3 + 1e-4, 0.0), Vec3::UnitY(), 0.5), 20);
}

TEST_CASE("contact regressions: a collider point of 1.797e308 steps or fails by name") {
  step_without_crash(plane_collider(Vec3(0.0, 1.797e308, 0.0), Vec3::UnitY(), 0.3), 3);
  step_without_crash(sphere_collider(Vec3(1.797e308, 0.0, 0.0), 0.01, 0.3), 3);
}
