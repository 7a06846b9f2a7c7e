#pragma once
/// Implicit time stepping: backward Euler (Baraff and Witkin, "Large steps in cloth
/// simulation", SIGGRAPH 1998) and BDF2, both solved by Newton's method to a tolerance.
///
/// Backward Euler asks for v1 with  M (v1 - v0) = h f(x0 + h v1, v1),  x1 = x0 + h v1,  where
/// f = -grad U - (alpha M + beta K) v is the potential force plus Rayleigh damping. BDF2
/// (Hairer and Wanner, "Solving Ordinary Differential Equations II", section V.1) is the same
/// equation with another start and step (docs/physics.md, "BDF2"):
///
///   x^ = (4 x_n - x_{n-1}) / 3,  v^ = (4 v_n - v_{n-1}) / 3,  h = 2 dt / 3:
///   M (v1 - v^) = h f(x^ + h v1, v1),  x1 = x^ + h v1,
///
/// so one Newton solver serves both. Newton's method on the residual, with the force
/// linearised about x_lin,
///
///   r(v) = M (v - v^) + h alpha M v + h grad U(x_lin) + K [h (x^ + h v - x_lin) + h beta v]
///   J    = (1 + h alpha) M + (h^2 + h beta) K,      J dv = -r(v).
///
/// K is the Hessian of U after PSD projection, so J is SPD for every h and CG applies.
/// Newton is a descent method on the incremental potential
///
///   Phi(v) = 1/2 (v - v^)^T M (v - v^) + h alpha/2 v^T M v + U(x^ + h v) + h beta/2 v^T K v
///
/// (K frozen at the iterate; grad Phi = r); each correction is line-searched on Phi (Armijo).
///
/// The default (`newton_iterations` 0, "converged"): the first solve is Baraff-Witkin's,
/// linearised at the start x^, followed by the length correction (integrator/
/// length_correction.hpp): the cheap guess, within 0.1% of the strand length of the answer on
/// hair at 1/240 s. The convergence test then estimates the guess's error by one simplified
/// Newton correction, J_start^-1 r(guess), with the first solve's own factors (one gradient
/// pass and two triangular solves per rod); only if some vertex would move by more than
/// `tolerance` times its rod's length do full Newton iterations follow, each tested by its own
/// correction (with stiffness damping Newton always iterates: K at the guess is not known). A
/// step whose Newton iterations do not converge, or that would raise the total energy of an
/// undriven system beyond the allowance (after a few more iterations for backward Euler, at
/// once for BDF2), is taken again as two backward Euler steps of half the length (at most
/// `max_step_splits` times in a row).
///
/// `newton_iterations` n > 0 is the fixed-count solver of earlier versions (n = 1:
/// Baraff-Witkin's single linearised solve, the contract's original default): cheap, and off by up to
/// the strand's length on stiff hair (docs/physics.md, "What each solver costs").
///
/// Fixed vertices are eliminated: their velocity is prescribed (the velocity stored in the
/// state for those DOFs, zero for a clamped root, set by whoever scripts their motion) and
/// only free DOFs enter the solve.
///
/// The step is a pipeline of named stages over one StepContext (Box2D's solver stages are the
/// model): check start -> predict -> lag friction -> [assemble -> solve -> line search]* -> length correction
/// -> convergence test -> energy test -> commit -> report. Each stage is a public member a test
/// can call on a prepared context. A step never throws and never exits; a failure is described
/// in the report and leaves the state as it was.

#include <cmath>
#include <csignal>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/IterativeLinearSolvers>

#include "bristle/integrator/iteration_log.hpp"
#include "bristle/integrator/stage_times.hpp"
#include "bristle/contact/contact_report.hpp"
#include "bristle/contact/contact_solver.hpp"
#include "bristle/contact/rod_contact.hpp"
#include "bristle/contact/rod_contact_rows.hpp"
#include "bristle/integrator/assembly.hpp"
#include "bristle/integrator/conjugate_gradient.hpp"
#include "bristle/integrator/length_correction.hpp"
#include "bristle/integrator/rod_preconditioner.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// The time discretisation.
enum class TimeScheme {
  BackwardEuler,  ///< first order, L-stable; damps resolved motion (the default)
  Bdf2,           ///< second order, L-stable; keeps resolved motion (first step: backward Euler)
};

/// Where a step's first Newton iteration is linearised (fixed-count solver only).
enum class Linearization {
  Start,      ///< at the start of the step, x^ (Baraff-Witkin)
  Predicted,  ///< at x^ + h v~, v~ extrapolated from the last two steps (see step())
};

