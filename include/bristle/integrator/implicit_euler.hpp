#pragma once
/// Baraff-Witkin large-step backward Euler ("Large steps in cloth simulation", SIGGRAPH 1998).
///
/// Backward Euler asks for v1 with  M (v1 - v0) = h f(x0 + h v1, v1),  x1 = x0 + h v1,  where
/// f = -grad U - (alpha M + beta K) v is the potential force plus Rayleigh damping. Newton's
/// method on the residual, with the force linearised about x_lin,
///
///   r(v) = M (v - v0) + h alpha M v + h grad U(x_lin) + K [h (x0 + h v - x_lin) + h beta v]
///   J    = (1 + h alpha) M + (h^2 + h beta) K,      J dv = -r(v),
///
/// reduces on its first iteration (x_lin = x0, v = v0) to Baraff-Witkin's single linear
/// solve  (M - h df/dv - h^2 df/dx) dv = h (f0 + h df/dx v0).  Further iterations
/// (`newton_iterations` > 1) relinearise at x_lin = x0 + h v. K is the Hessian of U after
/// PSD projection, so J is SPD for every h and CG applies.
///
/// Fixed vertices are eliminated: their velocity is prescribed (the velocity stored in the
/// state for those DOFs, zero for a clamped root, set by whoever scripts their motion) and
/// only free DOFs enter the solve.
///
/// Stages of a step, each visible in the code: assemble -> build system -> solve -> update
/// -> report. A step never throws and never exits; a failure is described in the report and
/// leaves the state as it was.

#include <string>

#include <Eigen/IterativeLinearSolvers>

#include "bristle/contact/contact_report.hpp"
#include "bristle/contact/contact_solver.hpp"
#include "bristle/integrator/assembly.hpp"
#include "bristle/integrator/rod_preconditioner.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

struct SolverSettings {
  double cg_tolerance = 1e-8;   ///< relative residual |r| / |b| at which CG stops
  int cg_max_iterations = 1000; ///< cap per linear solve
  int newton_iterations = 1;    ///< 1: Baraff-Witkin's single linearised solve
  HessianProjection projection = HessianProjection::Projected;
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
  EnergyBreakdown energies; ///< at the end of the step (at the start, if it failed)
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

  const Model& model_;
  SolverSettings settings_;
  SystemAssembler assembler_;
  VecX mass_;          // per DOF
  Solver solver_;
  ContactSolver contact_;  // contact/: active only when the model has colliders
  // Scratch, sized once.
  VecX gradient_, product_, w_, residual_, rhs_free_, dv_free_, warm_start_;
};

}  // namespace bristle
