// Rod-rod contact (issue 16): the segment distance's derivatives, the capsule barrier's
// gradient and Hessian against central finite differences, the additive CCD, and rods dropped
// onto rods at a large step.

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "bristle/contact/box_pairs.hpp"
#include "bristle/contact/capsule_ccd.hpp"
#include "bristle/contact/contact_check.hpp"
#include "bristle/contact/rod_contact.hpp"
#include "bristle/contact/rod_overlaps.hpp"
#include "bristle/contact/segment_distance.hpp"
#include "bristle/contact/segment_distance_derivatives.hpp"
#include "bristle/energy/rod_contact.hpp"
#include "bristle/integrator/implicit_euler.hpp"
#include "support/finite_difference.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

/// Which parameters of the closest points are inside their segments.
template <int D>
std::pair<bool, bool> minimiser_type(const Vec<4 * D>& x) {
  const SegmentDistanceSquared<D> d = segment_distance_squared<D>(x, false);
  return {d.s > 0.0 && d.s < 1.0, d.t > 0.0 && d.t < 1.0};
}

/// Whether the minimiser's type is the same at x and at x +- step along every coordinate (a
/// central difference across a change of type compares two different formulas).
template <int D>
bool same_type_nearby(const Vec<4 * D>& x, double step) {
  const auto type = minimiser_type<D>(x);
  for (int k = 0; k < 4 * D; ++k)
    for (const double sign : {-1.0, 1.0}) {
      Vec<4 * D> y = x;
      y[k] += sign * step;
      if (minimiser_type<D>(y) != type) return false;
    }
  return true;
}

enum class Layout { Crossing, EndToSide, EndToEnd, NearlyParallel };

/// A random pair of segments of unit size whose closest points are of the given layout.
template <int D>
Vec<4 * D> random_pair(Layout layout, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto noise = [&](double scale) {
    Vec<D> v;
    for (int k = 0; k < D; ++k) v[k] = scale * u(rng);
    return v;
  };
  Vec<D> ex = Vec<D>::Zero(), ey = Vec<D>::Zero();
  ex[0] = 1.0;
  ey[1] = 1.0;
  Vec<D> lift = Vec<D>::Zero();
  lift[D - 1] = D == 3 ? 0.3 : 0.0;
  Vec<4 * D> x;
  switch (layout) {
    case Layout::Crossing:  // 3D only: skew segments crossing over each other
      x << -ex + noise(0.2), ex + noise(0.2), -ey + lift + noise(0.2), ey + lift + noise(0.2);
      break;
    case Layout::EndToSide:  // p0 next to the middle of Q, P pointing away from it
      x << 0.3 * ey + noise(0.1), 1.3 * ey + 0.5 * ex + noise(0.2), -ex + noise(0.1), ex + noise(0.1);
      if (D == 3) x.template segment<D>(0) += lift;
      break;
    case Layout::EndToEnd:  // p1 next to q0, both pointing away
      x << -ex - 0.5 * ey + noise(0.1), 0.2 * ey + noise(0.05), 0.2 * ey + 0.3 * ex + 0.3 * ey + noise(0.05),
          ex + ey + noise(0.1);
      break;
    case Layout::NearlyParallel: {  // side by side, a thousandth of a radian apart
      const double angle = 1e-3 * u(rng);
      Vec<D> turned = ex;
      turned[1] = std::sin(angle);
      turned[0] = std::cos(angle);
      const Vec<D> offset = 0.2 * ey + lift;
      const double shift = 0.5 * u(rng);
      x << -ex, ex, -turned + offset + shift * ex, turned + offset + shift * ex;
      break;
    }
  }
  return x;
}

template <int D>
void check_distance_derivatives(Layout layout, int wanted) {
  std::mt19937 rng(1234 + static_cast<int>(layout) + 10 * D);
  constexpr double kStep = 1e-6;
  int tested = 0;
  for (int trial = 0; trial < 40 * wanted && tested < wanted; ++trial) {
    const Vec<4 * D> x = random_pair<D>(layout, rng);
    if (!same_type_nearby<D>(x, 2.0 * kStep)) continue;
    const SegmentDistanceSquared<D> analytic = segment_distance_squared<D>(x, true);
    const auto value = [](const Eigen::VectorXd& y) { return segment_distance_squared<D>(Vec<4 * D>(y), false).value; };
    const auto gradient = [](const Eigen::VectorXd& y) {
      return Eigen::VectorXd(segment_distance_squared<D>(Vec<4 * D>(y), false).gradient);
    };
    const Comparison g = compare_matrices(analytic.gradient, fd_gradient(value, x, kStep), 1e-6, 1e-3);
    const Comparison h = compare_matrices(analytic.hessian, fd_jacobian(gradient, x, kStep), 1e-5, 1e-3);
    CAPTURE(D);
    CAPTURE(static_cast<int>(layout));
    CAPTURE(g.message);
    CAPTURE(h.message);
    CHECK(g.ok);
    CHECK(h.ok);
    ++tested;
  }
  CHECK(tested == wanted);
}

template <int D>
void check_barrier_derivatives(Layout layout, int wanted) {
  std::mt19937 rng(99 + static_cast<int>(layout) + 10 * D);
  std::uniform_real_distribution<double> fraction(0.05, 0.95);
  constexpr double kStep = 1e-8;
  int tested = 0;
  for (int trial = 0; trial < 40 * wanted && tested < wanted; ++trial) {
    const Vec<4 * D> x = random_pair<D>(layout, rng);
    if (!same_type_nearby<D>(x, 2.0 * kStep)) continue;
    // Radii that put the surfaces a random fraction of g^ apart.
    const double d = std::sqrt(segment_distance_squared<D>(x, false).value);
    RodContactConstants c;
    c.gap_hat = 0.01 * d;
    c.reach = d - fraction(rng) * c.gap_hat;
    c.stiffness = 3.0;
    const RodContactLocal<D> local = rod_contact_local<D>(x, c, true, HessianProjection::Exact);
    const auto energy = [&](const Eigen::VectorXd& y) { return rod_contact_energy<D>(Vec<4 * D>(y), c); };
    const auto gradient = [&](const Eigen::VectorXd& y) {
      return Eigen::VectorXd(rod_contact_local<D>(Vec<4 * D>(y), c, false, HessianProjection::Exact).gradient);
    };
    const Comparison g = compare_matrices(local.gradient, fd_gradient(energy, x, kStep), 1e-5);
    const Comparison h = compare_matrices(local.hessian, fd_jacobian(gradient, x, kStep), 1e-4);
    CAPTURE(D);
    CAPTURE(static_cast<int>(layout));
    CAPTURE(g.message);
    CAPTURE(h.message);
    CHECK(local.energy > 0.0);
    CHECK(g.ok);
    CHECK(h.ok);
    // The projected Hessian: PSD, and equal to the exact one where that is PSD already.
    for (const HessianProjection projection : {HessianProjection::Projected, HessianProjection::BendingModes}) {
      const RodContactLocal<D> projected = rod_contact_local<D>(x, c, true, projection);
      Eigen::SelfAdjointEigenSolver<Mat<4 * D, 4 * D>> eigen(projected.hessian);
      CHECK(eigen.eigenvalues().minCoeff() >= -1e-9 * eigen.eigenvalues().cwiseAbs().maxCoeff());
      // Every variant resists motion along the normal (grad d): that is what keeps rods apart.
      const Vec<4 * D> normal = local.gradient.normalized();
      CHECK(normal.dot(projected.hessian * normal) > 0.0);
    }
    ++tested;
  }
  CHECK(tested == wanted);
}

}  // namespace

TEST_CASE("segment distance squared: gradient and Hessian match central differences in 2D and 3D") {
  for (const Layout layout : {Layout::Crossing, Layout::EndToSide, Layout::EndToEnd, Layout::NearlyParallel})
    check_distance_derivatives<3>(layout, 20);
  for (const Layout layout : {Layout::EndToSide, Layout::EndToEnd, Layout::NearlyParallel})
    check_distance_derivatives<2>(layout, 20);
}

TEST_CASE("capsule barrier: gradient and Hessian match central differences; the projection is PSD") {
  for (const Layout layout : {Layout::Crossing, Layout::EndToSide, Layout::EndToEnd, Layout::NearlyParallel})
    check_barrier_derivatives<3>(layout, 10);
  for (const Layout layout : {Layout::EndToSide, Layout::EndToEnd, Layout::NearlyParallel})
    check_barrier_derivatives<2>(layout, 10);
}

TEST_CASE("capsule barrier: zero beyond g^, infinite at touch, C1 at g^") {
  Vec<12> x;
  x << -1, 0, 0, 1, 0, 0, 0, -1, 0.5, 0, 1, 0.5;  // centre lines 0.5 apart
  RodContactConstants c{0.47, 0.05, 2.0};
  CHECK(rod_contact_energy<3>(x, c) > 0.0);
  c.reach = 0.449;  // gap beyond g^
  CHECK(rod_contact_energy<3>(x, c) == 0.0);
  CHECK(rod_contact_local<3>(x, c, true, HessianProjection::Projected).gradient.isZero());
  c.reach = 0.5;  // touching
  CHECK(std::isinf(rod_contact_energy<3>(x, c)));
}

