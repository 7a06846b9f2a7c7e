#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <tuple>

#include <doctest/doctest.h>
#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "bristle/energy/bend.hpp"
#include "support/finite_difference.hpp"

using namespace bristle;
using bristle::test::compare_matrices;

namespace {

constexpr double kPi = 3.14159265358979323846;

template <int D>
BendStencil<D> unpack(const Eigen::VectorXd& q) {
  return {q.segment<D>(0), q.segment<D>(D), q.segment<D>(2 * D)};
}

/// A stencil with edge lengths l1, l2 turning by theta, rotated and translated at random.
template <int D>
Vec<3 * D> make_stencil(double l1, double l2, double theta, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Vec<3 * D> q;
  if constexpr (D == 2) {
    const double phi = kPi * u(rng);
    const Vec2 origin(u(rng), u(rng));
    const Vec2 d1(std::cos(phi), std::sin(phi)), d2(std::cos(phi + theta), std::sin(phi + theta));
    q << origin, origin + l1 * d1, origin + l1 * d1 + l2 * d2;
  } else {
    const Eigen::Quaterniond rot = Eigen::Quaterniond(u(rng), u(rng), u(rng), u(rng)).normalized();
    const Vec3 origin(u(rng), u(rng), u(rng));
    const Vec3 d1 = rot * Vec3::UnitX();
    const Vec3 d2 = rot * Vec3(std::cos(theta), std::sin(theta), 0.0);
    q << origin, origin + l1 * d1, origin + l1 * d1 + l2 * d2;
  }
  return q;
}

template <int D>
void check_bend(const Vec<3 * D>& q, double rest, double k, double rtol, double step) {
  auto energy = [&](const Eigen::VectorXd& p) { return bend_energy<D>(unpack<D>(p), rest, k); };
  auto gradient = [&](const Eigen::VectorXd& p) {
    return Eigen::VectorXd(bend_gradient<D>(unpack<D>(p), rest, k));
  };
  const Eigen::VectorXd g = gradient(q);
  const Eigen::MatrixXd h = bend_hessian<D>(unpack<D>(q), rest, k);
  const auto gc = compare_matrices(g, bristle::test::fd_gradient(energy, q, step), rtol, 1e-8 * k);
  const auto hc = compare_matrices(h, bristle::test::fd_jacobian(gradient, q, step), rtol, 1e-8 * k);
  INFO("gradient: ", gc.message);
  INFO("hessian: ", hc.message);
  CHECK(gc.ok);
  CHECK(hc.ok);
  CHECK((h - h.transpose()).cwiseAbs().maxCoeff() <= 1e-12 * std::max(1.0, h.cwiseAbs().maxCoeff()));
  // Rigid translations are in the null space of the gradient and Hessian.
  for (int axis = 0; axis < D; ++axis) {
    Vec<3 * D> t = Vec<3 * D>::Zero();
    for (int a = 0; a < 3; ++a) t[a * D + axis] = 1.0;
    CHECK(std::abs(g.dot(t)) <= 1e-9 * std::max(1.0, g.norm()));
    CHECK((h * t).norm() <= 1e-9 * std::max(1.0, h.norm()));
  }
}

}  // namespace

TEST_CASE("bend 2D: signed turning angle") {
  std::mt19937 rng(1);
  CHECK(turning_angle<2>({Vec2(0, 0), Vec2(1, 0), Vec2(1, 1)}) == doctest::Approx(kPi / 2));
  CHECK(turning_angle<2>({Vec2(0, 0), Vec2(1, 0), Vec2(1, -1)}) == doctest::Approx(-kPi / 2));
  CHECK(turning_angle<2>({Vec2(0, 0), Vec2(1, 0), Vec2(2, 0)}) == 0.0);
  for (double theta : {1e-7, 0.3, -1.2, 2.9, -3.1}) {
    const Vec6 q = make_stencil<2>(0.7, 1.3, theta, rng);
    CHECK(turning_angle<2>(unpack<2>(q)) == doctest::Approx(theta).epsilon(1e-9));
  }
}