struct SolverSettings {
  TimeScheme scheme = TimeScheme::BackwardEuler;
  double cg_tolerance = 1e-8;   ///< relative residual |r| / |b| at which CG stops
  int cg_max_iterations = 1000; ///< cap per linear solve
  /// 0 (default): Newton until converged (see `tolerance`). n > 0: exactly n iterations
  /// (1: Baraff-Witkin's single linearised solve), as earlier versions did.
  int newton_iterations = 0;
  /// Converged solver: a step is converged when Newton's next correction would move no vertex
  /// by more than this fraction of its rod's length.
  double tolerance = 1e-3;
  /// Converged solver: an undriven step may not raise the total energy by more than this times
  /// sum(m |g| L) over the rods; Newton iterates on until it does not (then the step is split).
  double energy_tolerance = 1e-6;
  /// Converged solver: Newton iterations after the guess before the step is split in two.
  int max_newton_iterations = 25;
  /// Converged solver: how many times in a row a step may be halved when it does not converge
  /// or would gain energy (2^max_step_splits substeps at most).
  int max_step_splits = 4;
  /// Fixed-count solver (newton_iterations > 1): stop once the largest velocity correction is
  /// below this fraction of the largest velocity (or of |g| h, if larger). 0: always n.
  double newton_tolerance = 0.0;
  /// Backtracking line search on the incremental potential, for every iteration not
  /// linearised at the start of the step.
  bool line_search = true;
  /// Fixed-count solver: after the last Newton iteration, give every edge back the length the
  /// linearised solve saw (integrator/length_correction.hpp). The converged solver always
  /// corrects its guess. Not with colliders.
  bool length_correction = false;
  Linearization linearization = Linearization::Start;
  /// The element Hessians' projection in the system matrix. With stiffness damping the
  /// bending-modes Hessian is used whatever this says: Rayleigh damping's K is that one
  /// (docs/physics.md, "Damping").
  HessianProjection projection = HessianProjection::BendingModes;
  /// Each step's report carries the energies at the step's end (StepReport::energies), unless
  /// false (callers that read energies only now and then, such as the runner at frames). The
  /// converged solver evaluates them anyway for its energy test.
  bool step_energies = true;
  /// Threads for assembly, the preconditioner and CG's matrix-vector products. Frames are
  /// bitwise identical for every value (each parallel loop is over independent rods or rows).
  int threads = 1;
  ContactSettings contact;      ///< used only when the model has colliders
  /// Converged solver with rod contact: a Newton iteration after a step's first two solves
  /// only the rods whose last correction is above the tolerance or that sit in a collider, and
  /// the rods contact ties to them (the others held where they are); a step is converged only
  /// on an iteration over all rods (docs/contact.md, "Newton iterations on the rods still
  /// moving"). Not a scene key: for comparisons (`bristle bench --all-rods`) and tests.
  bool active_rods = true;
  /// With rod contact: each linear solve of a coupled system solves the rods the coupling
  /// leaves alone by their own factors and runs CG on the others only (docs/contact.md, "CG
  /// on the coupled rods only"). Not a scene key: for comparisons and tests.
  bool split_coupled_solves = true;

  bool converged() const { return newton_iterations <= 0; }
};

struct StepReport {
  bool ok = true;
  std::string failure;      ///< empty when ok; otherwise what went wrong, with rod and vertex
  int failed_rod = -1;      ///< where a non-finite value first appeared, when known
  int failed_vertex = -1;
  int cg_iterations = 0;    ///< preconditioned CG iterations (= matrix-vector products), all Newton iterations
  double cg_residual = 0.0; ///< relative residual of the last linear solve
  int newton_iterations = 0;  ///< linear solves (the guess's included), all substeps
  /// Of those, the iterations that solved only the rods still moving (SolverSettings::active_rods).
  int partial_iterations = 0;
  /// step halvings in the line search, and of contact steps by the strain limit (there, the
  /// halvings of the rod halved most in each iteration), all Newton iterations
  int line_search_halvings = 0;
  int line_search_failures = 0;  ///< line searches that found no sufficient decrease
  /// Rods in collider contact whose Newton step the strain limit took nothing of (each left at
  /// its last iterate for that iteration), summed over the Newton iterations
  int strain_stalled_rods = 0;
  /// Rods left above the tolerance where a step in collider contact ended unconverged (no
  /// rod contact): those whose last Newton correction (the strain limit's stalled rods
  /// included) exceeds it, summed over substeps. converged is false when any rod is; the rods
  /// do not couple there, so this says how much of a brush the step left unconverged.
  int unconverged_rods = 0;
  int length_correction_iterations = 0;  ///< of the slowest rod
  int uncorrected_rods = 0;  ///< rods the length correction left alone (dependent constraints)
  int substeps = 1;          ///< steps actually taken: > 1 when the step was split
  /// Attempts the converged solver gave up and split into halves (ImplicitEuler::step_or_split),
  /// at every level: how many, and the Newton iterations and wall time [s] they took. Their
  /// work is counted in the fields above too; these say how much of it was thrown away.
  int failed_attempts = 0;
  int failed_attempt_newton_iterations = 0;
  double failed_attempt_seconds = 0.0;
  /// Wall time by stage of the converged solver, summed over attempts (failed ones included).
  SolverStageTimes stages;
  /// false: a step in contact whose Newton iterations stalled above the tolerance (the
  /// converged solver, after 8): it took its first solve, contact constraints held exactly
  bool converged = true;
  bool bdf2 = false;         ///< whether the (last sub)step was a BDF2 step
  double correction = 0.0;   ///< converged solver: the last correction, as a fraction of rod length
  /// At the end of the step (at the start, if it failed); zero without step_energies for the
  /// fixed-count solver (the converged solver evaluates them anyway).
  EnergyBreakdown energies;
  double assembly_seconds = 0.0;  ///< wall time in assembly and system build
  double solve_seconds = 0.0;     ///< wall time in the preconditioner and CG
  ContactReport contact;          ///< per-collider contact stats (empty without colliders)
  /// Rod-rod contact at the end of the step (model.rod_contact.enabled only).
  RodContactStats rod_contact;
  int ccd_limited = 0;  ///< line searches whose first trial CCD shortened (rod-rod contact), all iterations
  /// Rod-rod contact: pairs of segments whose centre lines met on the straight motion of the
  /// step (of each committed substep), not meeting at its start: segments that passed through
  /// each other (RodContact::crossings, check-contact's test), summed over substeps.
  int rod_crossings = 0;
  /// Rod contact as constraints (rod_contact.method "constraints"): the step's rows (pairs and
  /// vertex-collider contacts near each other on its path; of a split step, its substeps' most)
  /// and those pressed at its end (normal impulse > 0); the impulse solves' Gauss-Seidel sweeps
  /// over all Newton iterations and substeps, and the last solve's Coulomb residual [m/s]
  /// (coulomb_solver.hpp; of a split step, its substeps' largest).
  bool constraints = false;  ///< contacts are solved as constraints (the fields below apply)
  int contact_rows = 0;
  int contacts_pressed = 0;
  int impulse_sweeps = 0;
  double impulse_residual = 0.0;
  /// The stop flag (ImplicitEuler::set_stop) was raised during the step: it was abandoned at
  /// its next Newton iteration, not split; ok is false and the state is as before the step
  /// (the integrator's own warm starts as set_stop says).
  bool interrupted = false;
};

