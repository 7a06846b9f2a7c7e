// The frictional contact impulse solve (contact/coulomb_solver.hpp): the disc minimiser
// against sampling, one contact against its closed form (take-off, stick, slide), coupled
// frictionless contacts against an enumeration of the complementarity problem's active sets,
// and coupled frictional contacts of rod-like systems against Coulomb's law checked term by
// term (not through the solver's own residual).

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <Eigen/Dense>

#include "bristle/contact/coulomb_solver.hpp"
#include "bristle/contact/segment_contact_frame.hpp"

using namespace bristle;

namespace {

double disc_objective(const Mat2& A, const Vec2& c, const Vec2& p) { return 0.5 * p.dot(A * p) + c.dot(p); }

/// One contact, no coupling.
CoulombProblem single(const Mat3& W, const Vec3& b, double mu) {
  CoulombProblem problem;
  problem.friction = {mu};
  problem.free_velocity = {b};
  problem.diagonal = {W};
  return problem;
}

/// m contacts on a chain of n 3D vertices whose system matrix is rod-like (A = masses +
/// springs between neighbours, SPD); each contact joins two random pairs of neighbouring
/// vertices with random segment weights and a random frame, W = H A^-1 H^T stored in blocks.
CoulombProblem rod_like_problem(std::mt19937& random, int n, int m, double mu, double b_scale) {
  std::uniform_real_distribution<double> unit(0.0, 1.0), symmetric(-1.0, 1.0);
  std::uniform_int_distribution<int> vertex(0, n - 2);
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(3 * n, 3 * n);
  for (int i = 0; i < n; ++i) A.block<3, 3>(3 * i, 3 * i) += (0.5 + unit(random)) * Mat3::Identity();
  for (int i = 0; i + 1 < n; ++i) {
    const Vec3 axis = Vec3(symmetric(random), symmetric(random), symmetric(random)).normalized();
    // A stiff spring along the axis and a soft one across: anisotropic like a rod.
    const Mat3 k = 50.0 * axis * axis.transpose() + 0.5 * Mat3::Identity();
    A.block<3, 3>(3 * i, 3 * i) += k;
    A.block<3, 3>(3 * i + 3, 3 * i + 3) += k;
    A.block<3, 3>(3 * i, 3 * i + 3) -= k;
    A.block<3, 3>(3 * i + 3, 3 * i) -= k;
  }
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(3 * m, 3 * n);
  for (int c = 0; c < m; ++c) {
    const int a = vertex(random);
    int q = vertex(random);
    while (std::abs(q - a) < 2) q = vertex(random);
    const double s = unit(random), t = unit(random);
    const Vec3 normal = Vec3(symmetric(random), symmetric(random), symmetric(random)).normalized();
    Vec3 t1, t2;
    tangent_basis(normal, t1, t2);
    Mat3 frame;
    frame << normal.transpose(), t1.transpose(), t2.transpose();
    H.block<3, 3>(3 * c, 3 * a) += (1 - s) * frame;
    H.block<3, 3>(3 * c, 3 * a + 3) += s * frame;
    H.block<3, 3>(3 * c, 3 * q) -= (1 - t) * frame;
    H.block<3, 3>(3 * c, 3 * q + 3) -= t * frame;
  }
  const Eigen::MatrixXd W = H * A.llt().solve(H.transpose());
  CoulombProblem problem;
  problem.block_offsets.push_back(0);
  for (int i = 0; i < m; ++i) {
    problem.friction.push_back(mu);
    problem.free_velocity.push_back(b_scale * Vec3(symmetric(random), symmetric(random), symmetric(random)));
    problem.diagonal.push_back(W.block<3, 3>(3 * i, 3 * i));
    for (int j = 0; j < m; ++j)
      if (j != i) {
        problem.block_columns.push_back(j);
        problem.blocks.push_back(W.block<3, 3>(3 * i, 3 * j));
      }
    problem.block_offsets.push_back(static_cast<int>(problem.blocks.size()));
  }
  return problem;
}

struct LawCount {
  int take_off = 0, stick = 0, slide = 0;
};

/// Coulomb's law, term by term, for every contact, within a velocity tolerance `tol`.
void check_coulomb_law(const CoulombProblem& problem, const std::vector<Vec3>& p, double tol, LawCount& count) {
  const std::vector<Vec3> u = contact_velocities(problem, p);
  for (int i = 0; i < problem.contact_count(); ++i) {
    INFO("contact " << i << " p " << p[i].transpose() << " u " << u[i].transpose());
    const double mu = problem.friction[i];
    const double pn = p[i][0], pt = p[i].tail<2>().norm(), ut = u[i].tail<2>().norm();
    CHECK(pn >= 0.0);
    CHECK(u[i][0] >= -tol);
    CHECK(pt <= mu * pn * (1.0 + 1e-12) + 1e-300);
    const double scale = problem.diagonal[i].diagonal().maxCoeff();
    if (pn * scale <= tol) {
      ++count.take_off;
      continue;
    }
    CHECK(std::abs(u[i][0]) <= tol);  // pressed: the normal velocity is zero
    if (pt < mu * pn * (1.0 - 1e-9)) {
      ++count.stick;
      CHECK(ut <= tol);
    } else if (ut > tol) {
      ++count.slide;
      // Friction against the slip: u_t = -gamma p_t.
      CHECK(u[i].tail<2>().dot(p[i].tail<2>()) <= -(1.0 - 1e-6) * ut * pt);
    }
  }
}

}  // namespace

