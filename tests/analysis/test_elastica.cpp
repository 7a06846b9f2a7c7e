#include <cmath>
#include <iomanip>

#include <doctest/doctest.h>

#include "bristle/analysis/elastica.hpp"

using namespace bristle;

TEST_CASE("analysis elastica: self-weight cantilever reproduces the reference tip deflections") {
  const ElasticaSolution g1 = solve_cantilever_elastica(1.0, 0.0);
  const ElasticaSolution g10 = solve_cantilever_elastica(10.0, 0.0);
  REQUIRE(g1.ok);
  REQUIRE(g10.ok);
  MESSAGE("Gamma = 1: tip y/L = " << std::setprecision(10) << g1.tip_y << ", Gamma = 10: " << g10.tip_y);
  // Published to six decimals: the solver must agree to their last digit.
  CHECK(std::abs(g1.tip_y - (-0.123471)) < 1e-6);
  CHECK(std::abs(g10.tip_y - (-0.700200)) < 1e-6);
  CHECK(g1.tip_x < 1.0);
  CHECK(g1.tip_x * g1.tip_x + g1.tip_y * g1.tip_y < 1.0);  // inextensible: the chord is shorter

  // Small Gamma: Euler-Bernoulli, y(1) = -Gamma / 8, with an O(Gamma^3) correction.
  for (double gamma : {1e-6, 1e-4, 1e-2}) {
    const ElasticaSolution small = solve_cantilever_elastica(gamma, 0.0);
    REQUIRE(small.ok);
    CAPTURE(gamma);
    CHECK(std::abs(small.tip_y / (-gamma / 8.0) - 1.0) < 2.0 * gamma * gamma);
  }
}

TEST_CASE("analysis elastica: tip-load cantilever reproduces Bisshopp and Drucker") {
  const ElasticaSolution a1 = solve_cantilever_elastica(0.0, 1.0);
  REQUIRE(a1.ok);
  MESSAGE("alpha = 1: tip y/L = " << std::setprecision(10) << a1.tip_y << ", x/L = " << a1.tip_x);
  CHECK(std::abs(a1.tip_y - (-0.30172)) < 1e-5);
  // Small load: y(1) = -alpha / 3.
  const ElasticaSolution small = solve_cantilever_elastica(0.0, 1e-5);
  CHECK(std::abs(small.tip_y / (-1e-5 / 3.0) - 1.0) < 1e-8);
  // Moment balance at the clamp, exact for the continuum: E I theta'(0) = -P x(L).
  for (double alpha : {0.1, 1.0, 10.0}) {
    const ElasticaSolution s = solve_cantilever_elastica(0.0, alpha);
    REQUIRE(s.ok);
    CHECK(std::abs(s.root_curvature + alpha * s.tip_x) < 1e-10 * alpha);
  }
}

TEST_CASE("analysis elastica: the integration is converged and the curve satisfies the moment balance") {
  ElasticaSettings fine;
  fine.steps = 8000;
  for (double gamma : {0.1, 1.0, 10.0, 100.0}) {
    CAPTURE(gamma);
    const ElasticaSolution coarse = solve_cantilever_elastica(gamma, 0.0);
    const ElasticaSolution finer = solve_cantilever_elastica(gamma, 0.0, fine);
    REQUIRE(coarse.ok);
    REQUIRE(finer.ok);
    CHECK(std::abs(coarse.tip_x - finer.tip_x) < 1e-10);
    CHECK(std::abs(coarse.tip_y - finer.tip_y) < 1e-10);
  }
  // Self-weight moment balance at the clamp: theta'(0) = -Gamma int_0^1 x(s) ds (Simpson).
  ElasticaSettings curve;
  curve.keep_curve = true;
  const ElasticaSolution s = solve_cantilever_elastica(10.0, 0.0, curve);
  REQUIRE(s.ok);
  REQUIRE(s.x.size() == 4001);
  double integral = 0.0;
  const int n = static_cast<int>(s.x.size()) - 1;
  for (int i = 0; i <= n; ++i) integral += (i == 0 || i == n ? 1.0 : (i % 2 ? 4.0 : 2.0)) * s.x[i];
  integral /= 3.0 * n;
  CHECK(std::abs(s.root_curvature + 10.0 * integral) < 1e-9);
  CHECK(s.x.back() == doctest::Approx(s.tip_x));
}

TEST_CASE("analysis elastica: agrees with an independent high-precision integration") {
  // The same boundary-value problem solved separately with mpmath 1.3 (its Taylor-series ODE
  // integrator `odefun` at 12-20 significant digits, secant root-finding on theta'(0)), sharing
  // no code with elastica.cpp: theta'(0), x(1), y(1).
  struct Independent {
    double gamma, alpha, root_curvature, tip_x, tip_y;
  };
  const Independent cases[] = {
      {1.0, 0.0, -0.496933399931, 0.991246395347, -0.123471401983},
      {10.0, 0.0, -3.74219111087, 0.656353761239, -0.700199715514},
      {0.0, 1.0, -0.943566763717, 0.943566763717, -0.3017207738},
  };
  for (const Independent& c : cases) {
    CAPTURE(c.gamma);
    CAPTURE(c.alpha);
    const ElasticaSolution s = solve_cantilever_elastica(c.gamma, c.alpha);
    REQUIRE(s.ok);
    CHECK(std::abs(s.root_curvature - c.root_curvature) < 1e-9);
    CHECK(std::abs(s.tip_x - c.tip_x) < 1e-9);
    CHECK(std::abs(s.tip_y - c.tip_y) < 1e-9);
  }
}