TEST_CASE("bend 2D: deviation wraps into (-pi, pi]") {
  const BendStencil<2> s{Vec2(0, 0), Vec2(1, 0), Vec2(1 + std::cos(3.0), std::sin(3.0))};
  // theta = 3.0, rest = -3.0: the short way round is 6 - 2 pi.
  CHECK(angle_deviation<2>(s, -3.0) == doctest::Approx(6.0 - 2 * kPi));
  CHECK(angle_deviation<2>(s, 3.0) == doctest::Approx(0.0));
}

TEST_CASE("bend 3D: unsigned turning angle, exact limits") {
  CHECK(turning_angle<3>({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(2, 0, 0)}) == 0.0);
  CHECK(turning_angle<3>({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 0, 0.5)}) == doctest::Approx(kPi - std::atan(0.5)));
  CHECK(turning_angle<3>({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(1, -1, 0)}) == doctest::Approx(kPi / 2));
}

TEST_CASE("bend: gradient and Hessian match central differences") {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> u(0.3, 2.0);
  struct Case { const char* name; double theta; };
  const Case cases[] = {{"nearly straight", 1e-7}, {"slightly bent", 1e-3}, {"bent", 0.4},
                        {"strongly bent", 2.0}, {"nearly folded", kPi - 1e-3}};
  for (const Case& c : cases) {
    for (double rest : {0.0, 0.7, -0.5}) {
      for (int trial = 0; trial < 8; ++trial) {
        CAPTURE(c.name);
        CAPTURE(rest);
        CAPTURE(trial);
        const double l1 = u(rng), l2 = u(rng), k = 3.0 * u(rng);
        const double sign = trial % 2 ? 1.0 : -1.0;
        // Steps well below the smallest length scale of the stencil: near a fold the
        // energy varies on the scale l * (pi - theta).
        const double scale = std::min({1.0, std::abs(c.theta), kPi - std::abs(c.theta)});
        SUBCASE("2D") {
          const Vec6 q = make_stencil<2>(l1, l2, sign * c.theta, rng);
          check_bend<2>(q, rest, k, 1e-5, 1e-5 * std::max(scale, 1e-2));
        }
        SUBCASE("3D") {
          const double rest3 = std::abs(rest);
          // The unsigned angle with a rest angle has a cone at theta = 0 (physics-notes.md):
          // the Hessian grows like K rest / theta there, so finite differences need steps
          // far below theta; checked only where the energy is smooth on the step's scale.
          if (rest3 > 0.0 && c.theta < 1e-2) continue;
          const Vec9 q = make_stencil<3>(l1, l2, c.theta, rng);
          check_bend<3>(q, rest3, k, 1e-5, 1e-5 * std::max(scale, 1e-2));
        }
      }
    }
  }
}

TEST_CASE("bend 3D: straight stencils return the smooth limit K (w w^T) (x) (I - t t^T)") {
  const double l1 = 0.5, l2 = 0.75, k = 2.0;
  // tol: the relative distance allowed from the limit; O(theta) away from exactly straight.
  auto check_limit = [&](const BendStencil<3>& s, const Vec3& t, double tol) {
    const Mat9 h = bend_hessian<3>(s, 0.0, k);
    const Vec3 w(1 / l1, -1 / l1 - 1 / l2, 1 / l2);
    REQUIRE(h.allFinite());
    CHECK(bend_gradient<3>(s, 0.0, k).norm() <= tol * k * w.norm());
    const Mat3 p = Mat3::Identity() - t * t.transpose();
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        CHECK((h.block<3, 3>(3 * a, 3 * b) - k * w[a] * w[b] * p).norm() <= tol * k * w.squaredNorm());
  };
  SUBCASE("exactly straight (cross product exactly zero)") {
    const BendStencil<3> s{Vec3(0, 1, 0), Vec3(0, 1 + l1, 0), Vec3(0, 1 + l1 + l2, 0)};
    REQUIRE(turning_angle<3>(s) == 0.0);
    check_limit(s, Vec3::UnitY(), 1e-14);
  }
  SUBCASE("straight up to rounding (theta ~ 1e-16)") {
    const Vec3 t = Vec3(1, 2, -0.5).normalized();
    const Vec3 o(0.1, 0.2, 0.3);
    const BendStencil<3> s{o, o + l1 * t, o + (l1 + l2) * t};
    CHECK(turning_angle<3>(s) < 1e-14);
    check_limit(s, t, 1e-12);
  }
  SUBCASE("nearly straight (theta ~ 1e-7) is continuous with the limit") {
    const Vec3 t = Vec3::UnitX();
    const BendStencil<3> s{Vec3(0, 0, 0), Vec3(l1, 0, 0), Vec3(l1 + l2 * std::cos(1e-7), 0, l2 * std::sin(1e-7))};
    check_limit(s, t, 1e-6);
  }
}

