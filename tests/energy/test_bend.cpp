#include <cmath>
#include <random>

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
