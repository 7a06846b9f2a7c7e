#include <cmath>
#include <iomanip>
#include <sstream>

#include <doctest/doctest.h>

#include "bristle/analysis/elastica.hpp"
#include "bristle/analysis/static_solver.hpp"
#include "bristle/scene/generators.hpp"
#include "support/elastica_builders.hpp"

using namespace bristle;
using bristle::test::Cantilever;
using bristle::test::CantileverSpec;
using bristle::test::make_cantilever;

namespace {

struct TipComparison {
  StaticResult result;
  Vec3 tip = Vec3::Zero();  ///< relative to the clamp point, in units of L
  double error = 0.0;       ///< |tip - elastica| / L
};

TipComparison solve_and_compare(const CantileverSpec& spec, const StaticSettings& settings = {}) {
  const Cantilever c = make_cantilever(spec);
  State state = initial_state(c.model);
  TipComparison out;
  out.result = solve_static(c.model, state, settings);
  out.tip = vertex_position(c.model, state.positions, 0, c.tip) / c.L;
  const ElasticaSolution reference = solve_cantilever_elastica(spec.gamma, spec.alpha);
  REQUIRE(reference.ok);
  out.error = std::hypot(out.tip.x() - reference.tip_x, out.tip.y() - reference.tip_y);
  out.error = std::hypot(out.error, out.tip.z());
  return out;
}

}  // namespace

TEST_CASE("analysis static: cantilever under self-weight matches the elastica at 80 segments") {
  for (int dimension : {2, 3}) {
    for (double gamma : {0.1, 1.0, 10.0, 100.0}) {
      CAPTURE(dimension);
      CAPTURE(gamma);
      CantileverSpec spec;
      spec.dimension = dimension;
      spec.gamma = gamma;
      const TipComparison t = solve_and_compare(spec);
      INFO(t.result.message);
      REQUIRE(t.result.ok);
      MESSAGE(dimension << "D Gamma = " << gamma << ": tip (" << t.tip.x() << ", " << t.tip.y()
                        << ") L, error " << t.error << " L, " << t.result.iterations << " Newton iterations, residual "
                        << t.result.residual << " N (tolerance " << t.result.tolerance << " N)");
      CHECK(t.result.residual <= t.result.tolerance);
      CHECK(t.result.stable);
      CHECK(t.error < 0.005);
    }
  }
}

TEST_CASE("analysis static: cantilever under a tip load matches the elastica at 80 segments") {
  for (double alpha : {0.1, 1.0, 10.0}) {
    CAPTURE(alpha);
    CantileverSpec spec;
    spec.alpha = alpha;
    const TipComparison t = solve_and_compare(spec);
    INFO(t.result.message);
    REQUIRE(t.result.ok);
    MESSAGE("alpha = " << alpha << ": tip (" << t.tip.x() << ", " << t.tip.y() << ") L, error " << t.error
                       << " L, " << t.result.iterations << " Newton iterations");
    CHECK(t.result.residual <= t.result.tolerance);
    CHECK(t.error < 0.005);
  }
}

TEST_CASE("analysis static: tip error converges under refinement (Gamma = 10)") {
  std::ostringstream table;
  table << "\n  N   tip error / L   observed order\n";
  double previous = 0.0, first = 0.0, last = 0.0;
  for (int n : {10, 20, 40, 80}) {
    CantileverSpec spec;
    spec.segments = n;
    spec.gamma = 10.0;
    const TipComparison t = solve_and_compare(spec);
    REQUIRE(t.result.ok);
    table << std::setw(4) << n << "   " << std::scientific << std::setprecision(3) << t.error;
    if (previous > 0.0) {
      const double order = std::log2(previous / t.error);
      table << "   " << std::fixed << std::setprecision(2) << order;
      CHECK(order >= 1.0);
    }
    table << "\n";
    if (n == 10) first = t.error;
    previous = last = t.error;
  }
  MESSAGE(table.str());
  CHECK(std::log2(first / last) / 3.0 >= 1.0);
}

TEST_CASE("analysis static: load stepping reaches the same equilibrium; ramped loads are fully applied") {
  CantileverSpec spec;
  spec.gamma = 100.0;
  spec.segments = 40;
  StaticSettings stepped;
  stepped.load_steps = 8;
  const TipComparison one = solve_and_compare(spec);
  const TipComparison ramp = solve_and_compare(spec, stepped);
  REQUIRE(one.result.ok);
  REQUIRE(ramp.result.ok);
  MESSAGE("Gamma = 100, 40 segments: " << one.result.iterations << " Newton iterations in one step, "
                                       << ramp.result.iterations << " over 8 load steps");
  CHECK(ramp.result.load_steps >= 8);
  CHECK((one.tip - ramp.tip).norm() < 1e-8);

  // A load with a ramp time is applied in full (load_time defaults to infinity).
  CantileverSpec load_spec;
  load_spec.alpha = 1.0;
  load_spec.segments = 20;
  Cantilever c = make_cantilever(load_spec);
  c.model.loads[0].ramp = 0.5;
  State state = initial_state(c.model);
  const StaticResult r = solve_static(c.model, state, {});
  REQUIRE(r.ok);
  const double tip_y = vertex_position(c.model, state.positions, 0, c.tip).y() / c.L;
  CHECK(std::abs(tip_y - solve_cantilever_elastica(0.0, 1.0).tip_y) < 0.01);
}

