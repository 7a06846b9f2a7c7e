// The constant-force potential (gravity m g, point loads F): E = -f . x, against central
// differences in 2D and 3D, and its sign (a force lowers the energy along its direction).

#include <random>

#include <doctest/doctest.h>

#include "bristle/energy/gravity.hpp"
#include "support/finite_difference.hpp"

using namespace bristle;
using bristle::test::compare_matrices;

namespace {

template <int D>
void check_constant_force(const Vec<D>& x, const Vec<D>& f) {
  auto energy = [&](const Eigen::VectorXd& p) { return constant_force_energy<D>(Vec<D>(p), f); };
  auto gradient = [&](const Eigen::VectorXd& p) { return Eigen::VectorXd(constant_force_gradient<D>(Vec<D>(p), f)); };
  const auto g = compare_matrices(gradient(x), bristle::test::fd_gradient(energy, x, 1e-4), 1e-9, 1e-12);
  INFO("gradient: ", g.message);
  CHECK(g.ok);
  // The Hessian is zero (the term only enters the gradient): the gradient does not change.
  const Eigen::MatrixXd h = bristle::test::fd_jacobian(gradient, x, 1e-4);
  CHECK(h.cwiseAbs().maxCoeff() == 0.0);
}

}  // namespace

TEST_CASE("gravity and point loads: E = -f . x matches central differences, 2D and 3D") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-10.0, 10.0);
  for (int trial = 0; trial < 20; ++trial) {
    check_constant_force<2>(Vec2(u(rng), u(rng)), Vec2(u(rng), u(rng)));
    check_constant_force<3>(Vec3(u(rng), u(rng), u(rng)), Vec3(u(rng), u(rng), u(rng)));
  }
}

TEST_CASE("gravity: a mass lifted against gravity gains m g h") {
  const double m = 0.25, h = 0.4;
  const Vec3 g(0.0, -9.81, 0.0);
  const Vec3 low(0.1, 0.2, 0.3), high = low + Vec3(0.0, h, 0.0);
  CHECK(constant_force_energy<3>(high, m * g) - constant_force_energy<3>(low, m * g) ==
        doctest::Approx(m * 9.81 * h).epsilon(1e-14));
  // The force is minus the gradient: it points down.
  CHECK(-constant_force_gradient<3>(low, m * g) == m * g);
}
