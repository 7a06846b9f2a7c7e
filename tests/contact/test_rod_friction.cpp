// Friction between rods (issue 16): IPC's lagged friction potential (energy/rod_friction.hpp,
// docs/contact.md "Friction between rods"). Its gradient and Hessian against central
// differences, the bound on its force, and a rod on inclined rails that sticks below the
// friction angle and slides with a = g (sin a - mu cos a) above it.

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "bristle/contact/segment_distance_derivatives.hpp"
#include "bristle/energy/rod_contact.hpp"
#include "bristle/energy/rod_friction.hpp"
#include "bristle/integrator/implicit_euler.hpp"
#include "support/finite_difference.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

/// A pair of unit-size segments whose closest points are inside both (3D: crossing, 2D: an
/// end of Q next to the middle of P), and the barrier constants that put their surfaces half
/// of g^ apart.
template <int D>
Vec<4 * D> contact_pair(std::mt19937& rng, RodContactConstants& c) {
  std::uniform_real_distribution<double> u(-0.2, 0.2);
  Vec<4 * D> x;
  if constexpr (D == 3)
    x << -1 + u(rng), u(rng), u(rng), 1 + u(rng), u(rng), u(rng), u(rng), -1 + u(rng), 0.5 + u(rng), u(rng),
        1 + u(rng), 0.5 + u(rng);
  else
    x << -1 + u(rng), u(rng), 1 + u(rng), u(rng), u(rng), 0.3 + u(rng), 0.5 + u(rng), 1.3 + u(rng);
  const double d = std::sqrt(segment_distance_squared<D>(x, false).value);
  c.gap_hat = 0.01 * d;
  c.reach = d - 0.5 * c.gap_hat;
  c.stiffness = 3.0;
  return x;
}

/// x0 moved so that the slip |u| is `target` (the tangential part of a random displacement,
/// scaled), plus a normal part that friction does not see.
template <int D>
Vec<4 * D> slipped(const Vec<4 * D>& x0, const RodFrictionConstants& c, double target, std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  Vec<4 * D> dx;
  for (int k = 0; k < 4 * D; ++k) dx[k] = n(rng);
  const double y = rod_friction_local<D>(Vec<4 * D>(x0 + dx), c, false).slip;
  return x0 + (target / y) * dx;
}

template <int D>
void check_friction_derivatives(double slip_over_e, int seed) {
  std::mt19937 rng(seed);
  constexpr double kMu = 0.4, kE = 1e-3, kStep = 1e-8;
  for (int trial = 0; trial < 10; ++trial) {
    RodContactConstants contact;
    const Vec<4 * D> x0 = contact_pair<D>(rng, contact);
    const auto lagged = lag_rod_friction<D>(x0, contact, kMu, kE);
    REQUIRE(lagged.has_value());
    const RodFrictionConstants& c = *lagged;
    // The lagged normal force is the barrier's at x0; T is orthonormal and tangent.
    const double d = std::sqrt(segment_distance_squared<D>(x0, false).value);
    CHECK(c.force == doctest::Approx(-kMu * contact.stiffness * barrier_function(d - contact.reach, contact.gap_hat).db));
    const Mat<D, D - 1> T = Eigen::Map<const Mat<D, D - 1>>(c.tangent.data());
    const Vec<4 * D> grad_d = segment_distance_squared<D>(x0, false).gradient;  // 2 w_k r: normal
    CHECK((T.transpose() * T - Mat<D - 1, D - 1>::Identity()).norm() < 1e-12);
    CHECK((T.transpose() * grad_d.template segment<D>(0)).norm() < 1e-12 * grad_d.norm());
    const Vec<4 * D> x = slipped<D>(x0, c, slip_over_e * kE, rng);
    const RodFrictionLocal<D> local = rod_friction_local<D>(x, c, true);
    const auto energy = [&](const Eigen::VectorXd& y) { return rod_friction_energy<D>(Vec<4 * D>(y), c); };
    const auto gradient = [&](const Eigen::VectorXd& y) {
      return Eigen::VectorXd(rod_friction_local<D>(Vec<4 * D>(y), c, false).gradient);
    };
    const Comparison g = compare_matrices(local.gradient, fd_gradient(energy, x, kStep), 1e-6);
    // Relative to the Hessian's scale mu lambda / max(|u|, e): slipping in 2D it is zero.
    const double scale = c.force / std::max(local.slip, kE);
    const Comparison h = compare_matrices(local.hessian, fd_jacobian(gradient, x, kStep), 1e-5, scale);
    CAPTURE(D);
    CAPTURE(slip_over_e);
    CAPTURE(g.message);
    CAPTURE(h.message);
    CHECK(local.slip == doctest::Approx(slip_over_e * kE));
    CHECK(local.energy > 0.0);
    CHECK(g.ok);
    CHECK(h.ok);
    // PSD as it is (docs/contact.md): eigenvalues mu lambda f2 and mu lambda f1 / y.
    Eigen::SelfAdjointEigenSolver<Mat<4 * D, 4 * D>> eigen(local.hessian);
    CHECK(eigen.eigenvalues().minCoeff() >= -1e-12 * scale);
  }
}

}  // namespace