TEST_CASE("capsule barrier: the primal-dual stiffness along the normal (docs/contact.md)") {
  const double gap_hat = 1e-5, kappa = 2.0;
  for (const double u : {1e-4, 1e-2, 0.1, 0.5, 0.9}) {
    CAPTURE(u);
    const double g = u * gap_hat;
    const BarrierValue b = barrier_function(g, gap_hat);
    const double phi = -kappa * b.db;
    // psi = d(g phi)/dg, formed without cancellation, against central differences.
    auto g_phi = [&](double at) { return -kappa * at * barrier_function(at, gap_hat).db; };
    const double step = 1e-5 * g;
    const double difference = (g_phi(g + step) - g_phi(g - step)) / (2.0 * step);
    CHECK(barrier_force_slope(g, gap_hat, kappa) ==
          doctest::Approx(difference).epsilon(1e-6).scale(1e-9 * (phi + kappa * g * b.d2b)));
    RodContactConstants c{0.0, gap_hat, kappa};
    // No estimate, or the estimate the barrier carries there: the barrier's own stiffness.
    CHECK(normal_stiffness(g, b, c) == kappa * b.d2b);
    c.force = phi;
    CHECK(normal_stiffness(g, b, c) == doctest::Approx(kappa * b.d2b).epsilon(1e-9));
    // More force than the barrier carries (the gap too wide for it): stiffer, growing with it.
    c.force = 10.0 * phi;
    const double stiffer = normal_stiffness(g, b, c);
    CHECK(stiffer > kappa * b.d2b);
    c.force = 100.0 * phi;
    CHECK(normal_stiffness(g, b, c) > stiffer);
    // Less (the gap too narrow): softer, never negative.
    c.force = 0.0;
    CHECK(normal_stiffness(g, b, c) >= 0.0);
    CHECK(normal_stiffness(g, b, c) < kappa * b.d2b);
  }
  // One Newton step on F g + kappa b(g), a pair pressed by F whose barrier balances it at
  // g*: with the primal-dual stiffness and lambda = F it lands near g* from below and from
  // a few g* above, where the barrier's own stiffness takes a gap far below g* up by a factor
  // of two at most, and from above overshoots through zero.
  for (const double rest : {1e-3, 1e-2, 0.1}) {
    const double g_star = rest * gap_hat;
    const double force = -kappa * barrier_function(g_star, gap_hat).db;
    for (const double start : {0.01, 0.2, 5.0}) {
      CAPTURE(rest);
      CAPTURE(start);
      const double g0 = start * g_star;
      const BarrierValue b = barrier_function(g0, gap_hat);
      const double residual = force + kappa * b.db;  // d/dg of F g + kappa b
      RodContactConstants c{0.0, gap_hat, kappa};
      c.force = force;
      const double primal_dual = g0 - residual / normal_stiffness(g0, b, c);
      const double primal = g0 - residual / (kappa * b.d2b);
      // Near g^ the barrier is not log-like (g phi(g) not constant): there the step only
      // goes toward g*, without passing it.
      if (g0 <= 0.1 * gap_hat)
        CHECK(primal_dual / g_star == doctest::Approx(1.0).epsilon(0.2));
      else
        CHECK((primal_dual > g_star && primal_dual < g0));
      if (start < 1.0) CHECK(primal / g_star < 0.4);
      if (start > 1.0) CHECK(primal < 0.0);
    }
  }
}

TEST_CASE("capsule CCD: a segment that would tunnel through another in one step is stopped before touching") {
  const Vec3 p0(-1, 0, 0), p1(1, 0, 0), q0(0, -1, 0.3), q1(0, 1, 0.3);
  const Vec3 down(0, 0, -0.6), none = Vec3::Zero();
  const double reach = 0.2;
  // Touches at z = 0.2, t = 1/6; the CCD stops where the gap is 0.1 of the start's (z = 0.21).
  const double t = capsule_time_of_impact(p0, p1, q0, q1, none, none, down, down, reach);
  CHECK(t <= 1.0 / 6.0);
  CHECK(t >= 0.14);
  const double gap = segment_distance(p0, p1, q0 + t * down, q1 + t * down).distance - reach;
  CHECK(gap >= 0.1 * 0.1 - 1e-12);
  // Moving apart, or sliding along without approaching: the whole step.
  CHECK(capsule_time_of_impact(p0, p1, q0, q1, none, none, -down, -down, reach) == 1.0);
  CHECK(capsule_time_of_impact(p0, p1, q0, q1, none, none, Vec3(0.3, 0, 0), Vec3(0.3, 0, 0), reach) == 1.0);
  // A rotation that sweeps q through p within the step, both ends crossing z = 0.
  const double spin = capsule_time_of_impact(p0, p1, q0, q1, none, none, Vec3(0, 0, -0.6), Vec3(0, 0, -0.6), reach);
  CHECK(spin < 1.0);
  // Already touching: no step at all.
  CHECK(capsule_time_of_impact(p0, p1, q0, q1 - Vec3(0, 0, 0.25), none, none, down, down, 0.3) == 0.0);
}

TEST_CASE("capsule CCD: over random motions that slide, turn and approach, the gap never falls below the floor before the returned t") {
  // The separating plane's normal changes as the pair moves and turns; each round must take
  // it where it is. The gap is sampled densely on [0, t] (the bound must hold all along, not
  // only where the rounds land), at start gaps from 1e-1 down to 1e-7 of the reach.
  std::mt19937 rng(2026);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  auto random_vector = [&](double scale) -> Vec3 { return Vec3(unit(rng), unit(rng), unit(rng)) * scale; };
  const double reach = 0.1, keep = 0.1;
  int limited = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const Vec3 p0 = random_vector(1.0), p1 = p0 + random_vector(0.5);
    const Vec3 q0 = random_vector(1.0), q1 = q0 + random_vector(0.5);
    const SegmentDistance start = segment_distance(p0, p1, q0, q1);
    if (!(start.distance > reach)) continue;
    // Move q so that the start gap is a chosen small fraction of the reach (a pressed pair).
    const Vec3 pc = p0 + start.s * (p1 - p0), qc = q0 + start.t * (q1 - q0);
    const Vec3 n = (pc - qc) / start.distance;
    const double target_gap = reach * std::pow(10.0, -1.0 - 6.0 * (0.5 + 0.5 * unit(rng)));
    const Vec3 shift = (start.distance - reach - target_gap) * n;
    const Vec3 a0 = q0 + shift, a1 = q1 + shift;
    const double g0 = segment_distance(p0, p1, a0, a1).distance - reach;
    if (!(g0 > 0.0)) continue;
    const double motion = std::pow(10.0, -3.0 + 3.0 * (0.5 + 0.5 * unit(rng)));
    const Vec3 dp0 = random_vector(motion), dp1 = random_vector(motion);
    const Vec3 dq0 = random_vector(motion), dq1 = random_vector(motion);
    const double t = capsule_time_of_impact(p0, p1, a0, a1, dp0, dp1, dq0, dq1, reach, keep);
    REQUIRE(t >= 0.0);
    REQUIRE(t <= 1.0);
    if (t < 1.0) ++limited;
    double lowest = g0;
    for (int k = 1; k <= 400; ++k) {
      const double u = t * k / 400.0;
      lowest = std::min(lowest, segment_distance(p0 + u * dp0, p1 + u * dp1, a0 + u * dq0, a1 + u * dq1).distance - reach);
    }
    INFO("trial " << trial << " start gap " << g0 << " t " << t);
    CHECK(lowest >= keep * g0 * (1.0 - 1e-6) - 1e-15);
  }
  CHECK(limited > 100);  // the motions do bring many pairs together
}

TEST_CASE("capsule CCD: a pair pressed to a tiny gap may slide and turn along each other, and still not approach") {
  // Two crossing segments 1e-9 of their reach apart (a pressed contact). q slides 0.5 along p,
  // turns in the plane of contact, and p slides the other way: the gap never shrinks (the
  // centre lines stay in parallel planes), so the whole motion is allowed. A bound by the whole
  // relative motion (additive CCD alone) allows about 1000 gaps of sliding: 1e-6 of it here.
  const double reach = 0.2, gap = 1e-9 * reach;
  const Vec3 p0(-1, 0, 0), p1(1, 0, 0), q0(0, -1, reach + gap), q1(0, 1, reach + gap);
  const Vec3 none = Vec3::Zero();
  CHECK(capsule_time_of_impact(p0, p1, q0, q1, none, none, Vec3(0.5, 0, 0), Vec3(0.5, 0, 0), reach) == 1.0);
  CHECK(capsule_time_of_impact(p0, p1, q0, q1, Vec3(-0.3, 0.1, 0), Vec3(-0.3, 0.1, 0), Vec3(0.4, 0.2, 0),
                               Vec3(-0.2, -0.1, 0), reach) == 1.0);
  // The same slide with the slightest approach (a tenth of the gap over the step) is allowed
  // all of it too, and one that closes the gap is stopped with the gap kept above 0.1 of it.
  CHECK(capsule_time_of_impact(p0, p1, q0, q1, none, none, Vec3(0.5, 0, -0.1 * gap), Vec3(0.5, 0, -0.1 * gap),
                               reach) == 1.0);
  const Vec3 press(0.5, 0, -2 * gap);
  const double t = capsule_time_of_impact(p0, p1, q0, q1, none, none, press, press, reach);
  CHECK(t > 0.4);
  CHECK(t < 0.5);
  CHECK(segment_distance(p0, p1, q0 + t * press, q1 + t * press).distance - reach >= 0.1 * gap);
}

TEST_CASE("rod-rod contact: one Newton iteration closes a gap by a tenth from afar, to g^ / 2 at most, and by a fifth inside") {
  // Two one-segment rods crossing at right angles, the upper one driven straight down through
  // the lower one. pair_steps bounds the step to where the gap is down to its floor
  // min(0.8 g, max(0.1 g, g^ / 2)) (docs/contact.md, "How far an iteration may close a gap"):
  // the approach is linear in t, so CCD's t lands on the floor within its stopping tolerance.
  // Cut to 0.1 of the gap at every iteration, hair lying across hair lost a decade of its gap
  // per iteration where the barrier's Newton step only about doubles it.
  const double radius = 1e-4;
  const Material nylon = make_material(1140.0, radius, 3.0e9);
  const double gap_hat = kContactGapFraction * 2.0 * radius;
  struct Case {
    double start_gap, floor;
  };
  for (const Case c : {Case{20.0 * gap_hat, 2.0 * gap_hat}, Case{1.5 * gap_hat, 0.5 * gap_hat},
                       Case{0.9 * gap_hat, 0.5 * gap_hat}, Case{0.6 * gap_hat, 0.48 * gap_hat},
                       Case{0.2 * gap_hat, 0.16 * gap_hat}, Case{1e-6 * gap_hat, 0.8e-6 * gap_hat}}) {
    CAPTURE(c.start_gap / gap_hat);
    std::vector<Rod> rods;
    rods.push_back(straight_rod(1, Vec3(-0.002, 0, 0), Vec3(0.002, 0, 0), 3, {}, nylon, "lower"));
    const double z = 2.0 * radius + c.start_gap;
    rods.push_back(straight_rod(1, Vec3(0, -0.002, z), Vec3(0, 0.002, z), 3, {}, nylon, "upper"));
    Model model = make_model(3, std::move(rods), Vec3(0, 0, -9.81));
    model.rod_contact.enabled = true;
    RodContact contact(model, model.dof_masses());
    const VecX from = initial_state(model).positions;
    VecX to = from;
    for (int i = 0; i < 2; ++i) to[model.layout.vertex_dof(1, i) + 2] -= 4.0 * radius;  // through the lower rod
    REQUIRE(contact.find_pairs(from, to).size() == 1);
    std::vector<double> steps;
    std::vector<char> active;
    contact.pair_steps(from, to, 0.1, steps, active);
    REQUIRE(steps.size() == 1);
    CHECK(bool(active[0]) == (c.start_gap < gap_hat));
    const double descent = 4.0 * radius * steps[0];
    const double gap_at_step = c.start_gap - descent;
    CHECK(gap_at_step >= c.floor * (1.0 - 1e-9));
    CHECK(gap_at_step <= c.floor + 2e-3 * (c.start_gap - c.floor));
    // pair_step with both segments at their whole path is the same bound; with the upper rod
    // (the pair's second segment) going half its path, the same floor is reached at twice t.
    CHECK(contact.pair_step(from, to, 0, 1.0, 1.0, 0.1) == doctest::Approx(steps[0]).epsilon(1e-12));
    const double half = contact.pair_step(from, to, 0, 1.0, 0.5, 0.1);
    CHECK(c.start_gap - 2.0 * radius * half >= c.floor * (1.0 - 1e-9));
    CHECK(c.start_gap - 2.0 * radius * half <= c.floor + 2e-3 * (c.start_gap - c.floor));
  }
}