/// Everything one step works on: its inputs, the iterate, scratch vectors (kept between steps
/// so a step allocates nothing), and what the stages found. Stages read and write it; tests
/// prepare one and call a stage.
struct StepContext {
  // The step: BDF2 solves the backward Euler equations from (x^, v^) with h = 2 dt / 3.
  double dt = 0.0;           ///< the step's length [s]
  double h = 0.0;            ///< the implicit solve's step [s]
  double t0 = 0.0, t1 = 0.0; ///< start and end time [s]
  bool bdf2 = false;
  const VecX* x0 = nullptr;  ///< the state's positions and velocities at t0
  const VecX* v0 = nullptr;
  const VecX* x_hat = nullptr;  ///< x^ and v^ (x0 and v0 for backward Euler)
  const VecX* v_hat = nullptr;
  VecX bdf2_x_hat, bdf2_v_hat;  ///< storage for BDF2's x^, v^
  /// The iterate: the end-of-step velocity on free DOFs, the prescribed one on fixed DOFs
  /// (for BDF2, the one that puts them where their prescribed velocity takes them).
  VecX v;
  VecX x1;                  ///< end positions, x^ + h v (after the length correction, its result)
  const VecX* x_lin = nullptr;  ///< where the current iteration is linearised
  VecX linearization_point;
  /// With rod contact: Newton's first iterate's end positions, x0 + h v after the handles'
  /// carry (carry_with_handles): every fixed vertex at its end, free ones moved with it.
  VecX carried_start;
  bool at_start = true;     ///< the current iteration is linearised at x^ (w != 0)
  bool from_guess = false;  ///< Linearization::Predicted's guess was taken
  bool continuing = false;  ///< the state is where the last committed step left it
  int iteration = 0;
  // Per iteration.
  VecX gradient, product, w, residual, rhs_free, dv_free, dv, guess;
  VecX trial_v, trial_x, mass_dv, system_dv;
  /// With colliders (no rod contact), the converged solver's iterates: [0] the first solve's
  /// velocity, then each Newton iterate's; where Newton stalls the step ends at the best of
  /// them (keep_best_contact_iterate). Slots are reused from step to step.
  std::vector<VecX> contact_iterates;
  int contact_iterate_count = 0;
  EnergyBreakdown potential_at_lin;
  double step_length = 1.0;
  /// With rod contact: CCD cut some groups of rods more than others (limit_step_by_ccd), and
  /// the line search goes along search_dv (search_dv_free on the free DOFs), Newton's dv
  /// scaled group by group; even a step_length of 1 is then not Newton's full step.
  bool ccd_cut = false;
  VecX search_dv, search_dv_free;
  const VecX& search_direction() const { return ccd_cut ? search_dv : dv; }
  /// With colliders: the guess the contact solver's first pass starts CG from
  /// (ImplicitEuler::solve). In a step's first iteration the previous step's first velocity
  /// change; in a later one, with rod contact, the part of the last Newton step not taken;
  /// otherwise zero.
  VecX untaken_dv_free;
  bool solved_per_rod = false;  ///< every rod's block was factored and solved in assembly
  /// With solved_per_rod: b - J guess on the free DOFs, each rod's entries formed right after
  /// its solve while its block is in cache, the bits of CG's own first residual; solve() takes
  /// CG's first test on it (ImplicitEuler::solve).
  VecX first_residual;
  std::vector<char> rod_block_failed;  ///< its block was not positive definite (a Jacobi guess)
  /// Rod contact: each rod's correction (dof_correction's largest over its DOFs) from the
  /// last solve it took part in, known after the attempt's first solve; and whether the
  /// current iteration solved only the active rods (ImplicitEuler::select_active_rods).
  std::vector<double> rod_correction;
  bool rod_corrections_known = false;
  bool partial = false;
  /// select_active_rods ran in this iteration's assembly (before the coupled system was
  /// formed, over the active rods' columns only); solve() takes its choice.
  bool rods_selected = false;
  bool next_full = false;  ///< the next iteration solves every rod
  /// The system matrix holds this iteration's values. Solved per rod with the factors kept,
  /// nothing needs them unless CG must iterate: they are filled only then (solve()).
  bool matrix_filled = true;
  bool fill_matrix = false;  ///< the next assemble() fills the matrix whatever else holds
  // Energies.
  double energy_start = 0.0;       ///< total energy at t0
  double energy_gain = 0.0;        ///< what the last energy test found: end minus start [J]
  EnergyBreakdown end_energies;    ///< at (x1, v), when end_energies_known
  bool end_energies_known = false;
  bool driven = false;             ///< handles, ramped loads or colliders: energy may rise
  /// Rod-rod contact: a pair's barrier stiffness was raised during the step, so the energy
  /// test evaluates energy_start (taken with the stiffnesses the step began with) and the
  /// end's energies again.
  bool stiffness_raised = false;
  /// Rod-rod contact: the last Newton iteration's system was no stiffer along any pair's
  /// normal than the barrier (RodContact::ForceUpdate::consistent), so the size of its
  /// correction is a convergence measure.
  bool forces_consistent = true;
  /// BDF2's energy test: the total energy at the start of the previous step, and what the
  /// next step will take as such (this step's energy_start).
  double energy_previous = 0.0, energy_next_previous = 0.0;
  bool energy_previous_known = false, energy_next_previous_known = false;
  StepReport report;
};