TEST_CASE("bend 2D: exactly straight and exactly folded stencils give finite derivatives") {
  const BendStencil<2> straight{Vec2(0, 0), Vec2(1, 0), Vec2(2, 0)};
  CHECK(bend_hessian<2>(straight, 0.3, 1.0).allFinite());
  CHECK(bend_gradient<2>(straight, 0.3, 1.0).allFinite());
  const BendStencil<2> folded{Vec2(0, 0), Vec2(1, 0), Vec2(0.5, 0)};
  CHECK(bend_hessian<2>(folded, 0.0, 1.0).allFinite());
  CHECK(bend_gradient<2>(folded, 0.0, 1.0).allFinite());
  const BendStencil<3> folded3{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.5, 0, 0)};
  CHECK(bend_hessian<3>(folded3, 0.0, 1.0).allFinite());
  CHECK(bend_gradient<3>(folded3, 0.0, 1.0).allFinite());
}

TEST_CASE("bend: Hessian is indefinite away from rest; Gauss-Newton part is PSD") {
  std::mt19937 rng(3);
  const Vec9 q = make_stencil<3>(1.0, 1.0, 0.8, rng);
  const Mat9 h = bend_hessian<3>(unpack<3>(q), 0.0, 1.0);
  Eigen::SelfAdjointEigenSolver<Mat9> eh(h);
  CHECK(eh.eigenvalues().minCoeff() < -1e-3);
  Eigen::SelfAdjointEigenSolver<Mat9> egn(bend_hessian_gauss_newton<3>(unpack<3>(q), 0.0, 1.0));
  CHECK(egn.eigenvalues().minCoeff() >= -1e-12);
  const Vec6 q2 = make_stencil<2>(1.0, 1.0, 0.8, rng);
  Eigen::SelfAdjointEigenSolver<Mat6> e2(bend_hessian<2>(unpack<2>(q2), 0.2, 1.0));
  CHECK(e2.eigenvalues().minCoeff() < -1e-3);
}

// ---------------------------------------------------------------------------------------------
// Exactly straight, random, and near-straight stencils; and proof that the checks above can
// fail (the seeds' wrong formulas are rejected at the same tolerances).