namespace {

constexpr double kRadius = 0.001;
constexpr double kG = 9.81;

struct CrossingDrop {
  double min_gap_fraction = 1e300;   // smallest surface gap seen after any step, over the radius
  double final_gap_fraction = 0.0;   // at the end, upper rod to the lower ones
  double final_speed = 0.0;
  bool passed_through = false;
  int failed_steps = 0;
};

/// Two lower rods along y, held at every vertex, at x = -/+ 3 cm; an upper rod along x across
/// both, starting 1 cm above them and thrown down at 2 m/s; gravity -z. dt = 1/24 s.
CrossingDrop drop_across(double dt, double duration, RodContactMethod method = RodContactMethod::Barrier) {
  const Material nylon = make_material(1140.0, kRadius, 3.0e9);
  std::vector<Rod> rods;
  for (const double x : {-0.03, 0.03}) {
    std::vector<int> all;
    for (int i = 0; i <= 6; ++i) all.push_back(i);
    rods.push_back(straight_rod(6, Vec3(x, -0.03, 0), Vec3(x, 0.03, 0), 3, all, nylon, x < 0 ? "left" : "right"));
  }
  rods.push_back(straight_rod(10, Vec3(-0.05, 0, 0.01), Vec3(0.05, 0, 0.01), 3, {}, nylon, "upper"));
  Model model = make_model(3, std::move(rods), Vec3(0, 0, -kG));
  model.rod_contact.enabled = true;
  model.rod_contact.method = method;
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  for (int i = 0; i < model.rods[2].vertex_count(); ++i) state.velocities[model.layout.vertex_dof(2, i) + 2] = -2.0;
  CrossingDrop r;
  auto gap_fraction = [&](const VecX& x) {
    double smallest = 1e300;
    for (int lower = 0; lower < 2; ++lower)
      for (int a = 0; a < model.rods[lower].edge_count(); ++a)
        for (int b = 0; b < model.rods[2].edge_count(); ++b) {
          const double d = segment_distance(vertex_position(model, x, lower, a), vertex_position(model, x, lower, a + 1),
                                            vertex_position(model, x, 2, b), vertex_position(model, x, 2, b + 1))
                               .distance;
          smallest = std::min(smallest, (d - 2.0 * kRadius) / kRadius);
        }
    return smallest;
  };
  const int steps = static_cast<int>(std::lround(duration / dt));
  for (int k = 0; k < steps; ++k) {
    const StepReport report = integrator.step(state, dt);
    if (!report.ok) {
      ++r.failed_steps;
      MESSAGE("step " << k << " failed: " << report.failure);
      break;
    }
    r.min_gap_fraction = std::min(r.min_gap_fraction, gap_fraction(state.positions));
    // The upper rod's middle must stay above the lower rods' plane.
    if (vertex_position(model, state.positions, 2, 5).z() < 0.0) r.passed_through = true;
  }
  r.final_gap_fraction = gap_fraction(state.positions);
  // Along the contacts' normal (z): frictionless rods leave the upper rod free to keep
  // drifting across them, as whatever horizontal speed its landing left it (a few mm/s).
  for (int i = 0; i < model.rods[2].vertex_count(); ++i)
    r.final_speed = std::max(r.final_speed, std::abs(state.velocities[model.layout.vertex_dof(2, i) + 2]));
  return r;
}

}  // namespace

TEST_CASE("rod-rod contact: a rod thrown down across two rods at dt = 1/24 s never passes through and rests on them") {
  const CrossingDrop r = drop_across(1.0 / 24.0, 1.0);
  MESSAGE("smallest gap " << r.min_gap_fraction << " of the radius; at rest " << r.final_gap_fraction
                          << "; final speed " << r.final_speed << " m/s");
  CHECK(r.failed_steps == 0);
  CHECK_FALSE(r.passed_through);
  CHECK(r.min_gap_fraction > 0.0);
  // At rest on the lower rods: centre lines 2 r apart within a few percent of r.
  CHECK(r.final_gap_fraction < 0.03);
  // At rest on them to the solver's tolerance: Newton stops once its correction moves no
  // vertex by more than 1e-3 of the rod's length, i.e. 1e-3 x 0.1 m / (1/24 s) = 2.4 mm/s.
  CHECK(r.final_speed < 2.4e-3);
}

TEST_CASE("rod contact as constraints: a rod thrown down across two rods at dt = 1/24 s never passes through and rests on them") {
  const CrossingDrop r = drop_across(1.0 / 24.0, 1.0, RodContactMethod::Constraints);
  MESSAGE("smallest gap " << r.min_gap_fraction << " of the radius; at rest " << r.final_gap_fraction
                          << "; final speed " << r.final_speed << " m/s");
  CHECK(r.failed_steps == 0);
  CHECK_FALSE(r.passed_through);
  // The rows are linearised at each step's start: the end may be in by the linearisation's
  // error, here under 1% of the radius, which the next step's row takes back.
  CHECK(r.min_gap_fraction > -0.01);
  CHECK(std::abs(r.final_gap_fraction) < 0.01);
  CHECK(r.final_speed < 2.4e-3);
}

namespace {
/// In 2D, a free rod ("upper", 1 cm up) thrown down at 2 m/s onto a parallel held rod.
Model parallel_drop(RodContactMethod method, State& state) {
  const Material nylon = make_material(1140.0, kRadius, 3.0e9);
  std::vector<Rod> rods;
  std::vector<int> all;
  for (int i = 0; i <= 10; ++i) all.push_back(i);
  rods.push_back(straight_rod(10, Vec3(-0.05, 0, 0), Vec3(0.05, 0, 0), 2, all, nylon, "lower"));
  rods.push_back(straight_rod(6, Vec3(-0.03, 0.01, 0), Vec3(0.03, 0.01, 0), 2, {}, nylon, "upper"));
  Model model = make_model(2, std::move(rods), Vec3(0, -kG, 0));
  model.rod_contact.enabled = true;
  model.rod_contact.method = method;
  state = initial_state(model);
  for (int i = 0; i < model.rods[1].vertex_count(); ++i) state.velocities[model.layout.vertex_dof(1, i) + 1] = -2.0;
  return model;
}
}  // namespace

TEST_CASE("rod-rod contact in 2D: a rod thrown onto a parallel held rod at dt = 1/24 s rests on it") {
  RodContactMethod method = RodContactMethod::Barrier;
  SUBCASE("by the barrier") {}
  SUBCASE("as constraints") { method = RodContactMethod::Constraints; }
  State state;
  const Model model = parallel_drop(method, state);
  ImplicitEuler integrator(model, SolverSettings{});
  double lowest = 1e300;
  for (int k = 0; k < 24; ++k) {
    const StepReport report = integrator.step(state, 1.0 / 24.0);
    REQUIRE_MESSAGE(report.ok, report.failure);
    for (int i = 0; i < model.rods[1].vertex_count(); ++i)
      lowest = std::min(lowest, state.positions[model.layout.vertex_dof(1, i) + 1]);
  }
  // Centre lines 2 r apart at rest, never closer, and the upper rod at rest.
  MESSAGE("lowest centre line " << lowest / kRadius << " radii above the lower rod's");
  // The barrier keeps a gap; the constraints close it, to the error of their rows, one per
  // pair of parallel segments (whose closest points are a whole interval: the row holds one
  // of them), within the 1% of a radius.
  CHECK(lowest > (method == RodContactMethod::Barrier ? 2.0 : 1.99) * kRadius);
  CHECK(lowest < 2.03 * kRadius);
  // At rest to the solver's tolerance (1e-3 of the length over the step: 2.4 mm/s here). The
  // barrier's run stayed below 1 mm/s until 2026-12-06; with the force estimates a cut step
  // gives the pairs it leaves inside g^ (RodContact::update_forces' x_taken), its steps from the
  // second on each converge in one to three iterations with 1.04 to 1.08 mm/s left, slowly
  // falling (1.039 at the end). Bounded there, so that a further drift fails.
  CHECK(state.velocities.segment(model.layout.vertex_dof(1, 0), 14).cwiseAbs().maxCoeff() <
        (method == RodContactMethod::Barrier ? 1.2e-3 : 2.4e-3));
}


