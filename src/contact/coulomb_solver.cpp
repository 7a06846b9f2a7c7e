#include "bristle/contact/coulomb_solver.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Eigenvalues>

namespace bristle {

namespace {

// u_i = b_i + sum_j W_ij p_j over the diagonal block and row i's off-diagonal blocks.
Vec3 contact_velocity(const CoulombProblem& problem, const std::vector<Vec3>& impulses, int i) {
  Vec3 u = problem.free_velocity[i] + problem.diagonal[i] * impulses[i];
  if (problem.block_offsets.empty()) return u;
  for (int k = problem.block_offsets[i]; k < problem.block_offsets[i + 1]; ++k)
    u += problem.blocks[k] * impulses[problem.block_columns[k]];
  return u;
}

// The point of the disc |p| <= radius nearest to q.
Vec2 project_on_disc(const Vec2& q, double radius) {
  const double norm = q.norm();
  if (norm <= radius) return q;
  return radius > 0.0 ? Vec2(q * (radius / norm)) : Vec2(Vec2::Zero());
}

}  // namespace

std::vector<Vec3> contact_velocities(const CoulombProblem& problem, const std::vector<Vec3>& impulses) {
  std::vector<Vec3> velocities(problem.contact_count());
  for (int i = 0; i < problem.contact_count(); ++i) velocities[i] = contact_velocity(problem, impulses, i);
  return velocities;
}

std::vector<double> coulomb_residuals(const CoulombProblem& problem, const std::vector<Vec3>& impulses) {
  std::vector<double> residuals(problem.contact_count(), 0.0);
  for (int i = 0; i < problem.contact_count(); ++i) {
    const Vec3 u = contact_velocity(problem, impulses, i);
    const Vec3& p = impulses[i];
    const double largest = problem.diagonal[i].diagonal().maxCoeff();
    if (!(largest > 0.0)) {
      // No impulse moves this contact: only an approach nothing can stop is an error.
      residuals[i] = std::max(0.0, -u[0]);
      continue;
    }
    const double rho = 1.0 / largest;
    const double normal = p[0] - std::max(0.0, p[0] - rho * u[0]);
    const Vec2 pt = p.tail<2>();
    const Vec2 tangential = pt - project_on_disc(pt - rho * u.tail<2>(), problem.friction[i] * std::max(0.0, p[0]));
    residuals[i] = std::sqrt(normal * normal + tangential.squaredNorm()) / rho;
  }
  return residuals;
}

Vec2 minimise_on_disc(const Mat2& A, const Vec2& c, double radius) {
  if (!(radius > 0.0)) return Vec2::Zero();
  // The iterative solver, not the closed form (computeDirect), whose smallest eigenvalue
  // cancels: diag(1e-9, 1e6) came out with 1e-9 off by 10%.
  Eigen::SelfAdjointEigenSolver<Mat2> eigen(A);
  const Mat2 V = eigen.eigenvectors();
  // Eigenvalues ascending; rounding may leave a PSD matrix's smallest a little negative. A
  // small positive one is kept as it is: zeroing it would call a bounded direction unbounded
  // (A = diag(1e-9, 1e6), c = (-1e-9, 0), radius 10: the minimiser (1, 0), not (10, 0)).
  const Vec2 lambda = eigen.eigenvalues().cwiseMax(0.0);
  const Vec2 cr = V.transpose() * c;  // c in the eigenbasis
  const double c_norm = cr.norm();
  if (c_norm == 0.0) return Vec2::Zero();
  // Inside: the unconstrained minimiser (along a null direction of A that c does not touch,
  // the objective is flat: take its smallest point).
  if (lambda[1] > 0.0 && (lambda[0] > 0.0 || cr[0] == 0.0)) {
    const Vec2 inside(lambda[0] > 0.0 ? -cr[0] / lambda[0] : 0.0, -cr[1] / lambda[1]);
    if (inside.norm() <= radius) return V * inside;
  }
  // On the circle: p(g) = -(Lambda + g I)^-1 c' with g >= 0 and |p(g)| = radius. |p| falls
  // as g grows; |c| / (lambda_max + g) <= |p(g)| <= |c| / (lambda_min + g) brackets the root.
  // Safeguarded Newton on psi(g) = 1 / |p(g)| - 1 / radius (increasing, nearly linear: the
  // secular equation of trust-region methods, Nocedal and Wright, Numerical Optimization,
  // section 4.3), bisecting where a Newton step leaves the bracket.
  double low = std::max(0.0, c_norm / radius - lambda[1]);
  double high = std::max(0.0, c_norm / radius - lambda[0]);
  double g = low;
  // A component c' leaves untouched stays zero (also on its pole).
  auto component = [&](int k, double gamma) { return cr[k] == 0.0 ? 0.0 : -cr[k] / (lambda[k] + gamma); };
  auto at = [&](double gamma) { return Vec2(component(0, gamma), component(1, gamma)); };
  for (int iteration = 0; iteration < 100 && high - low > 1e-15 * high; ++iteration) {
    const Vec2 p = at(g);
    const double norm = p.norm();
    if (!std::isfinite(norm)) {  // g on a pole: |p| infinite, psi = -1 / radius
      low = g;
      g = 0.5 * (low + high);
      continue;
    }
    const double psi = 1.0 / norm - 1.0 / radius;
    if (std::abs(psi) <= 1e-15 / radius) break;
    (psi < 0.0 ? low : high) = g;
    // d psi / d g = sum_k c'_k^2 / (lambda_k + g)^3 / |p|^3 = sum_k p_k^2 / (lambda_k + g) / |p|^3
    double slope = 0.0;
    for (int k = 0; k < 2; ++k)
      if (p[k] != 0.0) slope += p[k] * p[k] / (lambda[k] + g);
    slope /= norm * norm * norm;
    double next = g - psi / slope;
    if (!(next > low && next < high)) next = 0.5 * (low + high);
    g = next;
  }
  Vec2 p = at(g);
  if (!std::isfinite(p.norm())) p = at(high);
  // On the circle exactly, so that |p_t| <= mu p_n holds to rounding. A safeguard against
  // rounding in the root: never worse than p = 0, which is in the disc.
  p = V * (p * (radius / p.norm()));
  const double value = 0.5 * p.dot(A * p) + c.dot(p);
  return value <= 0.0 ? p : Vec2(Vec2::Zero());
}

namespace {

// The explicit problem as an operator: W's blocks read directly.
class ExplicitOperator final : public CoulombOperator {
 public:
  explicit ExplicitOperator(const CoulombProblem& problem) : problem_(problem) {}
  int contact_count() const override { return problem_.contact_count(); }
  double friction(int i) const override { return problem_.friction[i]; }
  const Mat3& diagonal(int i) override { return problem_.diagonal[i]; }
  void reset(const std::vector<Vec3>&) override {}
  Vec3 velocity(int i, const std::vector<Vec3>& impulses) const override {
    return contact_velocity(problem_, impulses, i);
  }
  void changed(int, const Vec3&) override {}

