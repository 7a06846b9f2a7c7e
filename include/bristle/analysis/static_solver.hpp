#pragma once
/// Static equilibrium: the minimiser of the total potential energy
///
///   U(x) = stretch + bend - sum_i m_i g . x_i - sum_loads F . x_vertex + B(x)
///
/// over the free DOFs (fixed vertices held where the state has them), i.e. grad U = 0 with the
/// equilibrium stable in the directions the energy can see. B is frictionless contact with the
/// model's colliders, a log barrier that is infinite where a rod's surface would enter one
/// (analysis/contact_barrier.hpp); it is absent without colliders.
///
/// Method: Newton's method with a backtracking Armijo line search on U (Nocedal and Wright,
/// "Numerical Optimization", 2nd ed., algorithm 3.1 and section 3.4, "Newton's method with
/// Hessian modification"). Each iteration uses the exact Hessian if it is positive definite
/// (tested by the banded Cholesky of every rod block, which the CG solve needs anyway): then
/// the step is the true Newton step and convergence near a stable equilibrium is quadratic.
/// Otherwise it uses the PSD-projected element Hessians (HessianProjection::Projected, the
/// projection the integrator uses). With K+ >= 0 the direction d = -(K+)^-1 g is a descent
/// direction, so the line search always makes progress where the true Hessian is indefinite;
/// this is what lets it leave a slightly perturbed straight column above its buckling load
/// and settle in the bent equilibrium (along the unstable mode the projected step grows the
/// perturbation by a factor 1 + |lambda| / lambda+ per iteration) instead of being drawn to
/// the saddle, as the exact Newton step would be.
///
/// Why it can take a few hundred iterations: the step is linear in the positions, so turning
/// an edge by dphi also stretches it by dphi^2 / 2, and the stiff axial springs (E A / E I =
/// 4 / r^2) turn that into axial forces far above the loads. The line search then shortens the
/// steps of large rotations. Iterations are cheap (one assembly and one banded solve), so the
/// solve still takes milliseconds for a rod of 80 edges.
///
/// Linear solves: conjugate gradients preconditioned by the per-rod banded Cholesky
/// (RodBlockPreconditioner; for uncoupled rods it is an exact solve and CG takes one or two
/// iterations). If the projected Hessian is singular (a rod with no fixed vertex has rigid
/// motions) or CG fails, the solve is retried with K+ + mu diag(K+), mu = 1e-12, 1e-9, ...,
/// and as a last resort the step is preconditioned gradient descent.
///
/// Convergence: |grad U|_inf over the free DOFs <= tol_abs, with
///
///   tol_abs = tolerance * F + 16 eps max_j(E A / lbar_j) X,
///   F = max(largest external force on one vertex, i.e. |m_i g| + |loads on i|,
///           max over rods of E I / L_rod^2  (the bending force scale)),
///   X = max(largest |coordinate|, longest rod)   [m].
///
/// The second term is the round-off floor of the stretch forces: positions are only known to
/// eps X, and an edge of stiffness E A / lbar turns that into a force error E A / lbar eps X;
/// no solver can go below it. A slender rod (r / L = 1e-3, 80 edges) has that floor at about
/// 1e-7 E I / L^2, far below anything that moves the shape.
///
/// Line search and round-off: U is a sum of terms of size up to |m g . x|, so near the
/// solution its decrease is below what double precision resolves. A step whose energy change
/// is within 64 eps sum|U terms| is accepted when it reduces |grad U|_inf.
///
/// Load stepping. With `load_steps` = n > 1, gravity and the loads are ramped: equilibria at
/// load factors 1/n, 2/n, ..., 1, each started from the previous one (intermediate ones only
/// to `intermediate_tolerance`). This is continuation along the equilibrium path: it answers
/// "what shape does the rod take when the load is applied slowly", which matters where several
/// minima exist (snap-through, a bristle pressed against an obstacle, a column loaded past its
/// threshold), whereas one full-load solve from the initial shape finds whichever minimum
/// descent reaches. It is not needed for speed or robustness of a cantilever: for Gamma = 100
/// (a rod hanging almost straight down, the linear deflection Gamma/8 = 12.5 L) one full-load
/// solve takes 115 iterations at 40 edges and 8 load steps 260 in all, to the same shape (the
/// line search already keeps the huge first steps in check). What load stepping does give for
/// free is a fallback: a load step that fails is split in two (up to `max_subdivisions` times)
/// before the solve gives up. Caveat: a split restarts from the last converged level, which
/// may have lost an imperfection (a column below its threshold straightens); `stable` then
/// tells if the end point is a saddle.
///
/// Saddles. Newton's method converges to any equilibrium, and symmetry can keep it on an
/// unstable one: a perfectly straight column above its buckling load stays straight, since
/// every iterate is straight. With `saddle_escapes` > 0 the solver checks the end point with
/// modal_analysis (modes.hpp, the exact Hessian there): if it has a negative eigenvalue, the
/// state is pushed along that mode (the lowest; its sign fixed as modes.hpp does, largest
/// entry positive) so that the largest vertex displacement is `escape_amplitude` times the
/// longest rod, and solved again, up to `saddle_escapes` times. The default 0 returns the
/// saddle, which is what a stability analysis wants (stability.hpp); `bristle run` uses 3.
///
/// Velocities of free DOFs are set to zero on success (the equilibrium is at rest). On failure
/// the state holds the last iterate and the result says what went wrong.