class ImplicitEuler {
 public:
  ImplicitEuler(const Model& model, SolverSettings settings);

  /// Advances `state` by dt. On failure the state is left unchanged.
  StepReport step(State& state, double dt);

  EnergyBreakdown energies(const State& state) const;
  const SolverSettings& settings() const { return settings_; }
  SystemAssembler& assembler() { return assembler_; }
  /// Whether every assembly writes the system matrix, so that assembler().matrix() holds the
  /// last iteration's after a step (for inspection). Off by default: a step that solves each
  /// rod's block in assembly and keeps its factors reads the matrix only if CG must iterate,
  /// and writes it only then (ImplicitEuler::assemble). Results are the same bit for bit.
  void set_keep_system_matrix(bool keep) { keep_system_matrix_ = keep; }
  /// A flag that, once non-zero, abandons the step under way at its next Newton iteration
  /// (StepReport::interrupted): Ctrl-C during a step that takes minutes (a split brush under
  /// rod contact constraints) stops the run within one iteration, not after the step. The
  /// state stays as it was; what the integrator carries between steps is left as by a failed
  /// step: without contact nothing (the next step is the same bits), with colliders their
  /// stick-slip states restart, and a stop in a split step's second half keeps the first
  /// half's warm starts.
  void set_stop(const volatile std::sig_atomic_t* stop) { stop_ = stop; }
  /// Called after each attempt's first solve and each Newton iteration of the converged solver
  /// (IterationRecord); empty (the default): nothing is measured for it.
  void set_iteration_log(IterationLog log) { iteration_log_ = std::move(log); }
  /// Assemblies that did not write the matrix, and of those the ones solve() repeated to write
  /// it (CG had to iterate), since construction.
  long unwritten_matrices() const { return unwritten_matrices_; }
  long rewritten_matrices() const { return rewritten_matrices_; }
  /// Linear solves whose uncoupled rods were solved by their own factors, CG on the others
  /// (SolverSettings::split_coupled_solves).
  long split_solves() const { return split_solves_; }
  /// Rod solves a split solve left as the last one made them (the contact solver's pass did
  /// not change the rod: cg_over_coupled_rods), since construction.
  long kept_rod_solutions() const { return kept_rod_solutions_; }
  /// On by default; off for tests and comparisons (the results are the same bits either way).
  void set_keep_unchanged_rod_solutions(bool on) { keep_unchanged_rod_solutions_ = on; }