TEST_CASE("rod-rod contact: of two rods falling together onto held rods, the upper stops on the lower") {
  // A free rod across two held ones, 1 cm above them, and a second free rod 4 radii above it,
  // both thrown down at 2 m/s, dt = 1/24 s. In each Newton iteration the two move together:
  // their pair is clear of the path by their relative motion (PathMotion::OneFraction), while
  // CCD cuts the lower rod at the held ones. The upper rod's own fraction would then take it
  // into the lower: limit_step_by_ccd must check the pair at the two fractions.
  const Material nylon = make_material(1140.0, kRadius, 3.0e9);
  std::vector<Rod> rods;
  std::vector<int> all;
  for (int i = 0; i <= 6; ++i) all.push_back(i);
  for (const double x : {-0.03, 0.03})
    rods.push_back(straight_rod(6, Vec3(x, -0.03, 0), Vec3(x, 0.03, 0), 3, all, nylon, x < 0 ? "left" : "right"));
  rods.push_back(straight_rod(8, Vec3(-0.04, 0, 0.01), Vec3(0.04, 0, 0.01), 3, {}, nylon, "lower"));
  // The upper rod shorter, between the held rods: the lower is the only rod in its way.
  rods.push_back(straight_rod(8, Vec3(-0.02, 0, 0.01 + 4.0 * kRadius), Vec3(0.02, 0, 0.01 + 4.0 * kRadius), 3, {},
                              nylon, "upper"));
  Model model = make_model(3, std::move(rods), Vec3(0, 0, -kG));
  model.rod_contact.enabled = true;
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  for (const int rod : {2, 3})
    for (int i = 0; i < model.rods[rod].vertex_count(); ++i) state.velocities[model.layout.vertex_dof(rod, i) + 2] = -2.0;
  constexpr int kLower = 2, kUpper = 3;
  auto smallest_gap = [&](int rod_a, int rod_b) {
    double smallest = 1e300;
    for (int a = 0; a < model.rods[rod_a].edge_count(); ++a)
      for (int b = 0; b < model.rods[rod_b].edge_count(); ++b)
        smallest = std::min(smallest, segment_distance(vertex_position(model, state.positions, rod_a, a),
                                                       vertex_position(model, state.positions, rod_a, a + 1),
                                                       vertex_position(model, state.positions, rod_b, b),
                                                       vertex_position(model, state.positions, rod_b, b + 1))
                                              .distance -
                                          2.0 * kRadius);
    return smallest / kRadius;
  };
  double lowest_gap = 1e300;
  int rod_crossings = 0;
  for (int k = 0; k < 24; ++k) {
    const StepReport report = integrator.step(state, 1.0 / 24.0);
    REQUIRE_MESSAGE(report.ok, report.failure);
    rod_crossings += report.rod_crossings;
    // Every iterate apart, the landing step's straight motion is clear: it is not split (an
    // upper rod sent through the lower by one iterate is caught at the step's end, which then
    // splits: 3 substeps, unconverged).
    if (k == 0) {
      CHECK(report.substeps == 1);
      CHECK(report.converged);
    }
    lowest_gap = std::min({lowest_gap, smallest_gap(0, kLower), smallest_gap(1, kLower), smallest_gap(kLower, kUpper)});
    // The upper rod's middle stays above the lower's.
    CHECK(vertex_position(model, state.positions, kUpper, 4).z() > vertex_position(model, state.positions, kLower, 4).z());
  }
  MESSAGE("smallest gap " << lowest_gap << " of the radius; at the end, lower on held " << smallest_gap(0, kLower)
                          << " and " << smallest_gap(1, kLower) << ", upper on lower " << smallest_gap(kLower, kUpper));
  CHECK(rod_crossings == 0);
  CHECK(lowest_gap > 0.0);
  // Both at rest, stacked: centre lines 2 r apart within a few percent of r.
  CHECK(smallest_gap(0, kLower) < 0.03);
  CHECK(smallest_gap(1, kLower) < 0.03);
  CHECK(smallest_gap(kLower, kUpper) < 0.03);
}

namespace {

/// A rod held along x up to x = 0, and a free rod across it near its end, its centre line
/// `height` above the held one's, under gravity; rod contact on.
Model slider_by_held_rod_end(double height) {
  const Material nylon = make_material(1140.0, kRadius, 3.0e9);
  std::vector<int> all;
  for (int i = 0; i <= 10; ++i) all.push_back(i);
  std::vector<Rod> rods;
  rods.push_back(straight_rod(10, Vec3(-0.1, 0, 0), Vec3(0, 0, 0), 3, all, nylon, "held"));
  rods.push_back(straight_rod(6, Vec3(-0.01, height, -0.03), Vec3(-0.01, height, 0.03), 3, {}, nylon, "slider"));
  Model model = make_model(3, std::move(rods), Vec3(0, -kG, 0));
  model.rod_contact.enabled = true;
  return model;
}

/// The slider of slider_by_held_rod_end sent towards the held rod's end at 1 m/s.
void slide_towards_end(const Model& model, State& state) {
  for (int i = 0; i < model.rods[1].vertex_count(); ++i) state.velocities[model.layout.vertex_dof(1, i)] = 1.0;
}

}  // namespace

TEST_CASE("rod contact as constraints: a rod sliding off a held rod's end at dt = 1/24 s falls past it, never into it") {
  // Round the end the closest-point direction turns past 90 degrees without any crossing: it
  // is the contact's own normal there, not a crossing to undo (RodContact::linearise_rows).
  // Across it near its end, resting on it, sliding towards the end at 1 m/s.
  Model model = slider_by_held_rod_end(2.0 * kRadius);
  model.rod_contact.method = RodContactMethod::Constraints;
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  slide_towards_end(model, state);
  const ContactChecker checker({{kRadius, model.rods[0].rest_lengths}, {kRadius, model.rods[1].rest_lengths}}, true);
  auto centre_lines = [&] {
    CentreLines lines(2);
    for (int r = 0; r < 2; ++r)
      for (int i = 0; i < model.rods[r].vertex_count(); ++i)
        lines[r].push_back(vertex_position(model, state.positions, r, i));
    return lines;
  };
  int newton = 0, substeps = 0;
  for (int k = 0; k < 12; ++k) {
    const StepReport report = integrator.step(state, 1.0 / 24.0);
    REQUIRE_MESSAGE(report.ok, report.failure);
    newton += report.newton_iterations;
    substeps += report.substeps;
    CHECK(checker.overlaps(centre_lines(), 0.01).beyond.empty());
  }
  MESSAGE(newton << " Newton iterations in " << substeps << " steps taken for 12");
  // Off the end and fallen well below it.
  CHECK(vertex_position(model, state.positions, 1, 3).x() > 0.05);
  CHECK(vertex_position(model, state.positions, 1, 3).y() < -0.01);
  CHECK(substeps == 12);  // no step had to be split
}

TEST_CASE("rod-rod contact: after a step whose straight motion was not clear, the next steps start split") {
  // A rod sliding off a held rod's end at dt = 1/24 s goes round the end: its Newton iterates
  // pass the end, the straight motion from the step's start to its end passes through the held
  // rod, and the step is split (clear_path). The step after starts at the level that step
  // needed instead of failing the levels above it again, and steps whose paths are all clear
  // bring it back one level each.
  // Resting on it within the barrier's reach (half g^ apart), sliding towards its end at 1 m/s.
  const Model model = slider_by_held_rod_end(2.0 * kRadius * (1.0 + 0.5 * kContactGapFraction));
  SolverSettings settings;
  SUBCASE("default splits") {}
  SUBCASE("max_step_splits 1") { settings.max_step_splits = 1; }
  SUBCASE("max_step_splits 0: no split, so none to start at") { settings.max_step_splits = 0; }
  ImplicitEuler integrator(model, settings);
  State state = initial_state(model);
  slide_towards_end(model, state);
  int started_split = 0;
  for (int k = 0; k < 24; ++k) {
    const int depth = integrator.first_split_depth();
    // At most two levels down (paths split at levels 0 and 1 and are cut at 2), and never
    // beyond max_step_splits.
    CHECK(depth <= std::min(2, settings.max_step_splits));
    const StepReport report = integrator.step(state, 1.0 / 24.0);
    REQUIRE_MESSAGE(report.ok, report.failure);
    MESSAGE("step " << k << ": started at level " << depth << ", " << report.substeps << " substeps, "
                    << report.newton_iterations << " Newton iterations");
    // Started `depth` levels down: at least 2^depth substeps.
    CHECK(report.substeps >= (1 << depth));
    // Back one level at a time, not at once.
    CHECK(integrator.first_split_depth() >= depth - 1);
    if (depth > 0) ++started_split;
  }
  // The slide round the end happened, and split the step where splits are allowed.
  CHECK((started_split > 0) == (settings.max_step_splits > 0));
  CHECK(integrator.first_split_depth() == 0);       // and, fallen clear, it is back to whole steps
  CHECK(vertex_position(model, state.positions, 1, 3).x() > 0.05);
}

TEST_CASE("rod-rod self-contact: a U-shaped rod whose legs are pushed together closes onto itself without passing") {
  // The legs' tips meet end to end, an unstable contact: pushed on, one tip slips past the
  // other's end, around it, and the legs go on past each other. What must hold is that no
  // segment passes through another: no overlap at a step, no crossing between steps (the
  // straight motion of a step, which the step itself checks).
  const Material nylon = make_material(1140.0, kRadius, 3.0e9);
  // Leg A along -x at y = 0, a half circle of radius 3 mm, leg B back along +x at y = 6 mm.
  std::vector<Vec3> vertices;
  for (int i = 0; i <= 10; ++i) vertices.emplace_back(0.05 - 0.005 * i, 0.0, 0.0);
  for (int k = 1; k <= 6; ++k) {
    const double angle = -1.5707963267948966 - 3.141592653589793 * k / 6.0;
    vertices.emplace_back(0.003 * std::cos(angle), 0.003 + 0.003 * std::sin(angle), 0.0);
  }
  for (int i = 1; i <= 10; ++i) vertices.emplace_back(0.005 * i, 0.006, 0.0);
  Model model = single_rod_model(3, rod_from_vertices(vertices, 3, {}, nylon));
  model.rod_contact.enabled = true;
  SUBCASE("by the barrier") {}
  SUBCASE("as constraints") { model.rod_contact.method = RodContactMethod::Constraints; }
  const int tip_b = model.rods[0].vertex_count() - 1;
  PointLoad push_a, push_b;
  push_a.vertex = 0;
  push_a.force = Vec3(0, 1.0, 0);
  push_b.vertex = tip_b;
  push_b.force = Vec3(0, -1.0, 0);
  model.loads = {push_a, push_b};
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  auto tip_y = [&](int vertex) { return vertex_position(model, state.positions, 0, vertex).y(); };
  auto centre_line = [&] {
    CentreLines line(1);
    for (int i = 0; i < model.rods[0].vertex_count(); ++i)
      line[0].push_back(vertex_position(model, state.positions, 0, i));
    return line;
  };
  const ContactChecker checker({{kRadius, model.rods[0].rest_lengths}}, true);
  CentreLines previous = centre_line();
  double closest = 1e300;
  for (int k = 0; k < 60; ++k) {
    const StepReport report = integrator.step(state, 1.0 / 60.0);
    REQUIRE_MESSAGE(report.ok, report.failure);
    const CentreLines current = centre_line();
    CHECK(find_rod_overlaps(current, {kRadius}).overlaps.empty());
    CHECK(checker.overlaps(current, 0.01).beyond.empty());
    // A step taken in parts moves along a broken line, each part checked by the step itself;
    // the straight line across the parts is not the motion.
    if (report.substeps == 1) CHECK_MESSAGE(checker.crossings(previous, current).empty(), "step " << k);
    previous = current;
    closest = std::min(closest, std::abs(tip_y(tip_b) - tip_y(0)));
  }
  MESSAGE("tips closest " << closest / kRadius << " radii apart");
  CHECK(closest < 2.1 * kRadius);  // they did close onto each other
}