namespace {

/// Central-difference comparison of a gradient and a Hessian (given as functions of the packed
/// stencil) against the energy, at the tolerance the checks in this file use.
struct FdResult {
  bristle::test::Comparison gradient, hessian;
  bool ok() const { return gradient.ok && hessian.ok; }
};

/// `gradient_floor`: the smallest gradient scale errors are measured against (where the true
/// gradient vanishes, the differences hold only rounding noise of the energy).
template <int D>
FdResult fd_compare(const Vec<3 * D>& q, double rest, double k, double rtol, double step,
                    const std::function<Eigen::VectorXd(const Eigen::VectorXd&)>& gradient,
                    const std::function<Eigen::MatrixXd(const Eigen::VectorXd&)>& hessian,
                    double gradient_floor = 0.0) {
  auto energy = [&](const Eigen::VectorXd& p) { return bend_energy<D>(unpack<D>(p), rest, k); };
  FdResult r;
  r.gradient = compare_matrices(gradient(q), bristle::test::fd_gradient(energy, q, step), rtol,
                                std::max(1e-8 * k, gradient_floor));
  r.hessian = compare_matrices(hessian(q), bristle::test::fd_jacobian(gradient, q, step), rtol, 1e-8 * k);
  return r;
}

template <int D>
FdResult fd_compare_bend(const Vec<3 * D>& q, double rest, double k, double rtol, double step,
                         double gradient_floor = 0.0) {
  return fd_compare<D>(
      q, rest, k, rtol, step,
      [&](const Eigen::VectorXd& p) { return Eigen::VectorXd(bend_gradient<D>(unpack<D>(p), rest, k)); },
      [&](const Eigen::VectorXd& p) { return Eigen::MatrixXd(bend_hessian<D>(unpack<D>(p), rest, k)); },
      gradient_floor);
}

/// Edge lengths and the turning angle of a packed stencil.
template <int D>
std::tuple<double, double, double> stencil_shape(const Vec<3 * D>& q) {
  const BendStencil<D> s = unpack<D>(q);
  return {(s.x1 - s.x0).norm(), (s.x2 - s.x1).norm(), turning_angle<D>(s)};
}

/// A step well below every length scale of the stencil: its edges, and near a fold the
/// distance l (pi - theta) over which the energy changes character.
template <int D>
double fd_step(const Vec<3 * D>& q) {
  const auto [l1, l2, theta] = stencil_shape<D>(q);
  return 1e-6 * std::min({l1, l2, std::max(1e-2, kPi - std::abs(theta))});
}

}  // namespace

TEST_CASE("bend: exactly straight stencils match central differences") {
  // Integer coordinates (times a power of two) make v1 and v2 exactly parallel in any
  // direction, so turning_angle is exactly 0 and the code takes its straight branch.
  const double s = 0.125, k = 1.7;
  SUBCASE("2D, with and without rest angles") {
    for (const Vec2& dir : {Vec2(1, 0), Vec2(0, -1), Vec2(3, 4), Vec2(-5, 12)}) {
      for (double rest : {0.0, 0.7, -0.5, 3.0, -3.0}) {
        CAPTURE(dir.transpose());
        CAPTURE(rest);
        Vec6 q;
        q << Vec2(1, -2) * s, (Vec2(1, -2) + 2 * dir) * s, (Vec2(1, -2) + 5 * dir) * s;
        REQUIRE(turning_angle<2>(unpack<2>(q)) == 0.0);
        // Without a rest angle the gradient is exactly zero: see the 3D case below for the floor.
        const FdResult r = fd_compare_bend<2>(q, rest, k, 1e-6, fd_step<2>(q), 1e-3 * k);
        INFO("gradient: ", r.gradient.message);
        INFO("hessian: ", r.hessian.message);
        CHECK(r.ok());
        // With a rest angle the straight rod is stressed: the gradient is not zero.
        CHECK((bend_gradient<2>(unpack<2>(q), rest, k).norm() > 0.0) == (rest != 0.0));
      }
    }
  }
  SUBCASE("3D, no rest angle (the energy is smooth there)") {
    for (const Vec3& dir : {Vec3(1, 0, 0), Vec3(0, 0, -1), Vec3(1, 2, 2), Vec3(-2, 3, 6), Vec3(4, -4, 7)}) {
      CAPTURE(dir.transpose());
      Vec9 q;
      q << Vec3(1, -2, 3) * s, (Vec3(1, -2, 3) + 2 * dir) * s, (Vec3(1, -2, 3) + 3 * dir) * s;
      REQUIRE(turning_angle<3>(unpack<3>(q)) == 0.0);
      // The gradient is exactly zero here; the differences of K theta^2 / 2 at theta ~ 1e-6
      // carry rounding noise of about 1e-12, so errors are measured against 1e-3 K (a wrong
      // gradient of 2e-9 K would still fail).
      const FdResult r = fd_compare_bend<3>(q, 0.0, k, 1e-6, fd_step<3>(q), 1e-3 * k);
      INFO("gradient: ", r.gradient.message);
      INFO("hessian: ", r.hessian.message);
      CHECK(r.ok());
      CHECK(bend_gradient<3>(unpack<3>(q), 0.0, k).norm() == 0.0);
    }
  }
  SUBCASE("3D with a rest angle: the cone tip gets the symmetric subgradient and a PSD stand-in") {
    // The unsigned angle is not differentiable at theta = 0 (physics-notes.md), so there is
    // nothing to compare with differences; the documented choice is checked instead.
    Vec9 q;
    q << Vec3(0, 0, 0), Vec3(0.25, 0.5, 0.5), Vec3(0.5, 1, 1);
    const BendStencil<3> st = unpack<3>(q);
    REQUIRE(turning_angle<3>(st) == 0.0);
    CHECK(bend_gradient<3>(st, 0.4, k).norm() == 0.0);
    const Mat9 h = bend_hessian<3>(st, 0.4, k);
    CHECK(h.allFinite());
    CHECK((h - h.transpose()).norm() == 0.0);
    Eigen::SelfAdjointEigenSolver<Mat9> e(h);
    CHECK(e.eigenvalues().minCoeff() >= -1e-12 * e.eigenvalues().maxCoeff());
    CHECK(e.eigenvalues().maxCoeff() > 0.0);
  }
}