  // The stages, in order. Each works on `ctx`; those returning bool return false when the
  // step failed (ctx.report says why) or, for the tests, when the answer is no.

  /// Check start: x0 and v0 finite, no collapsed edge. Sets ctx.x0, v0, t0, dt.
  bool check_start(const State& state, double dt, StepContext& ctx) const;
  /// Predict: the scheme (BDF2 when the last step was its predecessor with the same dt), x^,
  /// v^, h, and the first iterate v (v^ on free DOFs; Linearization::Predicted's guess).
  void predict(StepContext& ctx, bool allow_bdf2);
  /// Lag friction (rod-rod contact with rod_contact.friction > 0): one friction element
  /// (energy/rod_friction.hpp) per barrier pair within g^ at x0, with the normal force, the
  /// closest points and the tangent plane there, kept for all Newton iterations of the step
  /// (docs/contact.md, "Friction between rods"). Replaces the last step's elements.
  void lag_friction(StepContext& ctx);
  /// Assemble at ctx.x_lin: gradient, the system J and right-hand side -r on the free DOFs,
  /// and (without contact) each rod's block solved in place into ctx.guess.
  bool assemble(StepContext& ctx);
  /// Solve J dv = -r (CG from the per-rod solution, or the contact solver): ctx.dv.
  bool solve(StepContext& ctx);
  /// Line search on Phi along ctx.dv; sets ctx.step_length and v += step_length dv.
  void line_search(StepContext& ctx);
  /// The converged solver's line search: each trial v + s dv length-corrected about x_lin,
  /// judged by Phi; sets v and x1.
  void projected_line_search(StepContext& ctx);
  /// Length correction: ctx.x1 = x^ + h v with every edge back at the length ctx.x_lin's
  /// linearisation saw; v = (x1 - x^) / h.
  void correct_lengths(StepContext& ctx);
  /// Convergence test of the converged solver: the simplified Newton correction J^-1 r(v)
  /// with the factors of the last solve, against `tolerance`. Evaluates the energies at v.
  bool test_convergence(StepContext& ctx);
  /// Energy test: false when an undriven step would end with more energy than it began with
  /// (beyond the allowance). Needs the end energies (evaluated here when unknown).
  bool test_energy(StepContext& ctx);
  /// Commit: the state takes x1 and v; the BDF2 history moves on.
  void commit(State& state, StepContext& ctx);

  /// The largest correction |h dv_i| / L_rod(i) over free DOFs: the convergence measure.
  double relative_correction(const StepContext& ctx, const VecX& dv_free) const;
  /// One free DOF's share of it, |h dv_i| / L_rod(i): 0 on fixed DOFs, +inf where not finite.
  double dof_correction(const StepContext& ctx, const VecX& dv_free, int dof) const;
  /// Rods with a DOF whose correction (dv_free, as relative_correction measures it) exceeds
  /// step_tolerance().
  int rods_above_tolerance(const StepContext& ctx, const VecX& dv_free) const;
  /// The energy an undriven step may gain before test_energy refuses it [J]: energy_tolerance
  /// times sum(m |g| L), or without gravity times the energy at the step's start.
  double energy_allowance(const StepContext& ctx) const {
    return settings_.energy_tolerance * (energy_scale_ > 0.0 ? energy_scale_ : std::abs(ctx.energy_start));
  }

  /// How many times the next step is halved before its first attempt. With rod contact a step
  /// (one that succeeded) whose straight motion was not clear at some split level (clear_path:
  /// split there, or cut short at the last level that may split for it) has the next step start
  /// one level deeper than that: at most kPathSplits levels (paths split at the levels above
  /// it and are cut there), and never beyond max_step_splits. Each step whose paths were all
  /// clear brings it one level back (docs/contact.md, "Steps that start split"). Zero otherwise.
  int first_split_depth() const { return first_depth_; }

 private:
  using Solver = ConjugateGradient;  // integrator/conjugate_gradient.hpp