#include <limits>
#include <string>
#include <vector>

#include "bristle/integrator/assembly.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

struct StaticSettings {
  double tolerance = 1e-9;          ///< relative force tolerance (see tol_abs above)
  int max_iterations = 1000;        ///< Newton iterations per load step
  int load_steps = 1;               ///< ramp gravity and loads over this many increments
  int max_subdivisions = 6;         ///< halvings of a load step that failed
  double intermediate_tolerance = 1e-6;  ///< relative tolerance of the load steps before the last
  /// [s] time at which point loads are evaluated (their `ramp`); the default, infinity, means
  /// fully applied.
  double load_time = std::numeric_limits<double>::infinity();
  double armijo = 1e-4;             ///< sufficient decrease constant c1
  int max_backtracks = 60;          ///< step halvings per line search
  double cg_tolerance = 1e-12;      ///< relative residual of the Newton system's CG solve
  int cg_max_iterations = 2000;
  /// Use the exact Hessian when it is positive definite (quadratic convergence near a stable
  /// equilibrium), the projected one otherwise (see the design note).
  bool exact_when_definite = true;
  HessianProjection projection = HessianProjection::Projected;  ///< when the exact one is not definite
  /// Pushes off an unstable equilibrium and solves again, up to this many times (see above).
  int saddle_escapes = 0;
  /// Size of that push: the largest vertex displacement, relative to the longest rod.
  double escape_amplitude = 1e-3;
};

struct StaticResult {
  bool ok = false;
  std::string message;       ///< empty when ok; otherwise what went wrong
  int iterations = 0;        ///< Newton iterations, all load steps
  int load_steps = 0;        ///< load increments solved (more than asked if some were split)
  long cg_iterations = 0;    ///< CG iterations, all solves
  int regularised_solves = 0;  ///< Newton systems that needed mu diag(K) or gradient descent
  /// Whether the exact Hessian at the result is positive definite (a strict local minimum).
  /// false: a saddle or a neutral equilibrium, e.g. a perfectly straight column above its
  /// buckling load (symmetry keeps every iterate straight); perturb the state and solve again.
  bool stable = true;
  double residual = 0.0;     ///< final |grad U|_inf over free DOFs [N]
  double tolerance = 0.0;    ///< tol_abs it was held to [N]
  double force_scale = 0.0;  ///< F above [N]
  EnergyBreakdown energies;  ///< at the final state, full loads [J] (the contact barrier apart)
  /// Negative eigenvalues of M^-1/2 K M^-1/2 at the result (modes.hpp's unstable_count); -1
  /// when not computed (only saddle escapes compute it).
  int unstable_modes = -1;
  int saddle_escapes = 0;    ///< pushes off a saddle that were made
  /// Contact at the result (colliders only): (vertex, collider) pairs within the barrier's
  /// reach dhat, the smallest gap [m] and the normal force per collider [N].
  int contacts = 0;
  double min_gap = 0.0;
  std::vector<double> contact_forces;
};

/// The force tolerance tol_abs above [N] for `model` at positions `x` with relative tolerance
/// `relative` (loads in full): what "is an equilibrium" means here, also for callers that only
/// check (bristle modes).
double static_force_tolerance(const Model& model, const VecX& x, double relative = StaticSettings().tolerance);

/// Solves for the static equilibrium, starting from (and overwriting) `state.positions`.
StaticResult solve_static(const Model& model, State& state, const StaticSettings& settings = {});

}  // namespace bristle