TEST_CASE("coulomb solver: the disc minimiser matches a dense sampling of the disc") {
  std::mt19937 random(11);
  std::uniform_real_distribution<double> symmetric(-1.0, 1.0);
  int boundary = 0, inside = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Mat2 B;
    B << symmetric(random), symmetric(random), symmetric(random), symmetric(random);
    Mat2 A = B * B.transpose();
    if (trial % 5 == 0) A = Mat2(A.col(0) * A.col(0).transpose());  // rank 1: a flat direction
    if (trial % 17 == 0) A.setZero();
    const Vec2 c(symmetric(random), symmetric(random));
    const double radius = 0.05 + 3.0 * std::abs(symmetric(random));
    const Vec2 p = minimise_on_disc(A, c, radius);
    INFO("trial " << trial);
    CHECK(p.norm() <= radius * (1.0 + 1e-12));
    // Sampling: polar grid, finer than the tolerance below needs.
    double best = 0.0;
    for (int i = 1; i <= 400; ++i)
      for (int j = 0; j < 720; ++j) {
        const double r = radius * i / 400.0, angle = 2.0 * M_PI * j / 720.0;
        best = std::min(best, disc_objective(A, c, Vec2(r * std::cos(angle), r * std::sin(angle))));
      }
    const double found = disc_objective(A, c, p);
    CHECK(found <= best + 1e-12);
    CHECK(found >= best - 1e-4 * (1.0 + std::abs(best)));  // the grid is no better than 1e-4
    (p.norm() >= radius * (1.0 - 1e-12) ? boundary : inside) += 1;
  }
  CHECK(boundary > 20);
  CHECK(inside > 20);
}

TEST_CASE("coulomb solver: the disc minimiser on ill-conditioned problems meets its optimality conditions") {
  // A bounded direction with a tiny curvature is not an unbounded one: the minimiser is inside.
  Mat2 A = Vec2(1e-9, 1e6).asDiagonal();
  CHECK((minimise_on_disc(A, Vec2(-1e-9, 0.0), 10.0) - Vec2(1.0, 0.0)).norm() < 1e-9);
  // Random rotations of diag(lambda_min, lambda_max), conditions 1e8 to 1e14: inside, A p + c = 0;
  // on the circle, A p + c = -gamma p with gamma >= 0 (Coulomb's maximal dissipation).
  std::mt19937 random(23);
  std::uniform_real_distribution<double> unit(0.0, 1.0), symmetric(-1.0, 1.0);
  int inside = 0, boundary = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const double angle = 2.0 * M_PI * unit(random), condition = std::pow(10.0, 8.0 + 6.0 * unit(random));
    const double scale = std::pow(10.0, -3.0 + 6.0 * unit(random));
    Mat2 R;
    R << std::cos(angle), -std::sin(angle), std::sin(angle), std::cos(angle);
    A = R * Vec2(scale / condition, scale).asDiagonal() * R.transpose();
    const double radius = std::pow(10.0, -2.0 + 4.0 * unit(random));
    // Half the problems have their unconstrained minimiser inside the disc (c = -A p_inside),
    // half anywhere (mostly far outside along the soft direction).
    const Vec2 p_inside = 0.9 * radius * unit(random) * Vec2(symmetric(random), symmetric(random)).normalized();
    const Vec2 c = trial % 2 == 0 ? Vec2(-(A * p_inside)) : Vec2(scale * Vec2(symmetric(random), symmetric(random)));
    const Vec2 p = minimise_on_disc(A, c, radius);
    INFO("trial " << trial << " condition " << condition << " p " << p.transpose());
    const Vec2 gradient = A * p + c;
    REQUIRE(p.norm() <= radius * (1.0 + 1e-12));
    if (p.norm() < radius * (1.0 - 1e-9)) {
      ++inside;
      CHECK(gradient.norm() <= 1e-8 * (c.norm() + scale * p.norm()));
    } else {
      ++boundary;
      // The gradient points inward along -p: no descent along the circle or into it.
      CHECK(gradient.dot(p) <= 1e-8 * gradient.norm() * p.norm());
      CHECK(std::abs(gradient.x() * p.y() - gradient.y() * p.x()) <= 1e-7 * gradient.norm() * p.norm());
    }
  }
  CHECK(inside > 20);
  CHECK(boundary > 20);
}