TEST_CASE("analysis static: failures are reported, not thrown") {
  CantileverSpec spec;
  spec.gamma = 10.0;
  spec.segments = 20;
  const Cantilever c = make_cantilever(spec);
  State state = initial_state(c.model);
  StaticSettings settings;
  settings.max_iterations = 1;
  settings.max_subdivisions = 0;
  const StaticResult r = solve_static(c.model, state, settings);
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("no convergence") != std::string::npos);
  CHECK(state.positions.allFinite());

  State bad = initial_state(c.model);
  bad.positions[4] = std::nan("");
  CHECK_FALSE(solve_static(c.model, bad, {}).ok);

  // Nothing holds the rod and nothing to rest on: no equilibrium, said at once.
  Cantilever loose = make_cantilever(spec);
  loose.model.rods[0].fixed.clear();
  loose.model.finalize();
  State falling = initial_state(loose.model);
  const StaticResult none = solve_static(loose.model, falling, {});
  CHECK_FALSE(none.ok);
  CHECK(none.iterations == 0);
  CHECK(none.message.find("rod 'rod' has no fixed vertex") != std::string::npos);
}

TEST_CASE("analysis static: a solve that cannot converge stops early and says where the force is") {
  CantileverSpec spec;
  spec.gamma = 10.0;
  spec.segments = 20;
  const Cantilever c = make_cantilever(spec);

  // Split load steps share one budget: 5 iterations per step and six halvings used to take
  // 7 x 5 iterations; the budget is twice one step's cap.
  State state = initial_state(c.model);
  StaticSettings capped;
  capped.max_iterations = 5;
  const StaticResult r = solve_static(c.model, state, capped);
  CHECK_FALSE(r.ok);
  CHECK(r.iterations <= 2 * capped.max_iterations);
  // The documented form: "static solve: <reason>", naming the rod and vertex.
  CAPTURE(r.message);
  CHECK(r.message.rfind("static solve: no convergence after ", 0) == 0);
  CHECK(r.message.find("largest residual force ") != std::string::npos);
  CHECK(r.message.find(" N at rod 'rod' vertex ") != std::string::npos);

  // An unreachable tolerance: Newton reaches round-off, then makes no progress; it stops at
  // the stall test long before the 1000 iterations it used to take per load step.
  State stalled_state = initial_state(c.model);
  StaticSettings unreachable;
  unreachable.tolerance = -1.0;
  unreachable.max_subdivisions = 0;
  const StaticResult stalled = solve_static(c.model, stalled_state, unreachable);
  CHECK_FALSE(stalled.ok);
  CAPTURE(stalled.message);
  CHECK(stalled.message.find("no progress in the last 100 iterations") != std::string::npos);
  CHECK(stalled.iterations < 400);
}

TEST_CASE("analysis static: a straight column above its buckling load is a saddle; saddle escapes bend it") {
  CantileverSpec spec;
  spec.segments = 16;
  spec.direction = Vec3::UnitY();
  spec.gamma = 10.0;  // above Greenhill's 7.8373
  const Cantilever c = make_cantilever(spec);

  State straight = initial_state(c.model);
  const StaticResult saddle = solve_static(c.model, straight, {});
  REQUIRE(saddle.ok);
  CHECK_FALSE(saddle.stable);
  CHECK(saddle.saddle_escapes == 0);
  CHECK(std::abs(vertex_position(c.model, straight.positions, 0, c.tip).x()) < 1e-12);

  StaticSettings escaping;
  escaping.saddle_escapes = 3;
  State bent = initial_state(c.model);
  const StaticResult buckled = solve_static(c.model, bent, escaping);
  INFO(buckled.message);
  REQUIRE(buckled.ok);
  const Vec3 tip = vertex_position(c.model, bent.positions, 0, c.tip);
  MESSAGE("Gamma = 10 column after " << buckled.saddle_escapes << " saddle escape(s): tip (" << tip.x() << ", "
                                     << tip.y() << ") L, " << buckled.iterations << " Newton iterations");
  CHECK(buckled.stable);
  CHECK(buckled.saddle_escapes >= 1);
  CHECK(buckled.unstable_modes == 0);
  CHECK(buckled.residual <= buckled.tolerance);
  CHECK(std::abs(tip.x()) > 0.2);

  // Below the threshold the straight column is a minimum: nothing to escape from.
  spec.gamma = 6.0;
  const Cantilever below = make_cantilever(spec);
  State upright = initial_state(below.model);
  const StaticResult standing = solve_static(below.model, upright, escaping);
  REQUIRE(standing.ok);
  CHECK(standing.stable);
  CHECK(standing.saddle_escapes == 0);
}

