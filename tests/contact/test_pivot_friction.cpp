// Coulomb friction while a rod pivots (issue 16): a straight rod lying on a plane (mu = 0.5)
// pushed sideways at one end by a point load of 0.6 mu m g, above the limit-analysis threshold
// (sqrt(2) - 1) mu m g at which a rigid rod starts turning about a pivot near its far end, and
// below mu m g, so it turns and slides a few centimetres and stops. Near the pivot the slip is
// tiny and turns from one pass to the next; friction must stay in the cone there at every
// step size, and the motion must not depend on the step size beyond backward Euler's error.

#include <algorithm>
#include <cmath>
#include <vector>

#include <doctest/doctest.h>

#include "contact/contact_test_support.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

constexpr double kG = 9.81;
constexpr double kMu = 0.5;
constexpr double kRadius = 0.002;
constexpr double kLength = 0.1;
constexpr double kLoad = 0.6;        // of mu m g
constexpr double kDuration = 3.0;    // [s]
constexpr double kSample = 0.05;     // centre of mass sampled every kSample s (a multiple of every dt)

struct PushResult {
  RunSummary summary;
  double max_friction_ratio = 0.0;  // largest |friction impulse| / (mu lambda_n) over contacts and steps
  std::vector<Vec3> centre;         // the rod's centre of mass at t = 0, kSample, 2 kSample, ...
};

/// A nylon rod of 10 edges along z on the floor y = 0, a constant load along x on vertex 0.
PushResult push(double dt, const SolverSettings& settings = SolverSettings{},
                RodContactMethod method = RodContactMethod::Barrier) {
  const Material nylon = make_material(1140.0, kRadius, 3.0e9);
  Model model = single_rod_model(3, straight_rod(10, Vec3(0, kRadius, 0), Vec3(0, kRadius, kLength), 3, {}, nylon),
                                 Vec3(0.0, -kG, 0.0));
  model.colliders.push_back(plane_collider(Vec3::Zero(), Vec3::UnitY(), kMu));
  const int vertices = model.rods[0].vertex_count();
  double mass = 0.0;
  for (int i = 0; i < vertices; ++i) mass += model.rods[0].vertex_mass(i);
  PointLoad load;
  load.vertex = 0;
  load.force = Vec3(kLoad * kMu * mass * kG, 0.0, 0.0);
  model.loads.push_back(load);
  model.rod_contact.method = method;
  ImplicitEuler integrator(model, settings);
  State state = initial_state(model);
  auto centre = [&](const VecX& x) {
    Vec3 c = Vec3::Zero();
    for (int i = 0; i < vertices; ++i) c += model.rods[0].vertex_mass(i) * vertex_position(model, x, 0, i);
    return Vec3(c / mass);
  };
  PushResult r;
  r.centre.push_back(centre(state.positions));
  const int every = static_cast<int>(std::lround(kSample / dt));
  int step = 0;
  r.summary = run_steps(model, integrator, state, dt, static_cast<int>(std::lround(kDuration / dt)),
                        [&](const State& st, const StepReport& report) {
                          r.max_friction_ratio = std::max(r.max_friction_ratio, report.contact.max_friction_ratio);
                          if (++step % every == 0) r.centre.push_back(centre(st.positions));
                        });
  return r;
}

/// The largest distance between two centre-of-mass paths sampled at the same times [m].
double path_gap(const PushResult& a, const PushResult& b) {
  double gap = 0.0;
  for (std::size_t k = 0; k < std::min(a.centre.size(), b.centre.size()); ++k)
    gap = std::max(gap, (a.centre[k] - b.centre[k]).norm());
  return gap;
}

}  // namespace

TEST_CASE("pivot friction: a rod pushed sideways at one end keeps friction in the cone at dt = 1 ms, 1/240 s, 1/60 s") {
  for (const double dt : {1e-3, 1.0 / 240.0, 1.0 / 60.0}) {
    CAPTURE(dt);
    const PushResult r = push(dt);
    INFO("failure: " << r.summary.failure);
    REQUIRE(r.summary.ok);
    CHECK(r.summary.active_set_converged);
    // |friction impulse| <= mu lambda_n at every contact of every step, to the friction
    // bound's own fixed-point tolerance (ContactSettings::friction_tolerance, relative; the old
    // linearised slip direction reached 28, 14 and 3.6 times the bound here). Measured: 5e-7.
    MESSAGE("dt " << dt << ": largest |friction| / (mu lambda_n) - 1 = " << r.max_friction_ratio - 1.0);
    CHECK(r.max_friction_ratio <= 1.0 + ContactSettings{}.friction_tolerance);
    CHECK(r.summary.max_penetration_fraction < 0.01);
    // It did pivot and slide: the pushed end led, the centre moved a few centimetres and stopped.
    const Vec3 moved = r.centre.back() - r.centre.front();
    CHECK(moved.x() > 0.025);
    CHECK(moved.x() < 0.05);
    CHECK(moved.z() > 0.005);
  }
}

