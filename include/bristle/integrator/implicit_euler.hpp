#pragma once
/// Baraff-Witkin large-step backward Euler ("Large steps in cloth simulation", SIGGRAPH 1998),
/// and Newton's method on the same equations.
///
/// Backward Euler asks for v1 with  M (v1 - v0) = h f(x0 + h v1, v1),  x1 = x0 + h v1,  where
/// f = -grad U - (alpha M + beta K) v is the potential force plus Rayleigh damping. Newton's
/// method on the residual, with the force linearised about x_lin,
///
///   r(v) = M (v - v0) + h alpha M v + h grad U(x_lin) + K [h (x0 + h v - x_lin) + h beta v]
///   J    = (1 + h alpha) M + (h^2 + h beta) K,      J dv = -r(v).
///
/// K is the Hessian of U after PSD projection, so J is SPD for every h and CG applies.
///
/// The first iteration (Linearization::Start, the default) is Baraff-Witkin's single linear
/// solve: x_lin = x0, v = v0, i.e.  (M - h df/dv - h^2 df/dx) dv = h (f0 + h df/dx v0).
/// Every further iteration (`newton_iterations` > 1) is Newton's method, linearised where the
/// iterate puts the rod, x_lin = x0 + h v. That is a descent method on the incremental
/// potential
///
///   Phi(v) = 1/2 (v - v0)^T M (v - v0) + h alpha/2 v^T M v + U(x0 + h v) + h beta/2 v^T K v
///
/// (K frozen at the iterate; grad Phi = r), so each step dv is tried in full and halved
/// until Phi decreases sufficiently (Armijo; Nocedal and Wright, "Numerical Optimization",
/// algorithm 3.1). `newton_tolerance` > 0 stops early once the correction is negligible.
///
/// Why more than one solve matters: one linear solve moves every vertex along the tangent of
/// its rotation, which stretches the nearly inextensible edges by (h omega)^2 L / 2 and lags
/// the motion badly (a hair strand at dt = 1/240 s, 0.25 s after release: 90% of its length
/// behind the converged backward Euler answer after single solves, 4% with two iterations),
/// and at large steps can add energy. `length_correction` removes exactly that stretch after
/// the last solve (integrator/length_correction.hpp): with the bending Hessian reduced to its
/// bending modes, one solve per step is then within 0.1% of converged backward Euler on the
/// same strand. At steps far above the bending periods, converge instead. The line search makes every iteration lower Phi; that
/// is not the energy (U is not convex), so only iterations run to convergence
/// (newton_tolerance) are energy-safe at steps far above the bending periods.
///
/// Linearization::Predicted starts Newton (line search included) from a guess extrapolated
/// from the last two steps, v~ = v0 + (h / h_prev)(v0 - v_prev), linearised at x0 + h v~,
/// when Phi(v~) <= Phi(v0). For resolved motion that guess is second-order close to v1, so
/// few iterations go far (the same strand: 4% of its length with two iterations from x0,
/// 0.004% from v~). It is for small steps: where h omega >> 1 for the motion that matters
/// (dt = 1/60 s on that strand) extrapolation overshoots, and two iterations from there can
/// end with more energy than the step began with; use Start there.
///
/// With colliders in contact, dv satisfies the contact constraints exactly (constraint
/// filtering, contact/); a shortened step would not, so contact iterations take the full step.
///
/// Fixed vertices are eliminated: their velocity is prescribed (the velocity stored in the
/// state for those DOFs, zero for a clamped root, set by whoever scripts their motion) and
/// only free DOFs enter the solve.
///
/// Stages of a step, each visible in the code: assemble -> build system -> solve -> line
/// search -> update -> report. A step never throws and never exits; a failure is described in
/// the report and leaves the state as it was.

#include <string>

#include <Eigen/IterativeLinearSolvers>

#include "bristle/contact/contact_report.hpp"
#include "bristle/contact/contact_solver.hpp"
#include "bristle/integrator/assembly.hpp"
#include "bristle/integrator/length_correction.hpp"
#include "bristle/integrator/rod_preconditioner.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// Where a step's first Newton iteration is linearised.
enum class Linearization {
  Start,      ///< at the start of the step, x0 (Baraff-Witkin; the contract's default)
  Predicted,  ///< at x0 + h v~, v~ extrapolated from the last two steps (see step())
};