TEST_CASE("rod friction: gradient and Hessian match central differences, sticking and slipping, 2D and 3D") {
  for (const double slip : {0.05, 0.5, 0.9, 1.5, 20.0}) {
    check_friction_derivatives<3>(slip, 7 + static_cast<int>(100 * slip));
    check_friction_derivatives<2>(slip, 11 + static_cast<int>(100 * slip));
  }
}

TEST_CASE("rod friction: zero at no slip, and the force on each segment never above mu lambda") {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> log_slip(-6.0, 1.0);
  constexpr double kE = 1e-3;
  RodContactConstants contact;
  const Vec<12> x0 = contact_pair<3>(rng, contact);
  const RodFrictionConstants c = *lag_rod_friction<3>(x0, contact, 0.5, kE);
  const RodFrictionLocal<3> rest = rod_friction_local<3>(x0, c, true);
  CHECK(rest.energy == 0.0);
  CHECK(rest.gradient.isZero());
  double largest = 0.0;
  for (int k = 0; k < 2000; ++k) {
    const Vec<12> x = slipped<3>(x0, c, std::pow(10.0, log_slip(rng)), rng);
    const RodFrictionLocal<3> local = rod_friction_local<3>(x, c, false);
    // The force on segment P is the sum over its two end points; Q gets the opposite.
    const Vec3 on_p = local.gradient.segment<3>(0) + local.gradient.segment<3>(3);
    const Vec3 on_q = local.gradient.segment<3>(6) + local.gradient.segment<3>(9);
    CHECK(on_p.norm() <= c.force * (1.0 + 1e-12));
    CHECK((on_p + on_q).norm() <= 1e-12 * c.force);
    largest = std::max(largest, on_p.norm() / c.force);
  }
  CHECK(largest > 0.999);  // slipping contacts reach the bound
}

namespace {

constexpr double kRadius = 0.001;
constexpr double kG = 9.81;
constexpr double kDt = 1.0 / 60.0;

struct Incline {
  std::vector<double> times, centre;  // the free rod's centre of mass along the rails, per step
  int failed_steps = 0;
  double length = 0.0;
};

/// Two held rails along x (y = -/+ 3 cm, 1 m long, 5 cm edges), a free rod along y across both
/// (12 cm, 2 cm edges, crossing the rails mid-edge) resting on them; gravity tilted by `angle`
/// about y, so "down the incline" is +x. 3D, nylon, 1 mm radius.
Incline slide(double angle, double mu, double duration, RodContactMethod method = RodContactMethod::Barrier) {
  const Material nylon = make_material(1140.0, kRadius, 3.0e9);
  std::vector<Rod> rods;
  for (const double y : {-0.03, 0.03}) {
    std::vector<int> all;
    for (int i = 0; i <= 20; ++i) all.push_back(i);
    rods.push_back(straight_rod(20, Vec3(-0.1, y, 0), Vec3(0.9, y, 0), 3, all, nylon, y < 0 ? "left" : "right"));
  }
  // Resting a quarter of g^ above the rails.
  const double z = 2.0 * kRadius * (1.0 + 0.25 * 0.01);
  rods.push_back(straight_rod(6, Vec3(0.025, -0.06, z), Vec3(0.025, 0.06, z), 3, {}, nylon, "free"));
  Model model = make_model(3, std::move(rods), Vec3(kG * std::sin(angle), 0, -kG * std::cos(angle)));
  model.rod_contact.enabled = true;
  model.rod_contact.friction = mu;
  model.rod_contact.method = method;
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  Incline r;
  r.length = model.rods[2].rest_length();
  auto centre = [&] {
    double mass = 0.0, sum = 0.0;
    for (int i = 0; i < model.rods[2].vertex_count(); ++i) {
      mass += model.rods[2].vertex_mass(i);
      sum += model.rods[2].vertex_mass(i) * vertex_position(model, state.positions, 2, i).x();
    }
    return sum / mass;
  };
  r.times.push_back(0.0);
  r.centre.push_back(centre());
  const int steps = static_cast<int>(std::lround(duration / kDt));
  for (int k = 0; k < steps; ++k) {
    const StepReport report = integrator.step(state, kDt);
    if (!report.ok) {
      ++r.failed_steps;
      MESSAGE("step " << k << " failed: " << report.failure);
      break;
    }
    r.times.push_back(state.time);
    r.centre.push_back(centre());
  }
  return r;
}

/// The acceleration of a least-squares fit x = c0 + c1 t + a t^2 / 2 over [from, to].
double fitted_acceleration(const Incline& r, double from, double to) {
  std::vector<int> rows;
  for (int k = 0; k < static_cast<int>(r.times.size()); ++k)
    if (r.times[k] >= from - 1e-9 && r.times[k] <= to + 1e-9) rows.push_back(k);
  Eigen::MatrixXd A(rows.size(), 3);
  Eigen::VectorXd b(rows.size());
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const double t = r.times[rows[i]] - from;
    A.row(i) << 1.0, t, 0.5 * t * t;
    b[i] = r.centre[rows[i]];
  }
  return A.colPivHouseholderQr().solve(b)[2];
}