namespace {

/// A frictionless line (0.25 mm radius, 40 mm, 40 edges) lying across a held rod of the same
/// section at right angles, pulled down at both ends and along itself at one, by forces of
/// `force` each, mass damping 1e4 /s (so that it slides at about a steady speed), for 0.1 s.
/// Returns how far the line's centre of mass moved along it [m].
double slide_over_held_rod(double force, double dt, double tolerance) {
  constexpr double kLineRadius = 0.00025;
  const Material nylon = make_material(1140.0, kLineRadius, 3.0e9);
  std::vector<int> all;
  for (int i = 0; i <= 10; ++i) all.push_back(i);
  std::vector<Rod> rods;
  rods.push_back(straight_rod(10, Vec3(0, 0, -0.01), Vec3(0, 0, 0.01), 3, all, nylon, "held"));
  const double height = 2.0 * kLineRadius * (1.0 + 0.2 * kContactGapFraction);  // 0.2 g^ apart
  rods.push_back(straight_rod(40, Vec3(-0.02, height, 0), Vec3(0.02, height, 0), 3, {}, nylon, "line"));
  Model model = make_model(3, std::move(rods), Vec3(0, -kG, 0));
  model.rod_contact.enabled = true;
  model.damping_mass = 1e4;
  PointLoad down, pull;
  down.rod = pull.rod = 1;
  down.vertex = 0;
  down.force = Vec3(0, -force, 0);
  pull.vertex = 40;
  pull.force = Vec3(force, -force, 0);
  model.loads = {down, pull};
  SolverSettings settings;
  settings.tolerance = tolerance;
  ImplicitEuler integrator(model, settings);
  State state = initial_state(model);
  auto mean_x = [&] {
    double sum = 0.0;
    for (int i = 0; i <= 40; ++i) sum += vertex_position(model, state.positions, 1, i).x();
    return sum / 41.0;
  };
  const double start = mean_x();
  const int steps = static_cast<int>(std::lround(0.1 / dt));
  for (int k = 0; k < steps; ++k) {
    const StepReport report = integrator.step(state, dt);
    REQUIRE_MESSAGE(report.ok, "step " << k << ": " << report.failure);
  }
  return mean_x() - start;
}

}  // namespace

TEST_CASE("rod-rod contact: a line pulled over a held rod with a hundred times its weight slides as it should") {
  // Pulled by 10 mN (about 5000 times a vertex's weight), the contact's barrier, sized for a
  // vertex's weight at first, must carry 1000 times more. Before the primal-dual stiffness and
  // the force-sized barrier (docs/contact.md), the default solver failed in the first step
  // (Newton not converging in 25 iterations) and at 1 mN the line slid 0.10 mm instead of
  // 2.8. The reference: a tenth of the step, solved to 1e-6 of the line's length.
  const double reference = slide_over_held_rod(0.01, 1.0 / 2400.0, 1e-6);
  const double slide = slide_over_held_rod(0.01, 1.0 / 240.0, SolverSettings{}.tolerance);
  MESSAGE("slid " << slide * 1e3 << " mm in 0.1 s with the defaults at dt = 1/240 s; reference " << reference * 1e3
                  << " mm");
  CHECK(reference > 0.01);
  CHECK(slide == doctest::Approx(reference).epsilon(0.03));
}

namespace {
constexpr double kBundleRadius = 1e-4;

/// side x side parallel nylon rods of 8 segments (radius kBundleRadius, 4 mm long), tilted 0.7
/// rad so that the boxes of neighbouring segments overlap whatever the gap (as in a tilted
/// brush): neighbours 2r + 20 g^ apart, each rod moved by up to 9.9 g^ in x and y, drawn from
/// `rng`; gravity -z, self-contact off.
Model tilted_parallel_bundle(int side, std::mt19937& rng) {
  const Material nylon = make_material(1140.0, kBundleRadius, 3.0e9);
  const double reach = 2.0 * kBundleRadius;
  const double gap_hat = kContactGapFraction * reach;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Rod> rods;
  const double spacing = reach + 20.0 * gap_hat, tilt = 0.7;
  for (int a = 0; a < side; ++a)
    for (int b = 0; b < side; ++b) {
      const Vec3 base((a * spacing + 9.9 * gap_hat * u(rng)) / std::cos(tilt), b * spacing + 9.9 * gap_hat * u(rng), 0.0);
      rods.push_back(straight_rod(8, base, base + 0.004 * Vec3(std::sin(tilt), 0.0, std::cos(tilt)), 3, {}, nylon, "r"));
    }
  Model model = make_model(3, std::move(rods), Vec3(0, 0, -9.81));
  model.rod_contact.enabled = true;
  model.rod_contact.self = false;
  return model;
}

/// (rod, segment) of every segment of the model, in RodContact's order.
std::vector<std::pair<int, int>> all_segments(const Model& model) {
  std::vector<std::pair<int, int>> segments;
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r)
    for (int j = 0; j < model.rods[r].edge_count(); ++j) segments.emplace_back(r, j);
  return segments;
}

/// Two segments on a straight path, for the pair lists' brute-force checks: their ends at the
/// start and the ends' displacements.
struct SegmentPairOnPath {
  Vec3 p0, p1, q0, q1, dp0, dp1, dq0, dq1;
  SegmentPairOnPath(const Model& model, const VecX& from, const VecX& to, std::pair<int, int> a,
                    std::pair<int, int> b) {
    auto point = [&](const VecX& x, int rod, int vertex) -> Vec3 { return x.segment<3>(model.layout.vertex_dof(rod, vertex)); };
    p0 = point(from, a.first, a.second);
    p1 = point(from, a.first, a.second + 1);
    q0 = point(from, b.first, b.second);
    q1 = point(from, b.first, b.second + 1);
    dp0 = point(to, a.first, a.second) - p0;
    dp1 = point(to, a.first, a.second + 1) - p1;
    dq0 = point(to, b.first, b.second) - q0;
    dq1 = point(to, b.first, b.second + 1) - q1;
  }
  double start_gap(double reach) const { return segment_distance(p0, p1, q0, q1).distance - reach; }
  /// The smallest gap at 50 points along the path and its start.
  double smallest_gap(double reach) const {
    double smallest = start_gap(reach);
    for (int k = 1; k <= 50; ++k) {
      const double t = k / 50.0;
      smallest = std::min(smallest, segment_distance(p0 + t * dp0, p1 + t * dp1, q0 + t * dq0, q1 + t * dq1).distance - reach);
    }
    return smallest;
  }
  /// Whether the two segments' boxes swept in the frame moving by `shift` over the path, grown
  /// as RodContact grows them, overlap.
  bool swept_boxes_overlap(double radius, const Vec3& shift = Vec3::Zero()) const {
    auto swept = [&](const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
      const Vec3 grow = Vec3::Constant(radius * (1.0 + kContactGapFraction));
      return AxisBox{a.cwiseMin(b).cwiseMin(c).cwiseMin(d) - grow, a.cwiseMax(b).cwiseMax(c).cwiseMax(d) + grow};
    };
    return boxes_overlap(swept(p0, p1, p0 + dp0 - shift, p1 + dp1 - shift), swept(q0, q1, q0 + dq0 - shift, q1 + dq1 - shift));
  }
  /// Every CCD bound a step asks of the pair (floors of half the gap down to 1e-3 of it) is 1.
  void check_ccd_bounds_are_one(double reach) const {
    for (const double keep : {0.5, 0.1, 1e-3})
      CHECK(capsule_time_of_impact(p0, p1, q0, q1, dp0, dp1, dq0, dq1, reach, keep) == 1.0);
  }
};
}  // namespace

TEST_CASE("rod-rod contact: the solver's pair list leaves out only pairs that no motion on the path brings near") {
  // A bundle of parallel rods at gaps from a fifth of g^ to 40 g^, moved by random motions of
  // several sizes. find_pairs leaves out pairs whose swept boxes overlap but that cannot come
  // within 2 g^ on the path (RodContact::collect): for each such pair the barrier must be zero
  // all along the path and every CCD bound the step asks for must be 1, so that leaving it out
  // changes nothing. Checked against every pair of segments of two rods, by brute force.
  const double radius = kBundleRadius;
  const double reach = 2.0 * radius;
  const double gap_hat = kContactGapFraction * reach;
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Model model = tilted_parallel_bundle(5, rng);
  RodContact contact(model, model.dof_masses());
  const VecX from = initial_state(model).positions;
  const std::vector<std::pair<int, int>> segments = all_segments(model);

  int left_out_candidates = 0, listed = 0;
  for (const double motion : {0.0, 0.5 * gap_hat, 3.0 * gap_hat, 20.0 * gap_hat}) {
    CAPTURE(motion / gap_hat);
    VecX to = from;
    for (int i = 0; i < to.size(); ++i) to[i] += motion * u(rng);
    std::vector<std::pair<int, int>> kept;
    for (const RodContactPair& pair : contact.find_pairs(from, to)) kept.emplace_back(pair.segment_a, pair.segment_b);
    REQUIRE(std::is_sorted(kept.begin(), kept.end()));
    listed += static_cast<int>(kept.size());
    for (int i = 0; i < static_cast<int>(segments.size()); ++i)
      for (int j = i + 1; j < static_cast<int>(segments.size()); ++j) {
        if (segments[i].first == segments[j].first) continue;
        if (std::binary_search(kept.begin(), kept.end(), std::make_pair(i, j))) continue;
        CAPTURE(i);
        CAPTURE(j);
        const SegmentPairOnPath pair(model, from, to, segments[i], segments[j]);
        REQUIRE(pair.start_gap(reach) > 0.0);
        // Pairs the broad phase leaves out were never checked: their boxes (grown as
        // RodContact grows them) keep them beyond g^.
        if (!pair.swept_boxes_overlap(radius)) continue;
        ++left_out_candidates;
        CHECK(pair.smallest_gap(reach) >= gap_hat);
        pair.check_ccd_bounds_are_one(reach);
      }
  }
  // The check has pairs to bite on: candidates of the broad phase left out, and pairs kept.
  REQUIRE(contact.overlapping() == 0);
  CHECK(left_out_candidates > 100);
  CHECK(listed > 100);
}