struct SolverSettings {
  double cg_tolerance = 1e-8;   ///< relative residual |r| / |b| at which CG stops
  int cg_max_iterations = 1000; ///< cap per linear solve
  int newton_iterations = 1;    ///< at most; 1: Baraff-Witkin's single linearised solve
  /// newton_iterations > 1: stop once the largest velocity correction is below this fraction
  /// of the largest velocity (or of |g| h, if larger). 0: always newton_iterations.
  double newton_tolerance = 0.0;
  /// Backtracking line search on the incremental potential, for every iteration not
  /// linearised at the start of the step.
  bool line_search = true;
  /// After the last Newton iteration, give every edge back the length the linearised solve
  /// saw (integrator/length_correction.hpp): removes the stretch a linear solve adds to
  /// turning edges, so one iteration per step keeps up with converged backward Euler on
  /// nearly inextensible rods. Not with colliders.
  bool length_correction = false;
  Linearization linearization = Linearization::Start;
  HessianProjection projection = HessianProjection::Projected;
  /// Each step's report carries the energies at the step's end (StepReport::energies): one
  /// potential-energy pass, about 5% of a one-solve step, unless the step's line search already
  /// evaluated them. false leaves them zero after a completed step, for callers that read
  /// energies only now and then (ImplicitEuler::energies), such as the runner at frames.
  bool step_energies = true;
  /// Threads for assembly, the preconditioner and CG's matrix-vector products. Frames are
  /// bitwise identical for every value (each parallel loop is over independent rods or rows).
  int threads = 1;
  ContactSettings contact;      ///< used only when the model has colliders
};

struct StepReport {
  bool ok = true;
  std::string failure;      ///< empty when ok; otherwise what went wrong, with rod and vertex
  int failed_rod = -1;      ///< where a non-finite value first appeared, when known
  int failed_vertex = -1;
  int cg_iterations = 0;    ///< preconditioned CG iterations (= matrix-vector products), all Newton iterations
  double cg_residual = 0.0; ///< relative residual of the last linear solve
  int newton_iterations = 0;
  int line_search_halvings = 0;  ///< step halvings in the line search, all Newton iterations
  int line_search_failures = 0;  ///< line searches that found no sufficient decrease
  int length_correction_iterations = 0;  ///< of the slowest rod (length_correction only)
  int uncorrected_rods = 0;  ///< rods the length correction left alone (dependent constraints)
  EnergyBreakdown energies; ///< at the end of the step (at the start, if it failed); zero without step_energies
  double assembly_seconds = 0.0;  ///< wall time in assembly and system build
  double solve_seconds = 0.0;     ///< wall time in the preconditioner and CG
  ContactReport contact;          ///< per-collider contact stats (empty without colliders)
};

class ImplicitEuler {
 public:
  ImplicitEuler(const Model& model, SolverSettings settings);

  /// Advances `state` by dt. On failure the state is left unchanged.
  StepReport step(State& state, double dt);

  EnergyBreakdown energies(const State& state) const;
  const SolverSettings& settings() const { return settings_; }
  SystemAssembler& assembler() { return assembler_; }

 private:
  using Solver = Eigen::ConjugateGradient<SparseMatrix, Eigen::Lower | Eigen::Upper, RodBlockPreconditioner>;

  bool find_non_finite(const VecX& values, StepReport& report, const char* what) const;
  bool find_collapsed_edge(const VecX& positions, StepReport& report) const;
  /// The accepted fraction of dv_, and the potential energies at the point it leads to
  /// (unknown when no trial decreased Phi and the full step is taken anyway).
  struct LineSearch {
    double step = 1.0;
    bool energies_known = false;
    EnergyBreakdown energies;
    bool found = true;  ///< false: no trial decreased Phi sufficiently (step 1, energies unknown)
  };
  LineSearch line_search(const VecX& x0, const VecX& v0, const VecX& v, double h, double potential_at_v,
                         double slope, double damping_scale, StepReport& report);

  const Model& model_;
  SolverSettings settings_;
  SystemAssembler assembler_;
  VecX mass_;          // per DOF
  // (1 + h alpha) M, the system's diagonal term, kept while h alpha stays the same.
  VecX system_mass_;
  double system_mass_scale_ = 0.0;
  Solver solver_;
  ContactSolver contact_;  // contact/: active only when the model has colliders
  LengthCorrection length_correction_;
  // Scratch, sized once.
  VecX gradient_, product_, w_, residual_, rhs_free_, dv_free_, warm_start_;
  VecX dv_, trial_v_, trial_x_, mass_dv_, system_dv_, guess_, end_positions_, velocity_,
      linearization_point_;
  double report_time_ = 0.0;
  // For Linearization::Predicted: the previous step's start velocity and step, and the state
  // it ended in (to recognise the next step as its continuation).
  VecX previous_v0_, last_end_v_, last_end_x_;
  double previous_h_ = 0.0, last_end_time_ = 0.0;  // t1 of the step being taken (loads are evaluated there)
};

}  // namespace bristle