/// The rod on rails tilted by `angle` sticks: it creeps less than `bound` of its length in 1 s.
void check_sticks(double angle, double mu, RodContactMethod method, double bound) {
  const Incline r = slide(angle, mu, 1.0, method);
  REQUIRE(r.failed_steps == 0);
  const double moved = std::abs(r.centre.back() - r.centre.front());
  MESSAGE("moved " << moved * 1e3 << " mm in 1 s (" << 100.0 * moved / r.length << "% of its length)");
  CHECK(moved < bound * r.length);
}

/// The rod slides down rails tilted by `angle` with g (sin a - mu cos a), fitted over 0.1 to
/// 0.6 s, within 5%.
void check_slides(double angle, double mu, RodContactMethod method) {
  const Incline r = slide(angle, mu, 0.6, method);
  REQUIRE(r.failed_steps == 0);
  const double a = fitted_acceleration(r, 0.1, 0.6);
  const double expected = kG * (std::sin(angle) - mu * std::cos(angle));
  MESSAGE("acceleration " << a << " m/s^2, g (sin a - mu cos a) = " << expected << " (ratio " << a / expected << ")");
  CHECK(std::abs(a / expected - 1.0) < 0.05);
}

}  // namespace

TEST_CASE("rod friction: a rod across inclined rails sticks below the friction angle, slides at g (sin a - mu cos a) above") {
  constexpr double kMu = 0.5;
  const RodContactMethod barrier = RodContactMethod::Barrier;
  SUBCASE("tan a = 0.3 < mu: sticks") { check_sticks(std::atan(0.3), kMu, barrier, 0.01); }
  SUBCASE("tan a = 0.8 > mu: slides") { check_slides(std::atan(0.8), kMu, barrier); }
  SUBCASE("without friction it slides at g sin a") { check_slides(std::atan(0.3), 0.0, barrier); }
}

TEST_CASE("rod contact as constraints: a rod across inclined rails sticks below the friction angle, slides at g (sin a - mu cos a) above") {
  constexpr double kMu = 0.5;
  const RodContactMethod constraints = RodContactMethod::Constraints;
  // Sticking is exact here (zero slip in each step's linearisation), not a creep.
  SUBCASE("tan a = 0.3 < mu: sticks") { check_sticks(std::atan(0.3), kMu, constraints, 1e-4); }
  SUBCASE("tan a = 0.8 > mu: slides") { check_slides(std::atan(0.8), kMu, constraints); }
  SUBCASE("just above the friction angle (tan a = 0.55) it slides, slowly") {
    check_slides(std::atan(0.55), kMu, constraints);
  }
  SUBCASE("without friction it slides at g sin a") { check_slides(std::atan(0.3), 0.0, constraints); }
}