TEST_CASE("bend: random stencils with random rest angles match central differences") {
  std::mt19937 rng(2024);
  std::uniform_real_distribution<double> u(-1.0, 1.0), angle(-kPi, kPi);
  int checked_2d = 0, checked_3d = 0;
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    const double k = 0.5 + 2.0 * std::abs(u(rng));
    {
      Vec6 q;
      for (int i = 0; i < 6; ++i) q[i] = u(rng);
      const auto [l1, l2, theta] = stencil_shape<2>(q);
      const double rest = trial % 3 == 0 ? 0.0 : angle(rng);
      CAPTURE(theta);
      CAPTURE(rest);
      if (std::min(l1, l2) > 0.05 && kPi - std::abs(theta) > 1e-2) {
        const FdResult r = fd_compare_bend<2>(q, rest, k, 1e-5, fd_step<2>(q));
        INFO("gradient: ", r.gradient.message);
        INFO("hessian: ", r.hessian.message);
        CHECK(r.ok());
        ++checked_2d;
      }
    }
    {
      Vec9 q;
      for (int i = 0; i < 9; ++i) q[i] = u(rng);
      const auto [l1, l2, theta] = stencil_shape<3>(q);
      const double rest = trial % 3 == 0 ? 0.0 : std::abs(angle(rng));
      CAPTURE(theta);
      CAPTURE(rest);
      // Away from the cone at theta = 0 (rest != 0) and from the fold, where the Hessian of
      // the unsigned angle is unbounded.
      if (std::min(l1, l2) > 0.05 && theta > 0.05 && kPi - theta > 1e-2) {
        const FdResult r = fd_compare_bend<3>(q, rest, k, 1e-5, fd_step<3>(q));
        INFO("gradient: ", r.gradient.message);
        INFO("hessian: ", r.hessian.message);
        CHECK(r.ok());
        ++checked_3d;
      }
    }
  }
  // Most random stencils qualify; the filter must not empty the test.
  CHECK(checked_2d >= 45);
  CHECK(checked_3d >= 40);
}