TEST_CASE("rod-rod contact: on a straight-line path the pairs are found in a frame moving with the rods") {
  // clear_path checks a step's straight motion x0 -> x1, every vertex at one fraction
  // (PathMotion::StraightLine): find_pairs takes the broad phase and the travels in the frame
  // moving with the segments' mean displacement. A dragged bundle's swept boxes there cover how
  // the rods move relative to each other, not the drag. Checked by brute force over all pairs
  // of segments of two rods, as the world frame's list is (the test above): a pair left out
  // whose boxes swept in the moving frame overlap must stay clear of 2 g^, close at most a
  // fifth of its gap, and have every CCD bound 1; one whose boxes are apart there stays beyond
  // g^ (a common translation changes no distance). CCD over the list must give the world
  // frame's bounds here, and the path's end and start must take their pairs from the path's
  // list, as a fresh broad phase finds them.
  const double radius = kBundleRadius;
  const double reach = 2.0 * radius;
  const double gap_hat = kContactGapFraction * reach;
  std::mt19937 rng(27);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Model model = tilted_parallel_bundle(5, rng);
  RodContact contact(model, model.dof_masses());
  const DofLayout& layout = model.layout;
  const VecX from = initial_state(model).positions;
  const std::vector<std::pair<int, int>> segments = all_segments(model);
  const Vec3 drag = 40.0 * gap_hat * Vec3(0.6, -0.48, 0.64);
  int left_out_in_world_boxes = 0, left_out_in_moving_boxes = 0, fewer = 0, cut = 0;
  for (const double motion : {0.0, 3.0 * gap_hat, 20.0 * gap_hat}) {
    CAPTURE(motion / gap_hat);
    VecX to = from;
    for (int v = 0; v < layout.vertex_count(); ++v) {
      const int dof = layout.vertex_dof(v);
      for (int k = 0; k < 3; ++k) to[dof + k] += drag[k] + motion * u(rng);
    }
    const int world_count = static_cast<int>(contact.find_pairs(from, to, PathMotion::OneFraction).size());
    const double world_step = contact.max_step(from, to, 1e-3);
    const double world_reversed = contact.max_step_reversed(from, to, 1e-3);
    Vec3 shift = Vec3::Zero();  // the frame's: the segments' mean displacement
    for (const auto& [rod, segment] : segments) {
      const int dof = layout.vertex_dof(rod, segment);
      shift += to.segment<3>(dof) - from.segment<3>(dof);
    }
    shift /= static_cast<double>(segments.size());
    std::vector<std::pair<int, int>> kept;
    for (const RodContactPair& pair : contact.find_pairs(from, to, PathMotion::StraightLine))
      kept.emplace_back(pair.segment_a, pair.segment_b);
    REQUIRE(std::is_sorted(kept.begin(), kept.end()));
    fewer += static_cast<int>(kept.size()) < world_count ? 1 : 0;
    CHECK(contact.relatively_clear_pairs().empty());
    // CCD over the moving frame's list, as clear_path asks it: the world frame's bounds here.
    // (Not implied in general: a pair only the world frame lists stays beyond g^ but may close
    // more than half its gap. Here the smallest bounds are set by close pairs both list.)
    CHECK(contact.max_step(from, to, 1e-3) == world_step);
    CHECK(contact.max_step_reversed(from, to, 1e-3) == world_reversed);
    cut += world_step < 1.0 ? 1 : 0;
    for (int i = 0; i < static_cast<int>(segments.size()); ++i)
      for (int j = i + 1; j < static_cast<int>(segments.size()); ++j) {
        if (segments[i].first == segments[j].first ||
            std::binary_search(kept.begin(), kept.end(), std::make_pair(i, j)))
          continue;
        CAPTURE(i);
        CAPTURE(j);
        const SegmentPairOnPath pair(model, from, to, segments[i], segments[j]);
        if (pair.swept_boxes_overlap(radius)) ++left_out_in_world_boxes;
        const double start_gap = pair.start_gap(reach);
        REQUIRE(start_gap > 0.0);
        const double smallest = pair.smallest_gap(reach);
        CHECK(smallest >= gap_hat);
        if (!pair.swept_boxes_overlap(radius, shift)) continue;
        ++left_out_in_moving_boxes;
        CHECK(smallest >= 2.0 * gap_hat);
        CHECK(smallest >= 0.8 * start_gap - 1e-12);
        pair.check_ccd_bounds_are_one(reach);
      }
    // The path's end (the next step's start) and its start reuse its list: a fresh broad phase's
    // pairs. A point off the line does not.
    for (const VecX* x : {static_cast<const VecX*>(&to), &from}) {
      const int reuses = contact.path_list_reuses();
      std::vector<std::array<int, 2>> reused;
      for (const RodContactPair& pair : contact.find_pairs(*x, *x)) reused.push_back({pair.segment_a, pair.segment_b});
      CHECK(contact.path_list_reuses() == reuses + 1);
      RodContact fresh(model, model.dof_masses());
      std::vector<std::array<int, 2>> expected;
      for (const RodContactPair& pair : fresh.find_pairs(*x, *x)) expected.push_back({pair.segment_a, pair.segment_b});
      CHECK(reused == expected);
      contact.find_pairs(from, to, PathMotion::StraightLine);
    }
    VecX beyond = from + 1.5 * (to - from);
    const int reuses = contact.path_list_reuses();
    contact.find_pairs(beyond, beyond);
    CHECK(contact.path_list_reuses() == reuses);
  }
  MESSAGE(left_out_in_world_boxes << " pairs left out whose world-frame swept boxes overlap, "
                                   << left_out_in_moving_boxes << " whose moving-frame ones do");
  CHECK(left_out_in_world_boxes > 100);
  CHECK(left_out_in_moving_boxes > 100);
  CHECK(fewer >= 2);
  CHECK(cut >= 1);
}

namespace {
// The pair-list tests' bundle: 4 x 4 parallel nylon rods of 8 segments (radius 0.1 mm), tilted
// 0.7 rad so that neighbouring segments' boxes overlap, 3 g^ apart give or take 2 g^, the first
// rod half inside its neighbour (pairs overlapping at every path's start); self-contact off.
Model overlapping_bundle(std::mt19937& rng) {
  const double radius = 1e-4;
  const Material nylon = make_material(1140.0, radius, 3.0e9);
  const double reach = 2.0 * radius;
  const double gap_hat = kContactGapFraction * reach;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Rod> rods;
  const int side = 4;
  const double spacing = reach + 3.0 * gap_hat, tilt = 0.7;
  for (int a = 0; a < side; ++a)
    for (int b = 0; b < side; ++b) {
      const double inside = a == 0 && b == 0 ? 0.5 * spacing : 0.0;
      const Vec3 base((a * spacing + inside + 2.0 * gap_hat * u(rng)) / std::cos(tilt), b * spacing + 2.0 * gap_hat * u(rng), 0.0);
      rods.push_back(straight_rod(8, base, base + 0.004 * Vec3(std::sin(tilt), 0.0, std::cos(tilt)), 3, {}, nylon, "r"));
    }
  Model model = make_model(3, std::move(rods), Vec3(0, 0, -9.81));
  model.rod_contact.enabled = true;
  model.rod_contact.self = false;
  return model;
}

/// The segments of each pair, in the list's order.
std::vector<std::array<int, 2>> listed_segments(const std::vector<RodContactPair>& pairs) {
  std::vector<std::array<int, 2>> segments;
  for (const RodContactPair& pair : pairs) segments.push_back({pair.segment_a, pair.segment_b});
  return segments;
}
}  // namespace