  /// One attempt at a step of dt: the converged or the fixed-count solver. Leaves the state
  /// unchanged unless it succeeds.
  StepReport attempt(State& state, double dt, bool allow_bdf2);
  /// attempt(), and for the converged solver, two half steps where it fails.
  /// Attempts at depths below `first_depth` are skipped: the step goes straight to halves.
  StepReport step_or_split(State& state, double dt, int depth, bool allow_bdf2, int first_depth);
  /// `first_solved`: the guess's linear solve is done (run_constrained found no contact rows).
  bool run_converged(StepContext& ctx, bool first_solved = false);
  /// Rod-rod contact as constraints (RodContactMethod::Constraints): Newton's method with each
  /// linear solve's contact impulses (see the .cpp).
  bool run_constrained(StepContext& ctx);
  /// Rod-rod contact as constraints: the contact impulses of the current linear solve (the
  /// step's rows, the Coulomb problem warm-started from the last impulses), added to ctx.dv_free
  /// and ctx.dv. False where a rod's block could not be solved (the step fails).
  bool apply_contact_constraints(StepContext& ctx);
  /// Rod contact as constraints: the colliders' stats (ctx.report.contact) from their rows'
  /// impulses and the end positions.
  void report_collider_impulses(StepContext& ctx) const;
  /// Rod contact as constraints, at a converged iterate: adds the rows of pairs and
  /// vertex-collider contacts near each other on the path from x^ to ctx.x1 that the step lacks
  /// and whose gap at x1 is negative (the iterates strayed from the first solve's path, where
  /// the rows were found). True if it added any: Newton goes on with them.
  bool add_missed_rows(StepContext& ctx);
  /// Rod contact as constraints: the impulses of the last committed step, kept by row (its
  /// collider or -1, then its two segments or its vertex) to start the next step's impulse
  /// solve from (scaled by the steps' ratio), when the next step continues it.
  void keep_impulses_for_next_step(double h);
  void warm_start_impulses(double h);
  bool run_fixed(StepContext& ctx);
  bool newton_iteration(StepContext& ctx);
  void finish_report(const State& state, StepContext& ctx);
  /// With colliders, where Newton stalled: sets v to the best of the step's iterates (see
  /// the .cpp).
  void keep_best_contact_iterate(StepContext& ctx) const;
  /// With colliders, after a Newton step taken whole: halves it until no edge is strained
  /// past a trust bound (see the .cpp). false: no halving passed, nothing of the step taken.
  bool limit_contact_step_by_strain(StepContext& ctx);
  /// Rod contact, a step that cannot be split again: ends it at the latest kept Newton iterate
  /// whose straight motion is clear (see the .cpp); false where none is.
  bool end_at_clear_iterate(StepContext& ctx);
  /// Reports the iteration just taken to iteration_log_ (set_iteration_log); ccd_limited_before:
  /// the report's ccd_limited before it; seconds: its wall time, as the stage times count it.
  void log_iteration(const StepContext& ctx, int ccd_limited_before, double seconds);
  void name_worst_correction(StepContext& ctx, std::ostringstream& message) const;
  /// The step fails with `message`, the worst correction's rod and vertex named: false.
  bool fail_with_worst_correction(StepContext& ctx, std::ostringstream& message) const;
  /// Ends a step the solver takes unconverged (run_converged's stalled steps and last resort,
  /// run_constrained's last resort): true where its end is finite, no edge collapsed, and the
  /// rods' kinetic and elastic energy there is within a thousand times step_energy_scale();
  /// the report then counts it unconverged, with `unconverged_rods` more rods. Otherwise fails
  /// the attempt with a message naming the rod (the step is split, or at the deepest split the
  /// run fails).
  bool end_unconverged(StepContext& ctx, int unconverged_rods);
  /// A bound on the energy the step could give the rods (see the .cpp) [J].
  double step_energy_scale(const StepContext& ctx) const;
  bool find_non_finite(const VecX& values, StepReport& report, const char* what) const;
  bool find_collapsed_edge(const VecX& positions, StepReport& report) const;
  HessianProjection system_projection() const;
  double phi_quadratic(const StepContext& ctx, const VecX& v) const;
  /// Friction between rods: whether the last Newton correction (whole, ctx.dv) changed no
  /// contact's friction force by more than a fraction of its bound mu lambda. The correction's
  /// size alone does not say: a sticking contact's stiffness 2 mu lambda / e keeps Newton's
  /// steps as small as e while the contact is still being pulled out of sticking.
  /// The converged solver's tolerance for this step: `tolerance`, tighter with friction
  /// between rods.
  double step_tolerance() const;
  bool friction_converged(const StepContext& ctx) const;