// The binormal b = c / |c| of c = v1 x v2 would keep the rounding noise of c along the edges;
// src/energy/bend.cpp removes its component along v1 before normalising.
TEST_CASE("bend 3D: a stencil straight up to rounding, in any direction, gives the smooth limit") {
  // Positions computed in floating point along a generic direction are collinear only up to
  // rounding: |v1 x v2| is then rounding noise (theta ~ 1e-16), and so is the binormal
  // b = (v1 x v2)/|v1 x v2|. The exact Hessian tends to K (w w^T) (x) (I - t t^T) whatever the
  // bending direction, so the result must not depend on that noise. Likewise for stencils
  // bent by a tiny angle, where the Hessian differs from the limit by O(theta) only.
  std::mt19937 rng(77);
  std::uniform_real_distribution<double> u(-1.0, 1.0), length(0.3, 2.0);
  const double k = 2.5;
  double worst_straight = 0.0, worst_bent = 0.0;
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3 t = Vec3(u(rng), u(rng), u(rng)).normalized();
    const Vec3 o(u(rng), u(rng), u(rng));
    const double l1 = length(rng), l2 = length(rng);
    const Vec3 w(1 / l1, -1 / l1 - 1 / l2, 1 / l2);
    const Mat3 p = Mat3::Identity() - t * t.transpose();
    auto distance_to_limit = [&](const BendStencil<3>& s) {
      const Mat9 h = bend_hessian<3>(s, 0.0, k);
      double worst = 0.0;
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          worst = std::max(worst, (h.block<3, 3>(3 * a, 3 * b) - k * w[a] * w[b] * p).norm());
      return worst / (k * w.squaredNorm());
    };
    // Straight up to rounding.
    const BendStencil<3> straight{o, o + l1 * t, o + (l1 + l2) * t};
    worst_straight = std::max(worst_straight, distance_to_limit(straight));
    // Bent by theta about a random axis perpendicular to t.
    const Vec3 axis = (Vec3(u(rng), u(rng), u(rng)).cross(t)).normalized();
    for (double theta : {1e-9, 1e-11, 1e-13}) {
      const Vec3 t2 = Eigen::AngleAxisd(theta, axis) * t;
      const BendStencil<3> bent{o, o + l1 * t, o + l1 * t + l2 * t2};
      worst_bent = std::max(worst_bent, distance_to_limit(bent));
    }
  }
  INFO("largest relative distance from the limit: straight up to rounding ", worst_straight,
       ", bent by 1e-13 .. 1e-9 rad ", worst_bent);
  // The exact Hessian is within O(theta) <= 1e-9 of the limit; rounding of the inputs alone
  // would allow about 1e-12.
  CHECK(worst_straight <= 1e-6);
  CHECK(worst_bent <= 1e-6);
}