TEST_CASE("rod-rod contact: on a path taken at one fraction, pairs moving together are left out as relatively clear") {
  // A dragged brush's neighbouring bristles move together: their travels are long, their
  // motion relative to each other short. On a path every rod goes one fraction of
  // (PathMotion::OneFraction), find_pairs leaves out pairs that motion cannot bring near, and
  // lists them as relatively clear, for a caller that cuts rods to different fractions
  // (limit_step_by_ccd; clear_at_fractions). Checked by brute force along the path, at one
  // fraction and at two.
  const double reach = 2.0 * kBundleRadius;
  const double gap_hat = kContactGapFraction * reach;
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Model model = tilted_parallel_bundle(4, rng);
  RodContact contact(model, model.dof_masses());
  const DofLayout& layout = model.layout;
  const VecX from = initial_state(model).positions;
  auto point = [&](const VecX& x, int segment_dof) -> Vec3 { return x.segment<3>(segment_dof); };
  const auto listed = listed_segments;

  int relatively_clear = 0, apart_at_two_fractions = 0, near_at_two_fractions = 0;
  // A drag of 40 g^ (the pairs' gaps are 10 to 30 g^), with relative motions of none to 3 g^.
  const Vec3 drag = 40.0 * gap_hat * Vec3(0.6, -0.48, 0.64);
  for (const double motion : {0.0, 0.5 * gap_hat, 3.0 * gap_hat}) {
    CAPTURE(motion / gap_hat);
    VecX to = from;
    for (int v = 0; v < layout.vertex_count(); ++v) {
      const int dof = layout.vertex_dof(v);
      for (int k = 0; k < 3; ++k) to[dof + k] += drag[k] + motion * u(rng);
    }
    const auto any_fractions = listed(contact.find_pairs(from, to));
    CHECK(contact.relatively_clear_pairs().empty());
    const std::vector<RodContactPair> one_fraction_pairs = contact.find_pairs(from, to, PathMotion::OneFraction);
    const auto one_fraction = listed(one_fraction_pairs);
    const std::vector<RelativelyClearPair> clear = contact.relatively_clear_pairs();
    std::vector<std::array<int, 2>> clear_segments;
    for (const RelativelyClearPair& pair : clear) clear_segments.push_back({pair.segment_a, pair.segment_b});
    REQUIRE(std::is_sorted(clear_segments.begin(), clear_segments.end()));
    // Every pair the travels alone list is listed or relatively clear, never both.
    for (const auto& pair : any_fractions) {
      const bool in_one = std::binary_search(one_fraction.begin(), one_fraction.end(), pair);
      const bool in_clear = std::binary_search(clear_segments.begin(), clear_segments.end(), pair);
      CHECK(in_one != in_clear);
    }
    for (const auto& pair : one_fraction) CHECK(std::binary_search(any_fractions.begin(), any_fractions.end(), pair));
    relatively_clear += static_cast<int>(clear.size());
    // Segment k's first DOF, from its rod and index.
    std::vector<int> segment_dof;
    for (int r = 0; r < layout.rod_count(); ++r)
      for (int j = 0; j < model.rods[r].edge_count(); ++j) segment_dof.push_back(layout.vertex_dof(r, j));
    for (const RelativelyClearPair& pair : clear) {
      const int a = segment_dof[pair.segment_a], b = segment_dof[pair.segment_b];
      const int a1 = a + 3, b1 = b + 3;  // the next vertex of the same rod
      const Vec3 p0 = point(from, a), p1 = point(from, a1), q0 = point(from, b), q1 = point(from, b1);
      const Vec3 dp0 = point(to, a) - p0, dp1 = point(to, a1) - p1, dq0 = point(to, b) - q0, dq1 = point(to, b1) - q1;
      const double start_gap = segment_distance(p0, p1, q0, q1).distance - reach;
      CHECK(pair.gap <= start_gap);
      auto smallest_gap = [&](double scale_a, double scale_b) {
        double smallest = start_gap;
        for (int k = 1; k <= 50; ++k) {
          const double ta = scale_a * k / 50.0, tb = scale_b * k / 50.0;
          smallest = std::min(smallest, segment_distance(p0 + ta * dp0, p1 + ta * dp1, q0 + tb * dq0, q1 + tb * dq1).distance - reach);
        }
        return smallest;
      };
      // At one fraction: clear of the barrier all the way, and no CCD bound below 1.
      CHECK(contact.clear_at_fractions(from, to, pair, 1.0, 1.0));
      CHECK(contact.clear_at_fractions(from, to, pair, 0.5, 0.5));
      CHECK(smallest_gap(1.0, 1.0) >= std::max(2.0 * gap_hat, 0.8 * start_gap - 1e-12));
      for (const double keep : {0.5, 0.1, 1e-3})
        CHECK(capsule_time_of_impact(p0, p1, q0, q1, dp0, dp1, dq0, dq1, reach, keep) == 1.0);
      // At two fractions, the whole way for one and 0.9 of it for the other: the drag parts
      // them by 4 g^, more than a fifth of some gaps. Where clear_at_fractions says clear, it is.
      for (const auto& [scale_a, scale_b] : {std::pair{1.0, 0.9}, std::pair{0.9, 1.0}}) {
        if (contact.clear_at_fractions(from, to, pair, scale_a, scale_b)) {
          ++apart_at_two_fractions;
          // stays clear of 2 g^, and closes at most a fifth of its gap
          const double smallest = smallest_gap(scale_a, scale_b);
          CHECK(smallest >= 2.0 * gap_hat);
          CHECK(smallest >= 0.8 * start_gap - 1e-12);
        } else {
          ++near_at_two_fractions;
          // Its CCD bound at the two fractions keeps it apart up to there, and is a listed
          // pair's (RodContact::pair_step) once it is listed.
          const double t = contact.relatively_clear_step(from, to, pair, scale_a, scale_b, 0.1);
          CHECK(t >= 0.0);
          CHECK(t <= 1.0);
          CHECK(smallest_gap(t * scale_a, t * scale_b) > 0.0);
          const RodContactPair& listed_pair = contact.list_relatively_clear(pair);
          CHECK(listed_pair.segment_a == pair.segment_a);
          CHECK(listed_pair.segment_b == pair.segment_b);
          const int k = static_cast<int>(contact.pairs().size()) - 1;
          CHECK(contact.pair_step(from, to, k, scale_a, scale_b, 0.1) == t);
        }
      }
    }
  }
  MESSAGE(relatively_clear << " relatively clear pairs: " << apart_at_two_fractions << " clear at two fractions, "
                           << near_at_two_fractions << " not");
  CHECK(relatively_clear > 100);
  CHECK(apart_at_two_fractions > 10);
  CHECK(near_at_two_fractions > 10);
}

TEST_CASE("rod-rod contact: pairs at a point of the last searched path are those a fresh broad phase finds") {
  // After find_pairs over a path (CCD's search), a call at one instant on that path (Newton's
  // next iterate, each rod some fraction of the way) takes its candidates from the path's
  // list instead of the broad phase (RodContact::collect). It must give the pairs, order and
  // overlap count of a search without that list: checked against a fresh RodContact, with
  // rods that start overlapping, rods held still, and points off the path, which must not
  // reuse the list.
  const double gap_hat = kContactGapFraction * 2e-4;
  std::mt19937 rng(33);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_real_distribution<double> fraction(0.0, 1.0);
  const Model model = overlapping_bundle(rng);
  const DofLayout& layout = model.layout;
  const VecX from = initial_state(model).positions;
  RodContact contact(model, model.dof_masses());
  const auto listed = listed_segments;
  int compared = 0, nonempty = 0, relatively_clear = 0, relatively_clear_near = 0;
  // Dragged: every vertex also moved by 20 g^ along x, the path taken at one fraction
  // (PathMotion::OneFraction), whose relatively clear pairs come near where neighbours go
  // different fractions: they must be looked at again.
  for (const bool dragged : {false, true})
  for (const double motion : {0.5 * gap_hat, 3.0 * gap_hat, 20.0 * gap_hat}) {
    for (int trial = 0; trial < 4; ++trial) {
      CAPTURE(dragged);
      CAPTURE(motion / gap_hat);
      CAPTURE(trial);
      VecX to = from;
      for (int i = 0; i < to.size(); ++i) to[i] += motion * u(rng) + (dragged && i % 3 == 0 ? 20.0 * gap_hat : 0.0);
      const PathMotion path_motion = dragged ? PathMotion::OneFraction : PathMotion::AnyFractions;
      contact.find_pairs(from, to, path_motion);
      relatively_clear += static_cast<int>(contact.relatively_clear_pairs().size());
      // Each rod some fraction of its way: none, all, or between; the last point overshoots.
      for (const bool off_path : {false, true}) {
        VecX x = from;
        for (int r = 0; r < layout.rod_count(); ++r) {
          const double s = off_path ? 1.5 : (r % 3 == 0 ? 0.0 : r % 3 == 1 ? 1.0 : fraction(rng));
          const auto [begin, end] = layout.rod_dof_range(r);
          for (int dof = begin; dof < end; ++dof) x[dof] = from[dof] + s * (to[dof] - from[dof]);
        }
        const int reuses = contact.path_list_reuses();
        std::vector<std::array<int, 2>> clear_on_path;
        for (const RelativelyClearPair& pair : contact.relatively_clear_pairs())
          clear_on_path.push_back({pair.segment_a, pair.segment_b});
        const auto reused = listed(contact.find_pairs(x, x));
        const int reused_overlapping = contact.overlapping();
        CHECK(contact.path_list_reuses() == reuses + (off_path ? 0 : 1));
        RodContact fresh(model, model.dof_masses());
        const auto expected = listed(fresh.find_pairs(x, x));
        CHECK(fresh.path_list_reuses() == 0);
        CHECK(reused == expected);
        CHECK(reused_overlapping == fresh.overlapping());
        CHECK(reused_overlapping > 0);
        // Pairs left out of the path as relatively clear that are near at x (neighbours that
        // went different fractions): the path's list must have kept them.
        for (const auto& pair : expected)
          relatively_clear_near += std::binary_search(clear_on_path.begin(), clear_on_path.end(), pair) ? 1 : 0;
        ++compared;
        if (!expected.empty()) ++nonempty;
        // The list kept is still the path's: find_pairs(x, x) kept none of its own.
        contact.find_pairs(from, to, path_motion);
      }
    }
  }
  MESSAGE(relatively_clear << " relatively clear pairs on the paths, " << relatively_clear_near << " of them near at a point");
  CHECK(compared == 48);
  CHECK(nonempty >= 24);
  CHECK(relatively_clear > 100);
  CHECK(relatively_clear_near > 0);
}