  /// The accepted fraction of ctx.dv, and the potential energies at the point it leads to.
  struct LineSearch {
    double step = 1.0;
    bool energies_known = false;
    EnergyBreakdown energies;
    bool found = true;  ///< false: no trial decreased Phi sufficiently (step 1, energies unknown)
  };
  LineSearch search_phi(StepContext& ctx, double potential_at_v, double slope, double damping_scale,
                        double first_step = 1.0);
  /// Rod-rod contact: the pairs near each other at x (coupling elements of the barrier term).
  void load_contact_pairs(const VecX& x_from, const VecX& x_to, PathMotion motion = PathMotion::AnyFractions);
  /// Rod-rod contact: the pairs along the path from the iterate to the full Newton step, and
  /// the largest fraction of the step CCD allows.
  double limit_step_by_ccd(StepContext& ctx);
  /// Groups of rods tied by the coupling matrix (RodBlockPreconditioner::set_groups), each of
  /// at most kMaxGroupFreeDofs free DOFs (larger ones are left out: their rods stay alone).
  std::vector<std::vector<int>> coupled_rod_groups() const;
  /// Each rod's group of rods tied by the coupling matrix, as the group's first rod (the rod
  /// itself when nothing ties it).
  std::vector<int> coupled_rod_roots() const;
  /// Marks in active_rods_ the rods the iteration solves: those whose last correction is above
  /// the tolerance or that sit deeper than the contact solver's penetration tolerance in a
  /// collider, with every rod the coupling ties to them. False (all rods) where that is not
  /// worth it or not allowed: the attempt's first two iterations, its last allowed one, a step without rod contact, more than half the free DOFs,
  /// or when every rod is within the tolerance (the iteration that may find the step converged).
  bool select_active_rods(StepContext& ctx);
  /// CG on m x = b from the guess, the rods the coupling ties factored together in its
  /// preconditioner; where it does not reach cg_tolerance, the solution is taken inexactly with
  /// rod contact (within sqrt(cg_tolerance)). True if x is taken.
  /// `same_rods`: the contact solver's rods whose rows are as at its last call, their entries
  /// of x that call's result (ContactSolver::LinearSolve).
  bool solve_with_cg(const SparseMatrix& m, const VecX& b, const VecX& guess, VecX& x,
                     const std::vector<char>* same_rods = nullptr);
  /// Factors m's preconditioner and solves m x = b from `start`: the solve's rods that the
  /// coupling leaves alone, where their own factors are exact, by those factors; CG on the
  /// others, tested against the whole |b|. One CG on every row where there is no coupling or
  /// few such rods. Of the rods the factors solve, those in `same_rods` that the last call
  /// solved so too keep their entries of x, and their factors, as they are.
  void cg_over_coupled_rods(const SparseMatrix& m, const VecX& b, const VecX& start, VecX& x,
                            const std::vector<char>* same_rods = nullptr);
  /// |b - m x| over the rows the last cg_over_coupled_rods gave CG (all, unless it split).
  double cg_residual_norm(const SparseMatrix& m, const VecX& b, const VecX& x);
  /// CG's rows and the preconditioner's blocks back to the solve's (the active rods', or all).
  void restore_solve_rows();
  /// Restores them, and CG's own |b|, however the scope it guards ends.
  struct SolveRowsGuard {
    ImplicitEuler& self;
    ~SolveRowsGuard();
  };
  /// Per rod: whether the coupling matrix has entries in its columns (cached per coupling).
  const std::vector<char>& rods_with_coupling() const;
  bool last_resort_ = false;  // the step being attempted cannot be split again
  bool group_coupled_rods_ = false;  // this attempt's coupled solves factor the tied rods together
  bool grouped_last_attempt_ = false;  // the last attempt's group_coupled_rods_ at its end
  int grouped_attempts_ = 0;            // attempts in a row that started grouped
  VecX cg_start_;                    // the grouped solve's start: the per-rod CG's last iterate
  std::vector<char> active_rods_;    // select_active_rods' marks
  std::vector<double> rod_depth_;    // select_active_rods: each rod's deepest vertex in a collider
  std::vector<std::pair<int, int>> active_free_ranges_;
  bool partial_solve_ = false;       // the current solve is over active_rods_ only
  VecX active_rhs_free_;             // the right-hand side with the inactive rods' rows zero
  int split_depth_ = 0;       // how many times the step being attempted was halved
  int first_depth_ = 0;       // the split level the next step starts at (step())
  int unclear_path_depth_ = -1;  // the deepest level whose straight motion was not clear, this step
  std::vector<double> pair_steps_, group_step_;  // limit_step_by_ccd's work space
  std::vector<int> rod_group_;
  std::vector<char> pair_active_;
  std::vector<std::pair<int, int>> pair_rods_;
  // limit_step_by_ccd's relatively clear pairs (RodContact::relatively_clear_pairs): their rods,
  // and whether at their groups' fractions they may come near.
  std::vector<std::pair<int, int>> clear_rods_;
  std::vector<char> clear_near_;
  bool keep_system_matrix_ = false;
  const volatile std::sig_atomic_t* stop_ = nullptr;
  IterationLog iteration_log_;
  VecX logged_positions_;  // scratch of log_iteration
  long unwritten_matrices_ = 0, rewritten_matrices_ = 0;
  long split_solves_ = 0;
  long kept_rod_solutions_ = 0;
  bool keep_unchanged_rod_solutions_ = true;
  /// Predict, with rod-rod contact: free vertices of handled rods start carried by their
  /// handle's motion, as far as CCD from x0 allows.
  void carry_with_handles(StepContext& ctx);
  /// Rod-rod contact: CCD over the step's straight motion x0 -> x1, shortened where not clear.
  /// Returns whether the path was clear; when it was not, the step is cut short only where it
  /// is not to be split (the fixed-count solver, the deepest split, or kPathSplits splits
  /// deep), and otherwise left as it was for attempt() to fail, so that it is split.
  bool clear_path(StepContext& ctx);
  /// Whether a step whose straight motion is not clear is split rather than cut short.
  bool path_may_split() const;
  /// With rod contact, whether a step past kContactIterations goes on because its iterate still
  /// leaves a vertex deep in a collider (run_converged).
  bool deep_iterate_may_go_on(const StepContext& ctx, int k) const;
  /// Collider contacts hold vertices in this Newton iteration: their velocities are prescribed,
  /// so no line search runs and r . dv is no descent test (line_search, limit_step_by_ccd).
  bool colliders_hold_vertices() const { return contact_.enabled() && !contact_.contacts().empty(); }