TEST_CASE("bend: the finite-difference checks reject the seeds' wrong formulas") {
  // The tolerances of the checks above are tight enough to fail on the errors that
  // physics-notes.md lists in the seeds: each mutation below must be refused.
  std::mt19937 rng(5);
  const double k = 1.3;
  for (double theta : {0.4, 2.0}) {
    CAPTURE(theta);
    const Vec6 q2 = make_stencil<2>(0.8, 1.1, theta, rng);
    const Vec9 q3 = make_stencil<3>(0.8, 1.1, theta, rng);
    const double rest = 0.1;
    auto g2 = [&](const Eigen::VectorXd& p) { return Eigen::VectorXd(bend_gradient<2>(unpack<2>(p), rest, k)); };
    auto h2 = [&](const Eigen::VectorXd& p) { return Eigen::MatrixXd(bend_hessian<2>(unpack<2>(p), rest, k)); };
    auto g3 = [&](const Eigen::VectorXd& p) { return Eigen::VectorXd(bend_gradient<3>(unpack<3>(p), rest, k)); };
    auto h3 = [&](const Eigen::VectorXd& p) { return Eigen::MatrixXd(bend_hessian<3>(unpack<3>(p), rest, k)); };
    const double step2 = fd_step<2>(q2), step3 = fd_step<3>(q3);
    // The unmutated kernels pass.
    REQUIRE(fd_compare<2>(q2, rest, k, 1e-5, step2, g2, h2).ok());
    REQUIRE(fd_compare<3>(q3, rest, k, 1e-5, step3, g3, h3).ok());

    SUBCASE("seed 001: compact gradients, sin(theta) times the true ones") {
      auto sin_scaled = [&](const Eigen::VectorXd& p) {
        return Eigen::VectorXd(std::sin(turning_angle<3>(unpack<3>(p))) * g3(p));
      };
      CHECK_FALSE(fd_compare<3>(q3, rest, k, 1e-5, step3, sin_scaled, h3).gradient.ok);
    }
    SUBCASE("seed 004: the (i, i+1) block transposed") {
      for (int D : {2, 3}) {
        CAPTURE(D);
        auto transposed = [&](const Eigen::VectorXd& p) {
          Eigen::MatrixXd h = D == 2 ? h2(p) : h3(p);
          const Eigen::MatrixXd upper = h.block(D, 2 * D, D, D);
          h.block(D, 2 * D, D, D) = upper.transpose();
          h.block(2 * D, D, D, D) = upper;
          return h;
        };
        const bool ok = D == 2 ? fd_compare<2>(q2, rest, k, 1e-5, step2, g2, transposed).hessian.ok
                               : fd_compare<3>(q3, rest, k, 1e-5, step3, g3, transposed).hessian.ok;
        CHECK_FALSE(ok);
      }
    }
    SUBCASE("seed 004: the 3D term -b b^T / (|v1| |v2| sin theta) of block (i-1, i+1) struck out") {
      auto struck = [&](const Eigen::VectorXd& p) {
        const BendStencil<3> s = unpack<3>(p);
        const Vec3 v1 = s.x1 - s.x0, v2 = s.x2 - s.x1;
        const Vec3 b = v1.cross(v2).normalized();
        const double th = turning_angle<3>(s);
        const Mat3 h12 = -b * b.transpose() / (v1.norm() * v2.norm() * std::sin(th));
        // Its contribution to the node blocks: J^T [[0, H12], [H12, 0]] J.
        Eigen::MatrixXd contribution = Eigen::MatrixXd::Zero(9, 9);
        const double c[3][3] = {{0, 1, -1}, {1, -2, 1}, {-1, 1, 0}};
        for (int a = 0; a < 3; ++a)
          for (int bb = 0; bb < 3; ++bb) contribution.block<3, 3>(3 * a, 3 * bb) = c[a][bb] * h12;
        return Eigen::MatrixXd(h3(p) - k * (th - rest) * contribution);
      };
      CHECK_FALSE(fd_compare<3>(q3, rest, k, 1e-5, step3, g3, struck).hessian.ok);
    }
    SUBCASE("seed 003: the interior-angle gradient with both signs flipped") {
      auto flipped = [&](const Eigen::VectorXd& p) {
        Eigen::VectorXd g = g2(p);
        g.head<2>() *= -1.0;
        g.tail<2>() *= -1.0;
        g.segment<2>(2) = -g.head<2>() - g.tail<2>();  // keeps translation invariance
        return g;
      };
      CHECK_FALSE(fd_compare<2>(q2, rest, k, 1e-5, step2, flipped, h2).gradient.ok);
    }
  }
  SUBCASE("seed 004: an eps-normalised binormal scales the gradient near straight") {
    const double eps = 1e-6;
    const Vec9 q = make_stencil<3>(1.0, 1.0, 1e-7, rng);
    auto g3 = [&](const Eigen::VectorXd& p) { return Eigen::VectorXd(bend_gradient<3>(unpack<3>(p), 0.0, k)); };
    auto h3 = [&](const Eigen::VectorXd& p) { return Eigen::MatrixXd(bend_hessian<3>(unpack<3>(p), 0.0, k)); };
    auto eps_scaled = [&](const Eigen::VectorXd& p) {
      const BendStencil<3> s = unpack<3>(p);
      const double c = (s.x1 - s.x0).cross(s.x2 - s.x1).norm();
      return Eigen::VectorXd(g3(p) * (c / std::max(c, eps)));
    };
    REQUIRE(fd_compare<3>(q, 0.0, k, 1e-5, 1e-7, g3, h3).ok());
    CHECK_FALSE(fd_compare<3>(q, 0.0, k, 1e-5, 1e-7, eps_scaled, h3).gradient.ok);
  }
}
