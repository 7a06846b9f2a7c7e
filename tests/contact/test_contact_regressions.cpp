// Reproducers the fuzzer found in the step with colliders (issue 13, finding 1): the contact
// solver's first constrained pass not converging left the step's velocity change unassigned,
// and the step copied it before checking. Each must end in a completed step or a failure
// that names the rod and vertex, never a crash.

#include <string>

#include <doctest/doctest.h>

#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/scene/load_scene.hpp"
#include "contact/contact_test_support.hpp"
#include "support/rod_builders.hpp"
#include "test_paths.hpp"

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

TEST_CASE("contact regressions: a twisting rod under contact constraints whose block is not positive definite fails by vertex") {
  // Found by tools/fuzz_scenes.py (seed 2026120201, case 1335; fuzz_scene_regressions replays
  // the scene too): a 12 um rod with twist, self-contact as constraints with friction 10 and
  // loads of 0.13 N. Its first step drives the rod's system block to stiffnesses 28 orders of
  // magnitude apart (a twist's 1e-19, a vertex's 6e8), indefinite to round-off, so the
  // contact impulses cannot be solved rod by rod. The failure named the rod only; it must
  // name the vertex of the failing pivot.
  const Scene scene = load_scene(std::string(test::kTestsDir) +
                                 "/fuzz/regressions/scenes/constraints_twist_block_not_positive_definite.json");
  ImplicitEuler integrator(scene.model, scene.solver);
  State state = initial_state(scene.model);
  const VecX start = state.positions;
  const StepReport report = integrator.step(state, scene.time.dt);
  REQUIRE_FALSE(report.ok);
  CAPTURE(report.failure);
  CHECK(report.failure.find("not positive definite") != std::string::npos);
  CHECK(report.failure.find("rod 'r0' vertex ") != std::string::npos);
  CHECK(report.failed_rod == 0);
  CHECK(report.failed_vertex >= 1);  // vertex 0 is held
  CHECK(state.positions == start);   // the failed step leaves the state as it was
}