TEST_CASE("coulomb solver: a contact no impulse can move gets none, whatever the warm start") {
  std::vector<Vec3> p = {Vec3(5.0, 1.0, 0.0)};
  const CoulombResult result = solve_coulomb(single(Mat3::Zero(), Vec3(1.0, 0.2, 0.0), 0.5), CoulombSettings{}, p);
  CHECK(result.converged);
  CHECK(p[0].norm() == 0.0);
}

TEST_CASE("coulomb solver: one contact takes off, sticks or slides as its closed form says") {
  CoulombSettings settings;
  settings.tolerance = 1e-12;
  std::vector<Vec3> p;
  // Separating: no impulse.
  CHECK(solve_coulomb(single(Mat3::Identity(), Vec3(1.0, 0.5, 0.0), 0.3), settings, p).converged);
  CHECK(p[0].norm() == 0.0);
  // Approaching at 1 m/s, sliding at 0.5 m/s, W = I: mu = 1 sticks with p = (1, -0.5, 0).
  p.clear();
  CHECK(solve_coulomb(single(Mat3::Identity(), Vec3(-1.0, 0.5, 0.0), 1.0), settings, p).converged);
  CHECK((p[0] - Vec3(1.0, -0.5, 0.0)).norm() < 1e-12);
  // mu = 0.2 slides: p = (1, -0.2, 0), the slip slowed to 0.3 m/s.
  p.clear();
  const CoulombProblem sliding = single(Mat3::Identity(), Vec3(-1.0, 0.5, 0.0), 0.2);
  CHECK(solve_coulomb(sliding, settings, p).converged);
  CHECK((p[0] - Vec3(1.0, -0.2, 0.0)).norm() < 1e-12);
  CHECK((contact_velocities(sliding, p)[0] - Vec3(0.0, 0.3, 0.0)).norm() < 1e-12);
  // Coupled normal and tangent (W_nt != 0): the slip still opposes friction, u_n = 0.
  Mat3 W;
  W << 2.0, 0.5, 0.2, 0.5, 1.0, 0.1, 0.2, 0.1, 0.7;
  const CoulombProblem coupled = single(W, Vec3(-1.0, 0.8, -0.3), 0.4);
  p.clear();
  const CoulombResult result = solve_coulomb(coupled, settings, p);
  CHECK(result.converged);
  LawCount count;
  check_coulomb_law(coupled, p, 1e-10, count);
  CHECK(count.slide == 1);
}