TEST_CASE("rod-rod contact: a path on which few rods move takes the still pairs from the last instant listed") {
  // A Newton iteration over the rods still moving searches the path from the iterate, listed
  // at that instant by the assembly, to the full step, on which the held rods do not move: the
  // pairs of two still segments are the instant's, and only the moving segments' go through
  // the broad phase (RodContact::collect, BoxPairList::pairs_touching). It must give the pairs,
  // order and overlap count of a whole broad phase: checked against a fresh RodContact, with a
  // pair overlapping, one rod moving or a quarter of them, and a path from another instant or
  // with most rods moving, which must not take the instant's list.
  const double gap_hat = kContactGapFraction * 2e-4;
  std::mt19937 rng(35);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Model model = overlapping_bundle(rng);
  const DofLayout& layout = model.layout;
  const VecX start = initial_state(model).positions;
  RodContact contact(model, model.dof_masses());
  const auto listed = listed_segments;
  int compared = 0, nonempty = 0, relatively_clear = 0;
  // Dragged: the moving rods also moved together by 20 g^ along x, the path taken at one
  // fraction (PathMotion::OneFraction): the moving pairs' list then has relatively clear
  // pairs among its kept ones, which the merge with the instant's must pass over.
  for (const bool dragged : {false, true})
  for (const double motion : {0.5 * gap_hat, 3.0 * gap_hat, 20.0 * gap_hat}) {
    for (const int moving_rods : {1, 4, 12}) {
      CAPTURE(dragged);
      CAPTURE(motion / gap_hat);
      CAPTURE(moving_rods);
      const PathMotion path_motion = dragged ? PathMotion::OneFraction : PathMotion::AnyFractions;
      // The instant: the start moved a little, listed as the assembly lists it.
      VecX x = start;
      for (int i = 0; i < x.size(); ++i) x[i] += 0.5 * gap_hat * u(rng);
      contact.find_pairs(x, x);
      VecX to = x;
      for (int r = 0; r < moving_rods; ++r) {
        const int rod = (5 * r + 3) % layout.rod_count();
        const auto [begin, end] = layout.rod_dof_range(rod);
        for (int dof = begin; dof < end; ++dof)
          to[dof] += motion * u(rng) + (dragged && (dof - begin) % 3 == 0 ? 20.0 * gap_hat : 0.0);
      }
      for (const bool from_instant : {true, false}) {
        // From a copy of the instant with one coordinate changed: not that instant.
        VecX from = x;
        if (!from_instant) from[0] += 1e-3 * gap_hat;
        const int reuses = contact.instant_list_reuses();
        const auto path = listed(contact.find_pairs(from, to, path_motion));
        const int path_overlapping = contact.overlapping();
        const std::vector<RelativelyClearPair> path_clear = contact.relatively_clear_pairs();
        relatively_clear += static_cast<int>(path_clear.size());
        // At most a quarter of the 16 x 7 segments moving: 4 rods of 16.
        CHECK(contact.instant_list_reuses() == reuses + (from_instant && moving_rods <= 4 ? 1 : 0));
        RodContact fresh(model, model.dof_masses());
        const auto expected = listed(fresh.find_pairs(from, to, path_motion));
        CHECK(fresh.instant_list_reuses() == 0);
        CHECK(path == expected);
        CHECK(path_overlapping == fresh.overlapping());
        const std::vector<RelativelyClearPair>& fresh_clear = fresh.relatively_clear_pairs();
        REQUIRE(path_clear.size() == fresh_clear.size());
        for (std::size_t k = 0; k < path_clear.size(); ++k) {
          CHECK(path_clear[k].segment_a == fresh_clear[k].segment_a);
          CHECK(path_clear[k].segment_b == fresh_clear[k].segment_b);
        }
        CHECK(path_overlapping > 0);
        ++compared;
        if (!expected.empty()) ++nonempty;
        // Listed at that instant again for the next comparison.
        contact.find_pairs(x, x);
      }
    }
  }
  CHECK(compared == 36);
  CHECK(nonempty == 36);
  CHECK(relatively_clear > 10);
}

namespace {
/// Two nylon rods of radius 1e-4 m crossing at right angles, the upper ("above") `start_gap`
/// above the lower ("below"), with rod contact between them only.
Model crossed_rods(double start_gap) {
  const double radius = 1e-4;
  const Material nylon = make_material(1140.0, radius, 3.0e9);
  const double reach = 2.0 * radius;
  std::vector<Rod> rods;
  rods.push_back(straight_rod(4, Vec3(-0.002, 0.0, 0.0), Vec3(0.002, 0.0, 0.0), 3, {}, nylon, "below"));
  rods.push_back(straight_rod(4, Vec3(0.0, -0.002, reach + start_gap), Vec3(0.0, 0.002, reach + start_gap), 3, {},
                              nylon, "above"));
  Model model = make_model(3, std::move(rods), Vec3(0, 0, -9.81));
  model.rod_contact.enabled = true;
  model.rod_contact.self = false;
  return model;
}
}  // namespace

TEST_CASE("rod contact: a pair a cut step leaves inside g^ gets a force estimate for the part of the step not taken") {
  // Two rods crossing at right angles, 3 g^ apart: outside the barrier, so the iteration's
  // system has no term for the pair, and its full Newton step takes the upper rod 60 g^ down,
  // through the lower one. CCD cuts the step; the iterate taken is 0.5 g^ apart. Without an
  // estimate the next Newton direction goes as deep again (the 1000-bristle brush: cut to 0.4%
  // of its step in the iteration after). update_forces with the iterate taken gives the pair
  // the Newton value of lambda g = g phi(g) for the rest of the step, from the taken gap,
  // bounded to [phi, 10 phi] there. None where the taken iterate is outside g^, where the rest
  // of the step opens the gap or closes it by round-off only, or without the taken iterate.
  const double reach = 2.0 * 1e-4;  // crossed_rods' radii
  const double gap_hat = kContactGapFraction * reach;
  const double start_gap = 3.0 * gap_hat;
  const Model model = crossed_rods(start_gap);
  const DofLayout& layout = model.layout;
  const VecX x = initial_state(model).positions;
  auto lowered = [&](double by) {  // the upper rod `by` g^ lower
    VecX to = x;
    for (int i = 0; i < model.rods[1].vertex_count(); ++i) to[layout.vertex_dof(1, i) + 2] -= by * gap_hat;
    return to;
  };
  // The largest estimate the pairs at `at` carry (-1: none), and the barrier's force there.
  auto estimate = [&](RodContact& contact, const VecX& at, double* phi = nullptr) {
    double force = -1.0;
    for (const RodContactPair& pair : contact.find_pairs(at, at)) {
      force = std::max(force, pair.constants.force);
      if (phi != nullptr) {
        const double gap = segment_distance(at.segment<3>(pair.dofs[0]), at.segment<3>(pair.dofs[1]),
                                            at.segment<3>(pair.dofs[2]), at.segment<3>(pair.dofs[3]))
                               .distance -
                           pair.constants.reach;
        if (gap < pair.constants.gap_hat)
          *phi = -pair.constants.stiffness * barrier_function(gap, pair.constants.gap_hat).db;
      }
    }
    return force;
  };
  const VecX full = lowered(60.0);
  const VecX taken = lowered(2.5);  // 0.5 g^ apart
  {
    RodContact contact(model, model.dof_masses());
    contact.begin_step();
    REQUIRE(!contact.find_pairs(x, full).empty());  // on the path
    contact.update_forces(x, full);
    CHECK(estimate(contact, taken) < 0.0);  // the update as before: outside g^ at x, none
  }
  {
    RodContact contact(model, model.dof_masses());
    contact.begin_step();
    REQUIRE(!contact.find_pairs(x, full).empty());
    const RodContact::ForceUpdate update = contact.update_forces(x, full, &taken);
    double phi = -1.0;
    const double force = estimate(contact, taken, &phi);
    REQUIRE(phi > 0.0);
    MESSAGE("estimate " << force / phi << " times the barrier's force at 0.5 g^");
    CHECK(force > phi);
    CHECK(force <= 10.0 * phi * (1.0 + 1e-12));
    CHECK(update.consistent);  // the iteration's own system had no term for the pair
  }
  // The rest of the step opening the gap (taken 2.9 g^ down, the full step 2 g^), the taken
  // iterate outside g^, and a rest no larger than round-off (a step taken whole: the taken
  // iterate and the full step differ in the last bits).
  const std::vector<std::pair<VecX, VecX>> no_estimate = {
      {lowered(2.0), lowered(2.9)}, {full, lowered(-1.0)}, {lowered(2.5 + 1e-9), lowered(2.5)}};
  for (const auto& [other_full, other_taken] : no_estimate) {
    RodContact contact(model, model.dof_masses());
    contact.begin_step();
    REQUIRE(!contact.find_pairs(x, full).empty());
    contact.update_forces(x, other_full, &other_taken);
    CHECK(estimate(contact, other_taken) < 0.0);
  }
}

TEST_CASE("rod contact: a Newton step that opens a pair's gap does not raise its force estimate") {
  // Two rods crossing at right angles, one segment of each within g^ of the other. The
  // estimate's update is Newton's on lambda g = g phi(g) (RodContact::update_forces). With
  // lambda below phi, the linearisation lambda_new = phi + (psi - lambda) dg / g comes out near
  // phi for a step that opens the gap a little, above the lambda it started from; and where
  // lambda < psi (psi > 0 for this barrier near contact) a step many gaps long multiplied it
  // hundreds of times (the vertical brushes of `bristle bench --brush`, docs/contact.md, "The
  // coupled rods factored together"). The force at a wider gap is smaller: an opening step
  // leaves lambda at most where it was, and a closing one still raises it.
  const double reach = 2.0 * 1e-4;  // crossed_rods' radii
  const double gap_hat = kContactGapFraction * reach;
  for (const double start_gap : {0.009 * gap_hat, 0.3 * gap_hat, 0.8 * gap_hat}) {
    CAPTURE(start_gap / gap_hat);
    const Model model = crossed_rods(start_gap);
    RodContact contact(model, model.dof_masses());
    const DofLayout& layout = model.layout;
    const VecX x = initial_state(model).positions;
    // The upper rod lifted (or lowered) by `lift` times the gap: the full Newton step.
    auto lifted = [&](double lift) {
      VecX to = x;
      for (int i = 0; i < model.rods[1].vertex_count(); ++i) to[layout.vertex_dof(1, i) + 2] += lift * start_gap;
      return to;
    };
    // The pair within g^ and its estimate as update_forces left it (the pairs carry it).
    auto estimate = [&] {
      double force = -1.0;
      for (const RodContactPair& pair : contact.find_pairs(x, x))
        if (pair.constants.force >= 0.0) force = std::max(force, pair.constants.force);
      return force;
    };
    contact.begin_step();
    REQUIRE(!contact.find_pairs(x, x).empty());
    contact.update_forces(x, lifted(0.9));  // from lambda = phi: below phi after it
    const double after_small_lift = estimate();
    REQUIRE(after_small_lift > 0.0);
    for (const double lift : {0.1, 0.9, 125.0}) {
      CAPTURE(lift);
      const double before = estimate();
      contact.update_forces(x, lifted(lift));
      CHECK(estimate() <= before);
    }
    const double before_closing = estimate();
    contact.update_forces(x, lifted(-0.5));
    CHECK(estimate() > before_closing);
  }
}