TEST_CASE("pivot friction: the pushed rod's path at dt = 1/240 s is within 5% of the path at 1 ms") {
  const PushResult fine = push(1e-3);
  const PushResult coarse = push(1.0 / 240.0);
  const PushResult coarsest = push(1.0 / 60.0);
  REQUIRE(fine.summary.ok);
  REQUIRE(coarse.summary.ok);
  REQUIRE(coarsest.summary.ok);
  REQUIRE(fine.centre.size() == coarse.centre.size());
  const double slide = (fine.centre.back() - fine.centre.front()).norm();
  MESSAGE("slide at 3 s: " << slide << " m (1 ms), " << (coarse.centre.back() - coarse.centre.front()).norm()
                           << " m (1/240 s), " << (coarsest.centre.back() - coarsest.centre.front()).norm()
                           << " m (1/60 s); largest gap to the 1 ms path " << path_gap(fine, coarse) / slide
                           << " (1/240 s), " << path_gap(fine, coarsest) / slide << " (1/60 s) of the slide");
  CHECK(path_gap(fine, coarse) < 0.05 * slide);
  // 1/60 s: backward Euler's first-order damping of the turn, within 15%.
  CHECK(path_gap(fine, coarsest) < 0.15 * slide);
}

TEST_CASE("pivot friction: a solve cut short by max_iterations finishes with friction near the cone") {
  // Two passes per Newton iteration are too few for the pivoting rod's stick-slip states to
  // settle (the default, 50, settles them), so steps end in the finish (finish_unsettled).
  // It used to make every contact stick: friction without a bound, 12 times mu lambda_n here,
  // and the rod never moved. Then the sliding directions' Newton terms left 1.20 times the
  // bound, until the finish's last solves dropped them (settle_friction_for_finish).
  // Held here to the tolerance the converged solves meet (friction_tolerance).
  SolverSettings settings;
  settings.contact.max_iterations = 2;
  for (const double dt : {1.0 / 240.0, 1.0 / 60.0}) {
    CAPTURE(dt);
    const PushResult r = push(dt, settings);
    INFO("failure: " << r.summary.failure);
    REQUIRE(r.summary.ok);
    CHECK_FALSE(r.summary.active_set_converged);  // the finish did run
    MESSAGE("dt " << dt << ": largest |friction| / (mu lambda_n) - 1 = " << r.max_friction_ratio - 1.0);
    CHECK(r.max_friction_ratio <= 1.0 + ContactSettings{}.friction_tolerance);  // 1 + 5e-7; 1.20, 12 before
    CHECK(r.summary.max_penetration_fraction < 0.01);
    // The rod still turns and slides and stops, as with the passes it needs.
    const Vec3 moved = r.centre.back() - r.centre.front();
    CHECK(moved.x() > 0.02);
    CHECK(moved.x() < 0.05);
  }
}

TEST_CASE("pivot friction as constraints: friction in the cone and the path within 5% of the 1 ms one at every step size") {
  // The plane's contacts as rows of the impulse solve (rod_contact.method "constraints"):
  // each friction impulse is the exact minimiser on its disc, so the bound holds to round-off.
  const RodContactMethod method = RodContactMethod::Constraints;
  const PushResult reference = push(1e-3);  // the active-set solver's, as in the test above
  REQUIRE(reference.summary.ok);
  const double slide = (reference.centre.back() - reference.centre.front()).norm();
  for (const double dt : {1e-3, 1.0 / 240.0, 1.0 / 60.0}) {
    CAPTURE(dt);
    const PushResult r = push(dt, SolverSettings{}, method);
    INFO("failure: " << r.summary.failure);
    REQUIRE(r.summary.ok);
    const double gap = path_gap(reference, r) / slide;
    MESSAGE("dt " << dt << ": largest |friction| / (mu lambda_n) - 1 = " << r.max_friction_ratio - 1.0
                  << ", slide " << (r.centre.back() - r.centre.front()).norm() << " m, largest gap to the 1 ms path "
                  << gap << " of the slide, deepest " << r.summary.max_penetration_fraction << " of the radius");
    // (The friction ratio is at most 1 by construction here, the projection onto the disc: it
    // is printed, not checked. What friction in the cone must give is the path.)
    CHECK(r.summary.max_penetration_fraction < 0.01);
    CHECK(gap < (dt > 0.01 ? 0.15 : 0.05));
  }
}