  const Model& model_;
  SolverSettings settings_;
  SystemAssembler assembler_;
  // matrix() + coupling_matrix() of the last assembly, when it had coupling elements
  // (`coupled_`, recorded there: elements added or cleared since do not count until the next);
  // in an iteration over the moving rods (ctx.partial), over their columns only (assemble).
  SparseMatrix coupled_system_;
  std::vector<char> active_columns_;  // an iteration's active rods' free DOFs (assemble)
  bool coupled_ = false;
  // coupled_rod_roots' and coupled_rod_groups' results for one assembly of the coupling
  // (SystemAssembler::coupling_version): the contact solver asks for the groups at each pass.
  struct CouplingCache {
    std::uint64_t version = 0;
    bool coupled = false, valid = false;
    std::vector<int> value;
  };
  mutable CouplingCache roots_cache_;
  struct GroupsCache {
    std::uint64_t version = 0;
    bool coupled = false, valid = false;
    std::vector<std::vector<int>> value;
  };
  mutable GroupsCache groups_cache_;
  struct RodMarksCache {
    std::uint64_t version = 0;
    bool valid = false;
    std::vector<char> value;
  };
  mutable RodMarksCache with_coupling_cache_;
  // cg_over_coupled_rods' split: the rods solved by their own factors, CG's rows and blocks.
  bool cg_split_ = false;
  std::vector<int> exact_rods_;
  std::vector<std::pair<int, int>> cg_ranges_;
  std::vector<char> cg_blocks_;
  // Per rod: whether the last cg_over_coupled_rods solved it by its own factor (exact_rods_ or
  // kept), and this call's rods kept as it left them (same_rods), with their entries of x.
  std::vector<char> solved_by_factor_, kept_rods_;
  std::vector<int> kept_list_;
  VecX kept_values_;
  VecX taken_x_;
  SparseMatrix& system_matrix() { return coupled_ ? coupled_system_ : assembler_.matrix(); }
  VecX mass_;          // per DOF
  std::vector<int> fixed_dofs_;  // DOFs held fixed (prescribed velocity)
  VecX dof_length_;    // per DOF: its rod's rest length [m] (the convergence test's scale)
  double energy_scale_ = 0.0;  // sum over rods of m |g| L [J]
  // (1 + h alpha) M, the system's diagonal term, kept while h alpha stays the same.
  VecX system_mass_;
  double system_mass_scale_ = 0.0;
  Solver solver_;
  ContactSolver contact_;  // contact/: active only when the model has colliders
  RodContact rod_contact_;  // contact/rod_contact.hpp: active only with model.rod_contact.enabled
  bool barrier_ = false;      // rod contact by the barrier (RodContactMethod::Barrier)
  bool constraints_ = false;  // rod contact as constraints (RodContactMethod::Constraints)
  // Rod contact as constraints: the step's rows, the impulses (warm start of each solve) and
  // the block solves' work space.
  std::vector<RodContactRow> rod_rows_, collider_rows_;  // the step's rows of each kind
  std::vector<RodContactRow> contact_rows_;  // both, in that order, as the impulse solve sees them
  std::vector<Vec3> contact_impulses_;
  /// The last committed step's impulses (keep_impulses_for_next_step): by sorted key, the
  /// normal impulse and the tangential one in world axes [N s], and that step's h.
  struct KeptImpulse {
    std::array<int, 3> key;
    double normal;
    Vec3 tangential;
    bool operator<(const KeptImpulse& other) const { return key < other.key; }
  };
  std::vector<KeptImpulse> kept_impulses_;
  double kept_impulses_h_ = 0.0;
  VecX block_rhs_, block_solution_;
  CoulombSettings impulse_settings_;
  double smallest_radius_ = 0.0;  // of all rods [m]: the impulse solve's length scale
  LengthCorrection length_correction_;
  VecX warm_start_;
  StepContext context_;    // reused step after step: its vectors keep their storage
  // History. For BDF2: the state the last committed step began from, its dt and the state it
  // ended in (to recognise the next step as its continuation). For Linearization::Predicted:
  // the last step's start velocity and h.
  VecX previous_x0_, previous_v0_, last_end_v_, last_end_x_;
  double previous_dt_ = 0.0, last_end_time_ = 0.0;
  bool history_ = false;
  // The total energy where the last step ended (the next step's start), when known.
  double last_end_energy_ = 0.0, last_start_energy_ = 0.0;
  bool last_end_energy_known_ = false, last_start_energy_known_ = false;
  bool start_ok_ = true;  // the last attempt could start (check_start passed)
  mutable int worst_correction_dof_ = -1;  // where relative_correction() found its largest value
};

}  // namespace bristle
