#include <random>

#include <doctest/doctest.h>
#include <Eigen/Eigenvalues>

#include "bristle/energy/stretch.hpp"
#include "support/finite_difference.hpp"

using namespace bristle;
using bristle::test::compare_matrices;

namespace {

template <int D>
StretchStencil<D> unpack(const Eigen::VectorXd& q) {
  return {q.head<D>(), q.segment<D>(D)};
}

template <int D>
void check_stretch(const Vec<2 * D>& q, double rest_length, double k) {
  auto energy = [&](const Eigen::VectorXd& p) { return stretch_energy<D>(unpack<D>(p), rest_length, k); };
  auto gradient = [&](const Eigen::VectorXd& p) {
    return Eigen::VectorXd(stretch_gradient<D>(unpack<D>(p), rest_length, k));
  };
  const double step = 1e-6 * std::max(1.0, q.cwiseAbs().maxCoeff());
  const auto g = compare_matrices(gradient(q), bristle::test::fd_gradient(energy, q, step), 1e-6,
                                  1e-3 * k * rest_length);
  INFO(g.message);
  CHECK(g.ok);
  const Eigen::MatrixXd h = stretch_hessian<D>(unpack<D>(q), rest_length, k);
  const auto hc = compare_matrices(h, bristle::test::fd_jacobian(gradient, q, step), 1e-6, 1e-3 * k);
  INFO(hc.message);
  CHECK(hc.ok);
  CHECK((h - h.transpose()).norm() <= 1e-12 * h.norm());
}

}  // namespace

TEST_CASE("stretch: gradient and Hessian match central differences, 2D and 3D") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (double ratio : {0.5, 0.999999, 1.0, 1.3, 3.0}) {
    CAPTURE(ratio);
    for (int trial = 0; trial < 10; ++trial) {
      Vec6 q3;
      for (int i = 0; i < 6; ++i) q3[i] = u(rng);
      const double len3 = (q3.tail<3>() - q3.head<3>()).norm();
      check_stretch<3>(q3, len3 / ratio, 1e3 * (1.0 + trial));
      Vec4 q2;
      for (int i = 0; i < 4; ++i) q2[i] = u(rng);
      const double len2 = (q2.tail<2>() - q2.head<2>()).norm();
      check_stretch<2>(q2, len2 / ratio, 10.0);
    }
  }
}

TEST_CASE("stretch: projected Hessian is PSD, equals the exact one when stretched, and is the nearest PSD matrix") {
  const double k = 50.0;
  SUBCASE("compressed edge: exact is indefinite, projection clamps the transverse part") {
    StretchStencil<3> s{Vec3(0, 0, 0), Vec3(0.5, 0.2, 0.1)};
    const double rest = 1.0;
    const Mat6 exact = stretch_hessian<3>(s, rest, k);
    const Mat6 projected = stretch_hessian_projected<3>(s, rest, k);
    Eigen::SelfAdjointEigenSolver<Mat6> e_exact(exact), e_proj(projected);
    CHECK(e_exact.eigenvalues().minCoeff() < -1e-6);
    CHECK(e_proj.eigenvalues().minCoeff() >= -1e-12 * k);
    // Nearest PSD: eigen-clamp of the exact Hessian gives the same matrix.
    Vec6 clamped = e_exact.eigenvalues().cwiseMax(0.0);
    const Mat6 nearest = e_exact.eigenvectors() * clamped.asDiagonal() * e_exact.eigenvectors().transpose();
    CHECK((nearest - projected).norm() <= 1e-10 * k);
  }
  SUBCASE("stretched edge: the projection changes nothing") {
    StretchStencil<2> s{Vec2(0, 0), Vec2(1.5, 0.3)};
    CHECK((stretch_hessian<2>(s, 1.0, k) - stretch_hessian_projected<2>(s, 1.0, k)).norm() == 0.0);
  }
}
