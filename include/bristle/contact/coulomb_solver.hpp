#pragma once
/// Frictional contact impulses for a set of point contacts coupled through their Delassus
/// operator: the impulse solve of rod-rod contacts as constraints (docs/contact.md, "A plan
/// for the pressed brush: rod-rod contacts as constraints"; the formulation of Daviet,
/// Bertails-Descoubes and Boissieux, "A hybrid iterative solver for robustly capturing Coulomb
/// friction in hair dynamics", SIGGRAPH Asia 2011).
///
/// Each contact i has a frame (normal, tangent1, tangent2), an impulse p_i = (p_n, p_t) and a
/// relative velocity u_i = (u_n, u_t) in it, and the velocities depend affinely on the
/// impulses:
///
///   u = W p + b,   W = H A^-1 H^T  (symmetric positive semi-definite, 3 x 3 blocks),
///
/// b the contacts' velocities without contact impulses. Coulomb's law at every contact:
///
///   take-off   p = 0,                        u_n >= 0
///   stick      |p_t| <= mu p_n,  p_n >= 0,   u = 0
///   slide      |p_t| =  mu p_n,  p_n > 0,    u_n = 0,  u_t = -gamma p_t  (gamma > 0)
///
/// Solved by projected block Gauss-Seidel in a fixed order, each contact in turn with the
/// others' impulses fixed: the normal impulse by its complementarity (p_n <- max(0, p_n - u_n
/// / W_nn)), then the tangential impulse exactly, as the minimiser of the contact's
/// tangential kinetic energy 1/2 p_t^T W_tt p_t + u_t'^T p_t over the disc |p_t| <= mu p_n
/// (a two-dimensional trust-region problem: its optimality condition W_tt p_t + u_t' = -gamma
/// p_t, gamma >= 0, is Coulomb's maximal dissipation). A fixed point of the sweep satisfies
/// the law above exactly, at every contact an impulse can move (W_nn > 0); one none can move
/// gets no impulse. For frictionless contacts the sweep is projected Gauss-Seidel on a
/// positive semi-definite linear complementarity problem, which converges; with friction
/// the law is not a convex problem and convergence is not guaranteed, so the residual is
/// reported. The same problem and start give the same bits.

#include <vector>

#include "bristle/math/types.hpp"

namespace bristle {

struct CoulombProblem {
  std::vector<double> friction;        ///< mu per contact (>= 0)
  std::vector<Vec3> free_velocity;     ///< b_i, in the contact's frame (normal first) [m/s]
  std::vector<Mat3> diagonal;          ///< W_ii [m/s per N s], symmetric PSD
  /// The off-diagonal blocks W_ij (i != j) by block row i: entries
  /// block_offsets[i] .. block_offsets[i + 1] of block_columns (j) and blocks (W_ij). Empty
  /// offsets: no coupling. W must be symmetric: W_ji = W_ij^T, both stored.
  std::vector<int> block_offsets;
  std::vector<int> block_columns;
  std::vector<Mat3> blocks;

  int contact_count() const { return static_cast<int>(free_velocity.size()); }
};

struct CoulombSettings {
  int max_sweeps = 200;
  /// Converged when every contact's residual (coulomb_residuals) is at most this [m/s].
  double tolerance = 1e-8;
  /// Over-relaxation of each step, in (0, 2): the normal impulse p_n <- max(0, p_n - omega u_n /
  /// W_nn), and the tangential one p_t <- proj(p_t + omega_t (q - p_t)), q the disc's
  /// minimiser. The fixed points, hence the solutions, do not depend on them (q = p_t there).
  /// On brush-like problems 1.8 and 1.5 took 2 to 5 times fewer sweeps than 1 and 1, but 8 of
  /// the 45 rod-like frictional problems of the tests then did not converge (docs/contact.md,
  /// "How projected Gauss-Seidel scales on a brush"): plain Gauss-Seidel is the default.
  double normal_relaxation = 1.0;
  double tangential_relaxation = 1.0;
  /// Sweeps accelerated by nonsmooth nonlinear conjugate gradients (solve_coulomb): the same
  /// fixed points, fewer sweeps on stiff rods with many contacts.
  bool nonsmooth_cg = false;
};

struct CoulombResult {
  int sweeps = 0;
  double residual = 0.0;  ///< the largest contact residual at the end [m/s]
  bool converged = false;
};

/// The affine map u = W p + b of a Coulomb problem, given implicitly: how solve_coulomb reads
/// the problem. The explicit CoulombProblem is one; rod contacts keep W as the per-rod
/// responses it is made of (rod_contact_rows.hpp), whose velocity update costs a rod's DOFs
/// per changed impulse instead of a row of W per contact.
class CoulombOperator {
 public:
  virtual ~CoulombOperator() = default;
  virtual int contact_count() const = 0;
  virtual double friction(int i) const = 0;
  /// W_ii. The solve asks for it only at a contact that pushes or approaches (p_i != 0 or
  /// u_n < 0): an operator may form it then.
  virtual const Mat3& diagonal(int i) = 0;
  /// Takes `impulses` as the current ones (the start of a solve).
  virtual void reset(const std::vector<Vec3>& impulses) = 0;
  /// u_i = b_i + sum_j W_ij p_j for the current impulses (`impulses`, as reset and changed).
  virtual Vec3 velocity(int i, const std::vector<Vec3>& impulses) const = 0;
  /// Impulse i changed by `delta` (impulses[i] already holds the new value).
  virtual void changed(int i, const Vec3& delta) = 0;
};

/// solve_coulomb over any CoulombOperator: the same sweep, the same bits for the same
/// velocities.
CoulombResult solve_coulomb(CoulombOperator& problem, const CoulombSettings& settings, std::vector<Vec3>& impulses);

/// The contacts' velocities u = W p + b for impulses p.
std::vector<Vec3> contact_velocities(const CoulombProblem& problem, const std::vector<Vec3>& impulses);

/// Per contact, how far (p, u = W p + b) is from Coulomb's law, as a velocity [m/s]: the norm
/// of (p - proj(p - rho u)) / rho, proj the normal's clamp at zero and the tangential disc of
/// radius mu p_n, rho = 1 / (largest diagonal entry of W_ii). Zero exactly where the law holds
/// (for contacts with a nonzero W_ii).
std::vector<double> coulomb_residuals(const CoulombProblem& problem, const std::vector<Vec3>& impulses);

/// Solves for the impulses, starting from `impulses` (a warm start; resized to zeros when its
/// size does not match) and writing them there.
CoulombResult solve_coulomb(const CoulombProblem& problem, const CoulombSettings& settings,
                            std::vector<Vec3>& impulses);

/// The point of the disc |p| <= radius minimising 1/2 p^T A p + c^T p, A symmetric positive
/// semi-definite 2 x 2 (exact up to rounding; the step of solve_coulomb's tangential impulse).
Vec2 minimise_on_disc(const Mat2& A, const Vec2& c, double radius);

}  // namespace bristle