 private:
  const CoulombProblem& problem_;
};

// coulomb_residuals over an operator. A contact without impulse is off the law only by its
// approach, max(0, -u_n) (what the formula below gives for p = 0, whatever rho): W_ii is
// needed only where an impulse pushes.
double largest_coulomb_residual(CoulombOperator& problem, const std::vector<Vec3>& impulses) {
  double largest_residual = 0.0;
  for (int i = 0; i < problem.contact_count(); ++i) {
    const Vec3 u = problem.velocity(i, impulses);
    const Vec3& p = impulses[i];
    if (p == Vec3::Zero()) {
      largest_residual = std::max(largest_residual, -u[0]);
      continue;
    }
    const double largest = problem.diagonal(i).diagonal().maxCoeff();
    double residual = 0.0;
    if (!(largest > 0.0)) {
      residual = std::max(0.0, -u[0]);
    } else {
      const double rho = 1.0 / largest;
      const double normal = p[0] - std::max(0.0, p[0] - rho * u[0]);
      const Vec2 pt = p.tail<2>();
      const Vec2 tangential = pt - project_on_disc(pt - rho * u.tail<2>(), problem.friction(i) * std::max(0.0, p[0]));
      residual = std::sqrt(normal * normal + tangential.squaredNorm()) / rho;
    }
    largest_residual = std::max(largest_residual, residual);
  }
  return largest_residual;
}

// One sweep of projected block Gauss-Seidel over the contacts in order (coulomb_solver.hpp).
void gauss_seidel_sweep(CoulombOperator& problem, const CoulombSettings& settings, std::vector<Vec3>& impulses) {
  const int m = problem.contact_count();
  for (int i = 0; i < m; ++i) {
    Vec3& p = impulses[i];
    Vec3 u = problem.velocity(i, impulses);
    // Without impulse and not approaching, the steps below leave p = 0 (p_n = max(0, -u_n /
    // W_nn) = 0, then a disc of radius 0): skipped, and W_ii not asked for.
    if (p == Vec3::Zero() && u[0] >= 0.0) continue;
    const Mat3& W = problem.diagonal(i);
    const Vec3 before = p;
    // Normal: the complementarity of p_n and u_n, the other components held.
    if (W(0, 0) > 0.0) {
      const double normal = std::max(0.0, p[0] - settings.normal_relaxation * u[0] / W(0, 0));
      u += W.col(0) * (normal - p[0]);
      p[0] = normal;
    }
    // Tangential: the disc's minimiser of the contact's kinetic energy, p_n held.
    const Mat2 Wtt = W.block<2, 2>(1, 1);
    const Vec2 old = p.tail<2>();
    const Vec2 linear = u.tail<2>() - Wtt * old;
    const double bound = problem.friction(i) * p[0];
    Vec2 tangential = minimise_on_disc(Wtt, linear, bound);
    if (settings.tangential_relaxation != 1.0) {
      // Relaxed, then back onto the disc: a fixed point still has q = p_t (q is in the disc,
      // so q - p_t never points out of it where p_t is on the circle).
      tangential = old + settings.tangential_relaxation * (tangential - old);
      if (tangential.norm() > bound) tangential *= bound / tangential.norm();
    }
    p.tail<2>() = tangential;
    if (p != before) problem.changed(i, p - before);
  }
}

}  // namespace

CoulombResult solve_coulomb(const CoulombProblem& problem, const CoulombSettings& settings,
                            std::vector<Vec3>& impulses) {
  ExplicitOperator op(problem);
  return solve_coulomb(op, settings, impulses);
}

CoulombResult solve_coulomb(CoulombOperator& problem, const CoulombSettings& settings, std::vector<Vec3>& impulses) {
  const int m = problem.contact_count();
  if (static_cast<int>(impulses.size()) != m) impulses.assign(m, Vec3::Zero());
  // A contact no impulse can move (W_nn = 0, hence W_nt = 0: both sides prescribed) gets
  // none, whatever the warm start said.
  for (int i = 0; i < m; ++i)
    if (impulses[i] != Vec3::Zero() && !(problem.diagonal(i)(0, 0) > 0.0)) impulses[i].setZero();
  problem.reset(impulses);
  CoulombResult result;
  auto largest_residual = [&] { return largest_coulomb_residual(problem, impulses); };
  result.residual = largest_residual();
  result.converged = result.residual <= settings.tolerance;
  // Nonsmooth nonlinear conjugate gradients (Silcowitz, Niebe and Erleben, "A nonsmooth
  // nonlinear conjugate gradient method for interactive contact force problems", The Visual
  // Computer 26, 2010): each sweep's change r_k = p_k+1 - p_k taken as a descent direction,
  // and the sweep's result moved on along the previous direction by
  // beta = |r_k|^2 / |r_k-1|^2 (Fletcher-Reeves), restarting where beta > 1. The fixed points
  // are the sweep's: the answer is always a sweep's output, which is in every disc.
  std::vector<Vec3> direction, start;
  double previous_change = 0.0;
  if (settings.nonsmooth_cg) direction.assign(m, Vec3::Zero());
  while (!result.converged && result.sweeps < settings.max_sweeps) {
    if (settings.nonsmooth_cg) start = impulses;
    gauss_seidel_sweep(problem, settings, impulses);
    ++result.sweeps;
    result.residual = largest_residual();
    result.converged = result.residual <= settings.tolerance;
    if (!settings.nonsmooth_cg || result.converged || result.sweeps >= settings.max_sweeps) continue;
    double change = 0.0;
    for (int i = 0; i < m; ++i) change += (impulses[i] - start[i]).squaredNorm();
    const double beta = previous_change > 0.0 ? change / previous_change : 0.0;
    previous_change = change;
    if (!(beta <= 1.0)) {
      for (Vec3& d : direction) d.setZero();  // restart: the sweep alone
      continue;
    }
    for (int i = 0; i < m; ++i) {
      const Vec3 step = beta * direction[i];
      direction[i] = step + (impulses[i] - start[i]);
      if (step == Vec3::Zero()) continue;
      impulses[i] += step;
      problem.changed(i, step);
    }
  }
  return result;
}

}  // namespace bristle