TEST_CASE("analysis static: a cantilever propped on a sphere at its tip carries 3/8 of its weight there") {
  // Propped cantilever (clamped at s = 0, simply supported at s = L) under its own weight w L:
  // the support reaction is 3 w L / 8 (small deflection; Timoshenko, Strength of Materials I,
  // the statically indeterminate beam). Gamma = 0.1 keeps the deflection small. The sphere
  // touches the straight rod's surface at the tip and falls away fast enough that no other
  // vertex reaches it.
  CantileverSpec spec;
  spec.segments = 40;
  spec.gamma = 0.1;
  Cantilever c = make_cantilever(spec);
  Collider sphere;
  sphere.type = ColliderType::Sphere;
  sphere.radius = 0.05;
  sphere.center = Vec3(c.L, -spec.radius - sphere.radius, 0.0);
  c.model.colliders.push_back(sphere);
  State state = initial_state(c.model);
  const StaticResult r = solve_static(c.model, state, {});
  INFO(r.message);
  REQUIRE(r.ok);
  CHECK(r.stable);
  CHECK(r.residual <= r.tolerance);
  REQUIRE(r.contact_forces.size() == 1);
  CHECK(r.contacts == 1);
  const double weight = c.rhoA * 9.81 * c.L;
  MESSAGE("propped cantilever, 40 edges: support force " << r.contact_forces[0] / weight << " w L (3/8 = 0.375), gap "
                                                          << r.min_gap / spec.radius << " r, " << r.iterations
                                                          << " Newton iterations");
  CHECK(r.contact_forces[0] / weight == doctest::Approx(0.375).epsilon(0.01));
  CHECK(r.min_gap > 0.0);
  CHECK(r.min_gap < 0.01 * spec.radius);
  // The tip stays on the support: its centre within the gap of where it started.
  CHECK(std::abs(vertex_position(c.model, state.positions, 0, c.tip).y()) < 0.01 * spec.radius);
}

TEST_CASE("analysis static: a helical spring with twist stretches as G d^4 / (8 D^3 n) predicts") {
  // A close-coiled steel spring (wire d = 0.5 mm, coil D = 10 mm, pitch 4 mm, helix angle
  // 7.3 degrees), clamped at its top, pulled along its axis by P through a short radial hook
  // at its free end (so the load acts on the axis, as in the textbook spring). A coil spring
  // stretches by twisting its wire: k = G d^4 / (8 D^3 n) (Wahl, "Mechanical Springs"); the
  // more exact energy sum for an open coil, P R^2 L (cos^2 a / (G J) + sin^2 a / (E I)), is
  // 0.43% softer here.
  const double R = 0.005, d = 0.0005, pitch = 0.004, E = 2e11, nu = 0.3, P = 0.05;
  const int turns = 10;
  // The polygon's edges cut inside the coil (their midpoints at R cos(pi / per_turn)), so
  // the discrete spring is a little stiffer, by a second-order amount.
  double previous = 1.0;
  for (const int per_turn : {24, 48}) {
    CAPTURE(per_turn);
    HelixSpec helix;
    helix.axis = Vec3(0.0, -1.0, 0.0);
    helix.radius = R;
    helix.pitch = pitch;
    helix.turns = turns;
    helix.segments = turns * per_turn;
    std::vector<Vec3> vertices = helix_rod(helix);
    const Vec3 last = vertices.back();
    const Vec3 hook(0.0, last.y(), 0.0);  // on the axis, level with the coil's end
    for (int k = 1; k <= 4; ++k) vertices.push_back(last + (hook - last) * (k / 4.0));
    Material steel;
    steel.density = 7800.0;
    steel.radius = d / 2.0;
    steel.youngs_modulus = E;
    steel.shear_modulus = E / (2.0 * (1.0 + nu));
    Model model;
    model.dimension = 3;
    model.rods.push_back(make_rod("spring", steel, vertices, {0, 1}, RestShape::Initial, 3));
    model.rods[0].twist = true;
    PointLoad load;
    load.rod = 0;
    load.vertex = model.rods[0].vertex_count() - 1;
    load.force = Vec3(0.0, -P, 0.0);
    model.loads.push_back(load);
    model.finalize();
    State state = initial_state(model);
    const double start_y = state.positions[model.layout.vertex_dof(0, load.vertex) + 1];
    const StaticResult r = solve_static(model, state, {});
    INFO(r.message);
    REQUIRE(r.ok);
    const double extension = start_y - state.positions[model.layout.vertex_dof(0, load.vertex) + 1];
    const double k_wahl = steel.shear() * std::pow(d, 4) / (8.0 * std::pow(2.0 * R, 3) * turns);
    const double error = extension / (P / k_wahl) - 1.0;
    MESSAGE(per_turn << " edges per turn: spring extension " << extension * 1e3 << " mm against P / k = "
                     << P / k_wahl * 1e3 << " mm (k = G d^4 / (8 D^3 n) = " << k_wahl << " N/m): relative error "
                     << error);
    CHECK(std::abs(error) < 0.03);
    CHECK(std::abs(error) < 0.5 * std::abs(previous));
    previous = error;
  }
}