TEST_CASE("coulomb solver: frictionless coupled contacts match the enumerated complementarity solution") {
  std::mt19937 random(3);
  for (int trial = 0; trial < 20; ++trial) {
    const int m = 5;
    const CoulombProblem problem = rod_like_problem(random, 12, m, 0.0, 1.0);
    // Normal rows only: W_nn p_n + b_n = u_n, 0 <= p_n _|_ u_n >= 0. Enumerate active sets.
    Eigen::MatrixXd Wnn(m, m);
    Eigen::VectorXd bn(m);
    for (int i = 0; i < m; ++i) {
      bn[i] = problem.free_velocity[i][0];
      Wnn(i, i) = problem.diagonal[i](0, 0);
      for (int k = problem.block_offsets[i]; k < problem.block_offsets[i + 1]; ++k)
        Wnn(i, problem.block_columns[k]) = problem.blocks[k](0, 0);
    }
    Eigen::VectorXd exact;
    int solutions = 0;
    for (int set = 0; set < (1 << m); ++set) {
      std::vector<int> active;
      for (int i = 0; i < m; ++i)
        if (set & (1 << i)) active.push_back(i);
      Eigen::VectorXd pn = Eigen::VectorXd::Zero(m);
      if (!active.empty()) {
        Eigen::MatrixXd Wa(active.size(), active.size());
        Eigen::VectorXd ba(active.size());
        for (std::size_t a = 0; a < active.size(); ++a) {
          ba[a] = bn[active[a]];
          for (std::size_t c = 0; c < active.size(); ++c) Wa(a, c) = Wnn(active[a], active[c]);
        }
        const Eigen::VectorXd pa = Wa.ldlt().solve(-ba);
        for (std::size_t a = 0; a < active.size(); ++a) pn[active[a]] = pa[a];
      }
      const Eigen::VectorXd un = Wnn * pn + bn;
      if (pn.minCoeff() >= -1e-12 && un.minCoeff() >= -1e-10) {
        exact = pn;
        ++solutions;
      }
    }
    REQUIRE(solutions == 1);  // W_nn positive definite: one solution
    // Plain, over-relaxed (projected SOR converges on this problem for any omega in (0, 2))
    // and accelerated by nonsmooth conjugate gradients: the same solution.
    for (const auto& [relaxation, accelerated] : {std::pair(1.0, false), std::pair(1.8, false), std::pair(1.0, true)}) {
      std::vector<Vec3> p;
      CoulombSettings settings;
      settings.tolerance = 1e-11;
      settings.max_sweeps = 10000;
      settings.normal_relaxation = relaxation;
      settings.nonsmooth_cg = accelerated;
      const CoulombResult result = solve_coulomb(problem, settings, p);
      INFO("trial " << trial << " relaxation " << relaxation << " accelerated " << accelerated << " sweeps "
                    << result.sweeps);
      CHECK(result.converged);
      for (int i = 0; i < m; ++i) {
        CHECK(p[i][0] == doctest::Approx(exact[i]).epsilon(1e-8).scale(1e-3));
        CHECK(p[i].tail<2>().norm() == 0.0);
      }
    }
  }
}

TEST_CASE("coulomb solver: coupled frictional contacts on rod-like systems obey Coulomb's law") {
  // Plain Gauss-Seidel, then accelerated by nonsmooth conjugate gradients (what the step
  // uses). (Over-relaxed, 1.8 on the normal and 1.5 on the tangent as the brush experiment
  // found fastest, 8 of these 45 did not converge in 20000 sweeps; 1.8 on the normal alone,
  // 4: the option is not the default.)
  int total_sweeps[2] = {0, 0};
  for (const bool accelerated : {false, true}) {
    CAPTURE(accelerated);
    std::mt19937 random(17);
    LawCount count;
    int converged = 0, trials = 0, sweeps = 0;
    for (double mu : {0.1, 0.3, 1.0})
      for (int trial = 0; trial < 15; ++trial) {
        const CoulombProblem problem = rod_like_problem(random, 16, 6, mu, 1.0);
        std::vector<Vec3> p;
        CoulombSettings settings;
        settings.tolerance = 1e-10;
        settings.max_sweeps = 20000;
        settings.nonsmooth_cg = accelerated;
        const CoulombResult result = solve_coulomb(problem, settings, p);
        total_sweeps[accelerated ? 1 : 0] += result.sweeps;
        ++trials;
        sweeps = std::max(sweeps, result.sweeps);
        if (!result.converged) continue;  // friction's law is not convex: reported, not assumed
        ++converged;
        INFO("mu " << mu << " trial " << trial << " sweeps " << result.sweeps);
        check_coulomb_law(problem, p, 1e-8, count);
        // A warm start from the solution needs no sweep; the same start gives the same bits.
        std::vector<Vec3> again = p;
        CHECK(solve_coulomb(problem, settings, again).sweeps == 0);
        std::vector<Vec3> repeat;
        solve_coulomb(problem, settings, repeat);
        for (int i = 0; i < problem.contact_count(); ++i) CHECK((repeat[i].array() == p[i].array()).all());
      }
    MESSAGE("converged " << converged << " of " << trials << " (at most " << sweeps << " sweeps); take-off " << count.take_off << ", stick "
                         << count.stick << ", slide " << count.slide);
    CHECK(converged >= trials * 9 / 10);
    // Every regime of the law was met and checked.
    CHECK(count.take_off > 10);
    CHECK(count.stick > 10);
    CHECK(count.slide > 10);
  }
  MESSAGE("sweeps over the 45 problems: " << total_sweeps[0] << " plain, " << total_sweeps[1] << " accelerated");
  CHECK(total_sweeps[1] < total_sweeps[0]);
}
