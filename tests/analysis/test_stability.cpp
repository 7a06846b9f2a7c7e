#include <cmath>
#include <iomanip>

#include <doctest/doctest.h>

#include "bristle/analysis/stability.hpp"
#include "bristle/analysis/static_solver.hpp"
#include "support/elastica_builders.hpp"

using namespace bristle;
using bristle::test::Cantilever;
using bristle::test::CantileverSpec;
using bristle::test::make_cantilever;

namespace {

constexpr double kGreenhill = 7.8373;

CantileverSpec column_spec(double gamma, int segments, int dimension = 2) {
  CantileverSpec spec;
  spec.segments = segments;
  spec.dimension = dimension;
  spec.direction = Vec3::UnitY();  // standing up, gravity along -y
  spec.gamma = gamma;
  return spec;
}

}  // namespace

TEST_CASE("analysis stability: Greenhill's self-weight buckling threshold") {
  for (int segments : {20, 40}) {
    StabilitySettings settings;
    settings.low = 5.0;
    settings.high = 12.0;
    settings.tolerance = 1e-6;
    const StabilityResult r = find_stability_threshold(
        [&](double gamma) { return make_cantilever(column_spec(gamma, segments)).model; }, settings);
    INFO(r.message);
    REQUIRE(r.ok);
    const double error = r.critical / kGreenhill - 1.0;
    MESSAGE(segments << " segments: Gamma_c = " << std::setprecision(8) << r.critical << " (Greenhill 7.8373), relative error "
                     << error << ", " << r.samples.size() << " evaluations");
    CHECK(std::abs(error) < 0.02);
  }
}

TEST_CASE("analysis stability: the static solver finds the buckled column above the threshold, the straight one below") {
  for (int dimension : {2, 3}) {
    for (double gamma : {5.0, 12.0}) {
      CAPTURE(dimension);
      CAPTURE(gamma);
      const Cantilever c = make_cantilever(column_spec(gamma, 40, dimension));
      State state = initial_state(c.model);
      // A small sideways imperfection, growing along the column: 1e-3 L at the tip.
      for (int i = 2; i <= c.tip; ++i) {
        const double s = (i - 0.5) * c.h / c.L;
        state.positions[c.model.layout.vertex_dof(0, i)] += 1e-3 * c.L * s * s;
        if (dimension == 3) state.positions[c.model.layout.vertex_dof(0, i) + 2] += 0.5e-3 * c.L * s * s;
      }
      const StaticResult r = solve_static(c.model, state, {});
      INFO(r.message);
      REQUIRE(r.ok);
      CHECK(r.residual <= r.tolerance);
      const Vec3 tip = vertex_position(c.model, state.positions, 0, c.tip) / c.L;
      const double sideways = std::hypot(tip.x(), tip.z());
      MESSAGE(dimension << "D Gamma = " << gamma << ": tip (" << tip.x() << ", " << tip.y() << ", " << tip.z()
                        << ") L after " << r.iterations << " Newton iterations, residual " << r.residual << " N");
      CHECK(r.stable);
      if (gamma > kGreenhill) {
        CHECK(sideways > 0.3);
        CHECK(tip.y() < 0.9);
        // 3D: it buckles in the plane of the imperfection (x : z = 2 : 1), by symmetry.
        if (dimension == 3) CHECK(tip.z() / tip.x() == doctest::Approx(0.5).epsilon(1e-6));
      } else {
        CHECK(sideways < 1e-8);
        CHECK(tip.y() > 0.999);
      }
    }
  }
}

TEST_CASE("analysis stability: a perfectly straight column above the threshold is an equilibrium, reported unstable") {
  const Cantilever c = make_cantilever(column_spec(12.0, 40));
  State state = initial_state(c.model);
  const StaticResult r = solve_static(c.model, state, {});
  REQUIRE(r.ok);
  CHECK_FALSE(r.stable);  // a saddle: symmetry kept every iterate straight
  CHECK(vertex_position(c.model, state.positions, 0, c.tip).x() == 0.0);
  const Cantilever below = make_cantilever(column_spec(5.0, 40));
  State below_state = initial_state(below.model);
  const StaticResult s = solve_static(below.model, below_state, {});
  REQUIRE(s.ok);
  CHECK(s.stable);
}
