#include "bristle/integrator/implicit_euler.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include "bristle/contact/collider_contact_rows.hpp"

namespace bristle {
namespace {
using Clock = std::chrono::steady_clock;
// Below this many DOFs a loop over them is not worth waking other threads for.
constexpr int kParallelDofs = 20000;
// Loops over rods whose work per DOF is a few edge lengths or more (the strain limit's scans):
// worth other threads from this many DOFs, as model.cpp's largest_edge_strain.
constexpr int kParallelRodDofs = 4096;
// Newton iterations of a step in contact after which it is taken unconverged (run_converged).
constexpr int kContactIterations = 8;
// The largest group of rods tied by contact that CG's preconditioner factors together
// (coupled_rod_groups): about 500 bristles of 20 segments. The 1000 x 20 tilted brush's largest
// group held 2052 free DOFs.
constexpr int kMaxGroupFreeDofs = 30000;
// CG iterations a coupled solve gets on the per-rod factors before the attempt switches to the
// rods factored together (solve_with_cg): hair_on_sphere.json's solves stay below it,
// brush_stroke.json's pressed bristles go beyond (100 to 250).
constexpr int kPerRodIterations = 50;
// Attempts that start on the factored groups, after one that switched to them, before one
// starts on the per-rod factors again (ImplicitEuler::attempt).
constexpr int kGroupedAttemptsBetweenProbes = 8;
// With rod contact, a step still leaving a vertex deeper than this fraction of its radius in a
// collider after kContactIterations goes on, up to max_newton_iterations (run_converged). The
// depth at which `bristle run` warns (docs/cli.md, run).
constexpr double kDeepInCollider = 0.1;
// A Newton step in collider contact is halved (at most kContactStrainHalvings times) until no
// edge is strained by more than this, kContactStrainSlack times the previous iterate's largest
// strain, or twice the start's (limit_contact_step_by_strain). Rods under the forces of the bundled scenes strain by under
// 1e-3; steps that go far past it are outside their linearisation.
constexpr double kContactStrainTrust = 0.01;
constexpr double kContactStrainSlack = 1.1;
constexpr int kContactStrainHalvings = 10;
// Rod-rod contact: how many times in a row a step whose straight motion is not clear is split
// before it is cut short instead (clear_path).
constexpr int kPathSplits = 2;
// Newton iterations past convergence spent on a step that still gains energy before it is split.
constexpr int kEnergyRetries = 3;
// Friction between rods: a contact slipping slower than eps_v = kStickingSpeedFraction g_e h
// counts as sticking (IPC's smoothing, docs/contact.md "Friction between rods"), g_e =
// max(|g|, kMinimumAcceleration). Then h^2 times the sticking stiffness is
// 2 mu lambda / (kStickingSpeedFraction g_e): relative to the mass lambda / g_e a contact
// carries, 2000 mu at every step size.
constexpr double kStickingSpeedFraction = 1e-3;
constexpr double kMinimumAcceleration = 1.0;  // [m/s^2], as the barrier's (contact/rod_contact.cpp)
// Friction between rods: Newton is converged only once its last correction changed no
// contact's friction force by more than this fraction of mu lambda (friction_converged()).
constexpr double kFrictionForceTolerance = 1e-2;
// The converged solver's tolerance is this times `tolerance` in steps with friction between
// rods (ImplicitEuler::step_tolerance).
constexpr double kFrictionToleranceScale = 1e-2;
// The first Newton iteration after the guess that may solve only the rods still moving
// (select_active_rods). A quiet step converges in the iteration after its guess: solved
// partially, it would take a third, over every rod, to be found converged.
constexpr int kFirstPartialIteration = 2;
// Rod contact as constraints: the impulse solve's tolerance, as a fraction of the smallest
// rod radius moved over the step (apply_contact_constraints). Few solves of the rod pile or
// hair_on_sphere meet it within their 200 sweeps; 1e-4 ran both faster, but the pivoting
// rod's path at 1/240 s drifted to 6.4% of its slide from the 1 ms path (2% at 1e-6).
constexpr double kImpulseTolerance = 1e-6;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}
/// Calls visit(i) for i in [0, size), on `threads` threads for long vectors. Each entry is
/// computed by one thread with the same arithmetic as serially.
template <typename Visit>
void for_each_entry(int size, int threads, Visit&& visit) {
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && size > kParallelDofs)
  for (int i = 0; i < size; ++i) visit(i);
}
/// Adds what a substep's report counts to the whole step's.
void accumulate(StepReport& total, const StepReport& part) {
  total.cg_iterations += part.cg_iterations;
  total.cg_residual = part.cg_residual;
  total.newton_iterations += part.newton_iterations;
  total.partial_iterations += part.partial_iterations;
  total.failed_attempts += part.failed_attempts;
  total.failed_attempt_newton_iterations += part.failed_attempt_newton_iterations;
  total.failed_attempt_seconds += part.failed_attempt_seconds;
  total.stages += part.stages;
  total.line_search_halvings += part.line_search_halvings;
  total.line_search_failures += part.line_search_failures;
  total.strain_stalled_rods += part.strain_stalled_rods;
  total.unconverged_rods += part.unconverged_rods;
  total.length_correction_iterations = std::max(total.length_correction_iterations, part.length_correction_iterations);
  total.uncorrected_rods = std::max(total.uncorrected_rods, part.uncorrected_rods);
  total.correction = part.correction;
  total.bdf2 = part.bdf2;
  total.converged = total.converged && part.converged;
  total.assembly_seconds += part.assembly_seconds;
  total.solve_seconds += part.solve_seconds;
  total.energies = part.energies;
  // Contact: the state is the last part's; the work is every part's, as CG's and Newton's
  // (the attempt that was split spent its solves too).
  ContactReport contact = part.contact;
  contact.solves += total.contact.solves;
  contact.rod_solves += total.contact.rod_solves;
  total.contact = std::move(contact);
  total.rod_contact = part.rod_contact;
  total.ccd_limited += part.ccd_limited;
  total.rod_crossings += part.rod_crossings;
  total.constraints = part.constraints;
  // The state is the last part's; the largest row count and residual are over the parts.
  total.contact_rows = std::max(total.contact_rows, part.contact_rows);
  total.contacts_pressed = part.contacts_pressed;
  total.impulse_sweeps += part.impulse_sweeps;
  total.impulse_residual = std::max(total.impulse_residual, part.impulse_residual);
}
}  // namespace

ImplicitEuler::ImplicitEuler(const Model& model, SolverSettings settings)
    : model_(model), settings_(settings), assembler_(model), mass_(model.dof_masses()),
      contact_(model, settings.contact), rod_contact_(model, mass_), length_correction_(model) {
  length_correction_.set_threads(settings_.threads);
  rod_contact_.set_threads(settings_.threads);
  contact_.set_threads(settings_.threads);
  barrier_ = rod_contact_.enabled() && model.rod_contact.method == RodContactMethod::Barrier;
  // As constraints, the colliders' contacts join the rods' in one impulse solve (whether or
  // not rods touch each other): the active-set solver stays out.
  smallest_radius_ = std::numeric_limits<double>::infinity();
  for (const Rod& rod : model.rods) smallest_radius_ = std::min(smallest_radius_, rod.material.radius);
  constraints_ = model.rod_contact.method == RodContactMethod::Constraints &&
                 (rod_contact_.enabled() || !model.colliders.empty());
  if (constraints_) contact_.disable();
  const DofLayout& layout = model.layout;
  warm_start_ = VecX::Zero(layout.free_dof_count());
  solver_.preconditioner().set_blocks(layout.rod_free_ranges());
  solver_.preconditioner().set_threads(settings_.threads);
  assembler_.set_threads(settings_.threads);
  // A Newton iteration on a few rods (select_active_rods) moves only those: the others' own
  // results are taken from their last assembly, bit for bit. The step changes the system
  // matrix only where the contact solver filters it, and puts those values back.
  assembler_.set_reuse_unchanged_rods(true);
  solver_.set_tolerance(settings_.cg_tolerance);
  solver_.set_max_iterations(settings_.cg_max_iterations);
  solver_.set_threads(settings_.threads);
  // Eigen's thread count is process-wide; its parallel sparse product (row by row) serves the
  // Eigen solvers outside the step (the static solver's CG). Set here, once: the product's
  // result does not depend on it (each row is summed by one thread), only its speed.
  Eigen::setNbThreads(std::max(1, settings_.threads));
  for (int dof = 0; dof < layout.dof_count(); ++dof)
    if (layout.free_index(dof) < 0) fixed_dofs_.push_back(dof);
  // The convergence test's length scale per DOF, and the energy allowance's scale.
  dof_length_ = VecX::Zero(layout.dof_count());
  const double g = gravity_magnitude(model);
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r) {
    const Rod& rod = model.rods[r];
    const double length = rod.rest_length();
    double mass = 0.0;
    for (int i = 0; i < rod.vertex_count(); ++i) {
      mass += rod.vertex_mass(i);
      const int dof = layout.vertex_dof(r, i);
      for (int d = 0; d < model.dimension; ++d) dof_length_[dof + d] = length;
    }
    // A twist DOF is an angle: its correction is measured against a full turn.
    for (int j = 0; j < rod.edge_count(); ++j)
      if (const int dof = layout.edge_dof(r, j); dof >= 0) dof_length_[dof] = 6.283185307179586;
    energy_scale_ += mass * g * length;
  }
}

EnergyBreakdown ImplicitEuler::energies(const State& state) const {
  EnergyBreakdown e = assembler_.potential_energies(state.positions, state.time);
  // The barrier's pairs in the assembler are those of the last search path, not necessarily
  // of this state's: its energy from the pairs near each other here.
  if (barrier_) e.contact = rod_contact_.energy(state.positions);
  e.kinetic = 0.5 * state.velocities.dot(mass_.cwiseProduct(state.velocities));
  return e;
}

HessianProjection ImplicitEuler::system_projection() const {
  // Rayleigh damping's K is the bending-modes Hessian (docs/physics.md, "Damping"); the system
  // matrix carries it as (h^2 + h beta) K, so with stiffness damping that is the projection.
  return model_.damping_stiffness > 0.0 ? HessianProjection::BendingModes : settings_.projection;
}

bool ImplicitEuler::find_non_finite(const VecX& values, StepReport& report, const char* what) const {
  const int size = static_cast<int>(values.size());
  const int threads = settings_.threads;
  // Usually all are finite: Eigen's vectorised test, a chunk per thread, says so in one pass.
  const int chunks = threads > 1 && size > kParallelDofs ? threads : 1;
  bool finite = true;
#pragma omp parallel for schedule(static) num_threads(threads) if (chunks > 1) reduction(&& : finite)
  for (int c = 0; c < chunks; ++c) {
    const int begin = static_cast<int>(static_cast<long>(size) * c / chunks);
    const int end = static_cast<int>(static_cast<long>(size) * (c + 1) / chunks);
    finite = finite && values.segment(begin, end - begin).allFinite();
  }
  if (finite) return false;
  // The first non-finite entry: a min-reduction, so the answer is the same for every thread count.
  int first = size;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && size > kParallelDofs) reduction(min : first)
  for (int dof = 0; dof < size; ++dof)
    if (!std::isfinite(values[dof])) first = std::min(first, dof);
  if (first >= size) return false;
  const auto [rod, vertex] = model_.layout.dof_owner(first);
  std::ostringstream message;
  message << "non-finite " << what << " at rod '" << model_.rods[rod].name << "' vertex " << vertex;
  report.ok = false;
  report.failure = message.str();
  report.failed_rod = rod;
  report.failed_vertex = vertex;
  return true;
}

bool ImplicitEuler::find_collapsed_edge(const VecX& positions, StepReport& report) const {
  const int edge = assembler_.find_collapsed_edge(positions);
  if (edge < 0) return false;
  const auto [rod, vertex] = assembler_.stretch_edge(edge);
  std::ostringstream message;
  message << "edge " << vertex << "-" << vertex + 1 << " of rod '" << model_.rods[rod].name
          << "' collapsed to zero length (rod '" << model_.rods[rod].name << "' vertex " << vertex << ")";
  report.ok = false;
  report.failure = message.str();
  report.failed_rod = rod;
  report.failed_vertex = vertex;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Stage: check start.

bool ImplicitEuler::check_start(const State& state, double dt, StepContext& ctx) const {
  ctx.report = StepReport{};
  ctx.dt = dt;
  ctx.t0 = state.time;
  ctx.t1 = state.time + dt;
  ctx.x0 = &state.positions;
  ctx.v0 = &state.velocities;
  // A state this step cannot start from is reported, not assembled (the kernels assert
  // finite, non-degenerate stencils).
  if (!(dt > 0.0 && std::isfinite(dt))) {
    ctx.report.ok = false;
    ctx.report.failure = "time step is not a positive finite number";
    return false;
  }
  return !(find_non_finite(state.positions, ctx.report, "position") ||
           find_non_finite(state.velocities, ctx.report, "velocity") ||
           find_collapsed_edge(state.positions, ctx.report));
}

// ---------------------------------------------------------------------------------------------
// Stage: predict.

void ImplicitEuler::predict(StepContext& ctx, bool allow_bdf2) {
  const DofLayout& layout = model_.layout;
  const VecX& x0 = *ctx.x0;
  const VecX& v0 = *ctx.v0;
  const int dofs = layout.dof_count();
  // This step continues the last one when the state is where that step left it: time, and
  // the free DOFs' positions and velocities (fixed DOFs may be moved by handles in between).
  bool continuing = history_ && ctx.t0 == last_end_time_ && last_end_v_.size() == v0.size() &&
                    last_end_x_.size() == x0.size();
  if (continuing) {
    const int threads = settings_.threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && dofs > kParallelDofs) reduction(&& : continuing)
    for (int dof = 0; dof < dofs; ++dof)
      continuing = continuing && (layout.free_index(dof) < 0 || (v0[dof] == last_end_v_[dof] && x0[dof] == last_end_x_[dof]));
  }
  ctx.continuing = continuing;

  // BDF2 needs the previous step, of the same length (constant-step BDF2); otherwise this step
  // is backward Euler (the first step, after a split, after a jump of the state).
  // With rod-rod contact every step is backward Euler: its Newton iterations start from x0,
  // which is feasible, while BDF2's x^ = (4 x_n - x_{n-1}) / 3 need not be.
  const bool barrier = barrier_;
  ctx.bdf2 = allow_bdf2 && settings_.scheme == TimeScheme::Bdf2 && continuing && previous_dt_ == ctx.dt && !barrier &&
             !constraints_;
  ctx.report.bdf2 = ctx.bdf2;
  VecX& v = ctx.v;
  v.resize(dofs);
  if (ctx.bdf2) {
    ctx.h = 2.0 * ctx.dt / 3.0;
    ctx.bdf2_x_hat.resize(dofs);
    ctx.bdf2_v_hat.resize(dofs);
    const double h = ctx.h, dt = ctx.dt;
    for_each_entry(dofs, settings_.threads, [&](int i) {
      ctx.bdf2_x_hat[i] = (4.0 * x0[i] - previous_x0_[i]) / 3.0;
      ctx.bdf2_v_hat[i] = (4.0 * v0[i] - previous_v0_[i]) / 3.0;
      // Free DOFs start from v^; fixed DOFs take the velocity that puts them where their
      // prescribed velocity takes them, x0 + dt v0 (commit() then stores v0 itself).
      v[i] = layout.free_index(i) >= 0 ? ctx.bdf2_v_hat[i] : (x0[i] + dt * v0[i] - ctx.bdf2_x_hat[i]) / h;
    });
    ctx.x_hat = &ctx.bdf2_x_hat;
    ctx.v_hat = &ctx.bdf2_v_hat;
  } else {
    ctx.h = ctx.dt;
    ctx.x_hat = &x0;
    ctx.v_hat = &v0;
    // With rod-rod contact Newton starts at rest (free DOFs), where the end positions x0 + h v
    // are the start's, apart; its first iteration is then Baraff-Witkin's solve at x0 exactly
    // (docs/contact.md, "Rod-rod contact"). Otherwise from v0.
    for_each_entry(dofs, settings_.threads,
                   [&](int i) { v[i] = barrier && layout.free_index(i) >= 0 ? 0.0 : v0[i]; });
    if (barrier) {
      carry_with_handles(ctx);
      ctx.carried_start.resize(dofs);
      const double h = ctx.h;
      for_each_entry(dofs, settings_.threads, [&](int i) { ctx.carried_start[i] = x0[i] + h * v[i]; });
    }
  }

  // Linearization::Predicted (fixed-count solver) starts Newton from the velocity extrapolated
  // from the last two steps of this same run, v~ = v0 + (h / h_prev) (v0 - v_prev), a
  // second-order guess of v1 for smooth motion, when it is better than v0 by the measure
  // Newton minimises, Phi(v~) <= Phi(v0) (at large steps, or at a sudden change, extrapolating
  // overshoots). Never across a jump, nor with colliders (a contact can stop a vertex within a
  // step), nor with stiffness damping (Phi's damping term needs K, not yet assembled).
  ctx.from_guess = false;
  const double alpha = model_.damping_mass;
  if (!settings_.converged() && settings_.linearization == Linearization::Predicted && continuing && !ctx.bdf2 &&
      !contact_.enabled() && !barrier && model_.damping_stiffness == 0.0 && previous_dt_ > 0.0) {
    const Clock::time_point guess_start = Clock::now();
    const double h = ctx.h, ratio = h / previous_dt_;
    ctx.trial_v = v0;
    for (int dof = 0; dof < dofs; ++dof)
      if (layout.free_index(dof) >= 0) ctx.trial_v[dof] = v0[dof] + ratio * (v0[dof] - previous_v0_[dof]);
    ctx.trial_x = x0 + h * ctx.trial_v;
    ctx.w = x0 + h * v0;  // scratch until the iterations need w
    if (assembler_.find_collapsed_edge(ctx.trial_x) < 0 && assembler_.find_collapsed_edge(ctx.w) < 0) {
      ctx.mass_dv = mass_.cwiseProduct(ctx.trial_v - v0);
      const double phi_guess = 0.5 * (ctx.trial_v - v0).dot(ctx.mass_dv) +
                               0.5 * h * alpha * ctx.trial_v.dot(mass_.cwiseProduct(ctx.trial_v)) +
                               assembler_.potential_energies(ctx.trial_x, ctx.t1).incremental();
      const double phi_start =
          0.5 * h * alpha * v0.dot(mass_.cwiseProduct(v0)) + assembler_.potential_energies(ctx.w, ctx.t1).incremental();
      if (phi_guess <= phi_start) {
        v = ctx.trial_v;
        ctx.from_guess = true;
      }
    }
    ctx.report.assembly_seconds += seconds_since(guess_start);
  }

  // Whether energy may enter the system during the step: a moving fixed vertex, a load that
  // changes, a collider (it may move, and contact is not a minimisation of Phi).
  ctx.driven = contact_.enabled() || (constraints_ && !model_.colliders.empty());
  for (const int dof : fixed_dofs_)
    if (v0[dof] != 0.0) ctx.driven = true;
  for (const PointLoad& load : model_.loads)
    if (load.force_at(ctx.t0) != load.force_at(ctx.t1)) ctx.driven = true;

  ctx.iteration = 0;
  ctx.at_start = !ctx.from_guess && !barrier;
  ctx.x_lin = ctx.x_hat;
  ctx.end_energies_known = false;
}

// ---------------------------------------------------------------------------------------------
// Stage: assemble.

bool ImplicitEuler::assemble(StepContext& ctx) {
  const DofLayout& layout = model_.layout;
  const VecX& x_hat = *ctx.x_hat;
  const VecX& v_hat = *ctx.v_hat;
  const VecX& v = ctx.v;
  const double h = ctx.h;
  const double alpha = model_.damping_mass, beta = model_.damping_stiffness;
  const int n_free = layout.free_dof_count();
  StepReport& report = ctx.report;
  // Every Newton iteration of every solver assembles first: the one place to stop a step.
  if (stop_ != nullptr && *stop_ != 0) {
    report.ok = false;
    report.interrupted = true;
    report.failure = "interrupted";
    return false;
  }
  if (!ctx.at_start) {
    ctx.linearization_point = x_hat + h * v;
    ctx.x_lin = &ctx.linearization_point;
    if (find_non_finite(ctx.linearization_point, report, "position") ||
        find_collapsed_edge(ctx.linearization_point, report))
      return false;
  }
  const VecX& x_lin = *ctx.x_lin;
  ctx.rods_selected = false;
  const Clock::time_point assembly_start = Clock::now();
  if (barrier_) load_contact_pairs(x_lin, x_lin);
  // K w with w = h (x^ + h v - x_lin) + h beta v. Away from the start x_lin = x^ + h v, so
  // without stiffness damping w is exactly zero and K w is not formed.
  const bool with_product = ctx.at_start || beta != 0.0;
  if (with_product) {
    ctx.w.resize(x_hat.size());
    for_each_entry(static_cast<int>(x_hat.size()), settings_.threads,
                   [&](int i) { ctx.w[i] = h * (x_hat[i] + h * v[i] - x_lin[i]) + (h * beta) * v[i]; });
  }
  // Build the system: J = (1 + h alpha) M + (h^2 + h beta) K on the free DOFs, and the
  // right-hand side -r. Without contact each rod's block is built, factored and solved as
  // soon as the rod is assembled, while its values are in cache; contact may change the
  // system first, so there the preconditioner factors it in the solve.
  SparseMatrix& system = assembler_.matrix();
  const double* values = system.valuePtr();
  ctx.rhs_free.resize(n_free);
  ctx.residual.resize(layout.dof_count());
  const double mass_scale = 1.0 + h * alpha;
  if (!(system_mass_scale_ == mass_scale && system_mass_.size() == mass_.size())) {
    system_mass_ = mass_scale * mass_;
    system_mass_scale_ = mass_scale;
  }
  auto build_dofs = [&](int begin, int end) {
    for (int dof = begin; dof < end; ++dof) {
      ctx.residual[dof] = mass_[dof] * (mass_scale * v[dof] - v_hat[dof]) + h * ctx.gradient[dof];
      if (with_product) ctx.residual[dof] += ctx.product[dof];
      const int f = layout.free_index(dof);
      if (f >= 0) ctx.rhs_free[f] = -ctx.residual[dof];
    }
  };
  auto& preconditioner = solver_.preconditioner();
  preconditioner.clear_groups();  // until a coupled solve sets them (solve_with_cg)
  // Coupling elements (SystemAssembler::coupling_matrix) tie rods: CG solves the coupled
  // system, the per-rod factors are its preconditioner.
  coupled_ = assembler_.has_coupling();
  ctx.solved_per_rod = !contact_.enabled() && !coupled_;
  // The converged solver's convergence test reuses the guess's factors.
  const bool keep_factors = ctx.solved_per_rod && settings_.converged() && ctx.iteration == 0;
  // Solved per rod with the factors kept for the convergence test, and no stiffness damping
  // (whose line search takes a product with the matrix), nothing reads the system matrix
  // unless CG must iterate: each rod's residual is formed from its band in cache (the factor
  // formed where it is kept), and solve() fills the matrix (assembling again) only if the
  // guess fails CG's test. Writing the matrix was a tenth of a step of the strand benchmark.
  if (ctx.solved_per_rod) preconditioner.prepare_blocks(system);
  ctx.matrix_filled = keep_system_matrix_ || constraints_ || ctx.fill_matrix || !ctx.solved_per_rod || !keep_factors || beta != 0.0 ||
                      preconditioner.dofs_outside_blocks() > 0;
  if (!ctx.matrix_filled) ++unwritten_matrices_;
  ctx.fill_matrix = false;
  if (ctx.solved_per_rod) {
    ctx.guess.resize(n_free);
    ctx.first_residual.resize(n_free);
    ctx.rod_block_failed.assign(layout.rod_count(), 0);
  }
  const int* outer = system.outerIndexPtr();
  const int* inner = system.innerIndexPtr();
  const bool matrix_filled = ctx.matrix_filled;
  const SystemAssembler::RodCallback build_rod = [&](int rod, const BandView& block) {
    const auto [begin, end] = layout.rod_dof_range(rod);
    build_dofs(begin, end);
    const auto [free_begin, free_end] = layout.rod_free_range(rod);
    const int size = free_end - free_begin;
    // The block as assembled, when the matrix is not filled: factored where its factor is
    // kept (keep_factors holds then), the band stays as it is.
    const double* assembled_band = !matrix_filled && size > 0 ? block.values : nullptr;
    for (int f = free_begin; f < free_end; ++f) ctx.guess[f] = ctx.rhs_free[f];
    // A block that is not positive definite starts CG from the Jacobi step, as CG's own
    // preconditioner does there (the matrix's values are final: copied out before this call;
    // or the band's, the same).
    if (!preconditioner.solve_block_in_place(rod, block, ctx.guess.data() + free_begin, keep_factors,
                                             assembled_band != nullptr)) {
      ctx.rod_block_failed[rod] = 1;
      for (int f = free_begin; f < free_end; ++f) {
        const int i = f - free_begin;
        const double d = assembled_band != nullptr ? assembled_band[band_index(i, i, block.half_bandwidth)]
                                                   : values[assembler_.diagonal_slots()[f]];
        ctx.guess[f] = d != 0.0 ? ctx.rhs_free[f] / d : ctx.rhs_free[f];
      }
    }
    // CG's first test is its residual at the guess: one product with the whole matrix, the
    // matrix read back from memory. Here the rod's block is in cache, and without coupling it
    // touches only its own DOFs: each residual entry is formed as Eigen's row-major product
    // forms it (tmp += J_fk x_k over the row's entries in increasing k, then b_f - tmp), so
    // bit for bit the same (an entry of the band outside the matrix's pattern adds a zero,
    // which changes at most the sign of a zero sum), and solve() takes CG's own test on it.
    double* residual = ctx.first_residual.data() + free_begin;
    const double* guess = ctx.guess.data() + free_begin;
    const double* rhs = ctx.rhs_free.data() + free_begin;
    if (assembled_band != nullptr) {
      const int w = block.half_bandwidth;
      for (int i = 0; i < size; ++i) {
        double sum = 0.0;
        const int k0 = std::max(0, i - w), k1 = std::min(size - 1, i + w);
        const double* row = assembled_band + static_cast<std::ptrdiff_t>(i + 1) * w;  // row[k] = (i, k), k <= i
        for (int k = k0; k <= i; ++k) sum += row[k] * guess[k];
        for (int k = i + 1; k <= k1; ++k) sum += assembled_band[band_index(k, i, w)] * guess[k];
        residual[i] = rhs[i] - sum;
      }
    } else {
      for (int f = free_begin; f < free_end; ++f) {
        double sum = 0.0;
        for (int p = outer[f]; p < outer[f + 1]; ++p) sum += values[p] * ctx.guess[inner[p]];
        ctx.first_residual[f] = ctx.rhs_free[f] - sum;
      }
    }
  };
  assembler_.assemble(x_lin, ctx.t1, system_projection(), h * h + h * beta, ctx.gradient,
                      with_product ? &ctx.w : nullptr, with_product ? &ctx.product : nullptr, &ctx.potential_at_lin,
                      ctx.solved_per_rod ? build_rod : SystemAssembler::RodCallback{}, &system_mass_,
                      ctx.matrix_filled);
  if (ctx.solved_per_rod) {
    preconditioner.declare_blocks_solved(values, keep_factors);
  } else {
    if (coupled_) {
      // An iteration over the rods still moving reads only their rows and columns (no entry
      // ties them to a held rod: select_active_rods), so the coupled system is formed over
      // their columns alone, the others left empty, and only their blocks are analysed; the
      // held blocks keep their analysis for the next full iteration. Merging and analysing
      // the whole system there was a tenth of the tilted 1000-bristle brush's run, whose
      // iterations over the moving rods solve 20 to 100 of its 1000.
      ctx.rods_selected = true;
      const bool partial = select_active_rods(ctx);
      if (partial) {
        active_columns_.assign(n_free, 0);
        for (const auto& [begin, end] : active_free_ranges_) std::fill(active_columns_.begin() + begin, active_columns_.begin() + end, 1);
      }
      // A new pattern each assembly (coupling elements come and go): analysed anew, not
      // recognised by its arrays' addresses.
      add_sparse(assembler_.matrix(), assembler_.coupling_matrix(), coupled_system_, settings_.threads,
                 partial ? &active_columns_ : nullptr);
      if (partial)
        preconditioner.analyze_blocks(coupled_system_, active_rods_);
      else
        preconditioner.analyzePattern(coupled_system_);
      ctx.guess.setZero(n_free);  // CG's first step is then the per-rod solve
    }
    for_each_entry(layout.dof_count(), settings_.threads, [&](int dof) { build_dofs(dof, dof + 1); });
  }
  report.assembly_seconds += seconds_since(assembly_start);
  return !find_non_finite(ctx.residual, report, "force");
}

std::vector<int> ImplicitEuler::coupled_rod_roots() const {
  // Rods joined by the coupling matrix's entries (contact and friction between rods, or
  // between far parts of one rod), by union-find: each root is its group's smallest rod.
  // Computed once per assembly of the coupling.
  const std::uint64_t version = assembler_.coupling_version();
  if (roots_cache_.valid && roots_cache_.version == version && roots_cache_.coupled == coupled_)
    return roots_cache_.value;
  const DofLayout& layout = model_.layout;
  const int rod_count = layout.rod_count();
  std::vector<int> parent(rod_count);
  for (int r = 0; r < rod_count; ++r) parent[r] = r;
  if (!coupled_) {
    roots_cache_ = {version, coupled_, true, parent};
    return parent;
  }
  std::vector<int> rod_of_free(layout.free_dof_count(), -1);
  for (int r = 0; r < rod_count; ++r) {
    const auto [begin, end] = layout.rod_free_range(r);
    for (int f = begin; f < end; ++f) rod_of_free[f] = r;
  }
  auto root = [&](int r) {
    while (parent[r] != r) r = parent[r] = parent[parent[r]];
    return r;
  };
  const SparseMatrix& coupling = assembler_.coupling_matrix();
  for (int column = 0; column < coupling.outerSize(); ++column)
    for (SparseMatrix::InnerIterator entry(coupling, column); entry; ++entry) {
      const int a = root(rod_of_free[column]), b = root(rod_of_free[entry.row()]);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  for (int r = 0; r < rod_count; ++r) parent[r] = root(r);
  roots_cache_ = {version, coupled_, true, parent};
  return parent;
}

std::vector<std::vector<int>> ImplicitEuler::coupled_rod_groups() const {
  // The groups of coupled_rod_roots with more than one rod, or one rod tied to itself (far
  // parts of one rod), each in increasing rod order, the groups by their first rod; rods
  // without coupling entries are in none. Computed once per assembly of the coupling.
  const std::uint64_t version = assembler_.coupling_version();
  if (groups_cache_.valid && groups_cache_.version == version && groups_cache_.coupled == coupled_)
    return groups_cache_.value;
  const DofLayout& layout = model_.layout;
  const int rod_count = layout.rod_count();
  const std::vector<int> roots = coupled_rod_roots();
  std::vector<char> touched(rod_count, 0);
  const SparseMatrix& coupling = assembler_.coupling_matrix();
  if (coupled_)
    for (int r = 0; r < rod_count; ++r) {
      const auto [begin, end] = layout.rod_free_range(r);
      for (int column = begin; column < end && !touched[roots[r]]; ++column)
        if (SparseMatrix::InnerIterator(coupling, column)) touched[roots[r]] = 1;
    }
  std::vector<int> group_index(rod_count, -1);
  std::vector<std::vector<int>> groups;
  for (int r = 0; r < rod_count; ++r) {
    const int g = roots[r];
    if (!touched[g]) continue;
    if (group_index[g] < 0) {
      group_index[g] = static_cast<int>(groups.size());
      groups.emplace_back();
    }
    groups[group_index[g]].push_back(r);
  }
  // A group beyond kMaxGroupFreeDofs stays on its rods' own factors, as all did before the
  // groups: a sparse LDL^T's fill, and so its time and memory, grows faster than its rows,
  // where CG's iterations cost what the rows do.
  const auto too_large = [&](const std::vector<int>& group) {
    int free_dofs = 0;
    for (int r : group) {
      const auto [begin, end] = layout.rod_free_range(r);
      free_dofs += end - begin;
    }
    return free_dofs > kMaxGroupFreeDofs;
  };
  groups.erase(std::remove_if(groups.begin(), groups.end(), too_large), groups.end());
  groups_cache_ = {version, coupled_, true, groups};
  return groups;
}

bool ImplicitEuler::select_active_rods(StepContext& ctx) {
  // After a step's first Newton iteration only a few rods are still above the tolerance (the
  // 1000-bristle tilted brush of `bristle bench --brush --tilt 0.9`: 22 on average, at most a
  // few hundred), yet every iteration solved all of them. Newton on the rods still moving,
  // the others held where they are, is Newton's method on that block of unknowns (a block
  // Gauss-Seidel sweep of it): its corrections descend Phi as the full ones do, and the line
  // search and CCD judge them as they do the full ones. The rods the coupling ties to a moving
  // rod move with it, so no entry of the system ties a solved rod to a held one: the held
  // rods' rows are out of the solve, their right-hand side and solution zero. What the held
  // rods' residuals become is measured only by an iteration over all rods, so only such an
  // iteration may find the step converged (run_converged); it comes when every solved rod is
  // below the tolerance.
  const DofLayout& layout = model_.layout;
  const int rod_count = layout.rod_count();
  ctx.partial = false;
  // The last iteration run_converged allows (max_newton_iterations) is over every rod: a step
  // is not split or failed on rods unmeasured where a full iteration might find it converged.
  // (A step in collider contact that stalls after kContactIterations may end on a partial
  // iteration: unconverged either way. Made full there, the vertical 4 x 4 press of `bench
  // --brush --rows 4 --columns 4 --segments 10` went 20.8 radii deep against 10.0.)
  if (!settings_.active_rods || !barrier_ || !settings_.converged() || ctx.iteration < kFirstPartialIteration ||
      ctx.iteration >= settings_.max_newton_iterations || ctx.solved_per_rod ||
      !ctx.rod_corrections_known || ctx.next_full || static_cast<int>(ctx.rod_correction.size()) != rod_count)
    return false;
  const double tolerance = step_tolerance();
  const std::vector<int> roots = coupled_rod_roots();
  // A rod held in a curved collider stays where its last solve's linearisation of the surface
  // put it: up to the tolerance deep, which is many radii for a thin rod (hair_on_sphere.json:
  // 0.18 radii deep at frame ends, against 0.035 with every rod solved). So a rod deeper than
  // the contact solver's own penetration tolerance at the iterate moves too.
  if (contact_.enabled() && ctx.x_lin != nullptr)
    contact_.max_penetration_fraction_by_rod(*ctx.x_lin, rod_depth_);
  else
    rod_depth_.assign(rod_count, -1.0);
  const double deep = settings_.contact.penetration_tolerance;
  active_rods_.assign(rod_count, 0);
  bool any_above = false, too_deep = false;
  for (int r = 0; r < rod_count; ++r) {
    const bool above = ctx.rod_correction[r] > tolerance;
    any_above = any_above || above;
    too_deep = too_deep || rod_depth_[r] > kDeepInCollider;
    if (above || rod_depth_[r] > deep) active_rods_[roots[r]] = 1;
  }
  // Every rod within the tolerance and none deeper than a converged step may leave it
  // (kDeepInCollider): the iteration over all of them, which may end the step. A rod only a
  // little deep does not keep the iterations partial; one too deep for the step to end does.
  if (!any_above && !too_deep) return false;
  int active_dofs = 0;
  active_free_ranges_.clear();
  for (int r = 0; r < rod_count; ++r) {
    active_rods_[r] = active_rods_[roots[r]];
    if (!active_rods_[r]) continue;
    const auto range = layout.rod_free_range(r);
    active_dofs += range.second - range.first;
    active_free_ranges_.push_back(range);
  }
  // Most rods still moving: the whole solve costs about as much, and is the one that can end
  // the step.
  if (active_dofs * 2 > layout.free_dof_count()) return false;
  ctx.partial = true;
  return true;
}

const std::vector<char>& ImplicitEuler::rods_with_coupling() const {
  const std::uint64_t version = assembler_.coupling_version();
  if (with_coupling_cache_.valid && with_coupling_cache_.version == version) return with_coupling_cache_.value;
  const DofLayout& layout = model_.layout;
  const SparseMatrix& coupling = assembler_.coupling_matrix();
  std::vector<char>& marks = with_coupling_cache_.value;
  marks.assign(layout.rod_count(), 0);
  const int* outer = coupling.outerIndexPtr();
  const bool sized = coupling.cols() == layout.free_dof_count();
  for (int r = 0; r < layout.rod_count(); ++r) {
    const auto [begin, end] = layout.rod_free_range(r);
    marks[r] = sized && outer[end] > outer[begin] ? 1 : 0;
  }
  with_coupling_cache_.version = version;
  with_coupling_cache_.valid = true;
  return marks;
}

void ImplicitEuler::cg_over_coupled_rods(const SparseMatrix& m, const VecX& b, const VecX& start, VecX& x,
                                         const std::vector<char>* same_rods) {
  // Most rods of a pressed brush touch no other (55 of 1000 in a full Newton iteration of the
  // tilted 1000-bristle brush): the coupling leaves their rows alone, so their own factors
  // solve them exactly, and CG, which converges as the coupled rods need, need not carry them
  // through its every product and update. CG runs on the other rows, tested against the whole
  // |b| as before; its result there is what the whole CG's would be to within its tolerance.
  // Scenes without coupling solve as before (coupled_ false), bit for bit.
  auto& preconditioner = solver_.preconditioner();
  const DofLayout& layout = model_.layout;
  const int rod_count = layout.rod_count();
  const bool may_split = coupled_ && rod_count >= 2 && settings_.split_coupled_solves;
  // A rod the contact solver's pass left as it was (same_rods) and the last call solved by
  // its own factor has that call's rows, factor and solution: it keeps them, neither compared
  // nor solved again. The same bits as solving it (the 1000-bristle brush: three in four of
  // its rods' solves came in a Newton iteration's later passes, each changing a few rods).
  kept_rods_.assign(rod_count, 0);
  if (may_split && same_rods != nullptr && keep_unchanged_rod_solutions_ &&
      static_cast<int>(same_rods->size()) == rod_count && static_cast<int>(solved_by_factor_.size()) == rod_count &&
      x.size() == b.size()) {
    const std::vector<char>& coupled = rods_with_coupling();
    bool any = false;
    for (int r = 0; r < rod_count; ++r) {
      kept_rods_[r] = (*same_rods)[r] && solved_by_factor_[r] && !coupled[r] && (!partial_solve_ || active_rods_[r]);
      any = any || kept_rods_[r];
    }
    if (any) preconditioner.set_unchanged_blocks(kept_rods_);
  }
  solver_.compute(m);
  solved_by_factor_.assign(rod_count, 0);
  cg_split_ = false;
  // (A DOF in no rod's block is CG's alone: one CG over every row.)
  if (!may_split || preconditioner.dofs_outside_blocks() > 0) {
    x = solver_.solve_with_guess(b, start);
    return;
  }
  const std::vector<char>& coupled = rods_with_coupling();
  exact_rods_.clear();
  kept_list_.clear();
  cg_ranges_.clear();
  cg_blocks_.assign(rod_count, 0);
  int solved_dofs = 0, cg_dofs = 0;
  for (int r = 0; r < rod_count; ++r) {
    if (partial_solve_ && !active_rods_[r]) continue;
    const auto range = layout.rod_free_range(r);
    const int size = range.second - range.first;
    if (size <= 0) continue;
    solved_dofs += size;
    if (!coupled[r] && preconditioner.block_exact(r)) {
      (kept_rods_[r] ? kept_list_ : exact_rods_).push_back(r);
    } else {
      cg_ranges_.push_back(range);
      cg_blocks_[r] = 1;
      cg_dofs += size;
    }
  }
  // Few rods solved on their own: the whole CG costs about the same.
  if ((exact_rods_.empty() && kept_list_.empty()) || cg_dofs * 4 > solved_dofs * 3) {
    x = solver_.solve_with_guess(b, start);
    return;
  }
  cg_split_ = true;
  ++split_solves_;
  // The kept rods' entries of x, which CG's assignment below overwrites with the start.
  int kept_dofs = 0;
  for (const int r : kept_list_) {
    const auto [begin, end] = layout.rod_free_range(r);
    kept_dofs += end - begin;
  }
  kept_values_.resize(kept_dofs);
  kept_dofs = 0;
  for (int r : kept_list_) {
    const auto [begin, end] = layout.rod_free_range(r);
    kept_values_.segment(kept_dofs, end - begin) = x.segment(begin, end - begin);
    kept_dofs += end - begin;
  }
  kept_dofs = 0;
  // CG reads b and the start on its rows only (the coupled rods' rows hold no entry in the
  // other rods' columns); x keeps the start elsewhere until the factors' solves below.
  {
    const SolveRowsGuard guard{*this};
    solver_.set_active_ranges(cg_ranges_);
    preconditioner.set_active_blocks(cg_blocks_);
    solver_.set_reference_b_norm2(ConjugateGradient::squared_norm(b, settings_.threads));
    x = solver_.solve_with_guess(b, start);
  }
  for (int r : kept_list_) {
    const auto [begin, end] = layout.rod_free_range(r);
    x.segment(begin, end - begin) = kept_values_.segment(kept_dofs, end - begin);
    kept_dofs += end - begin;
    solved_by_factor_[r] = 1;
  }
  kept_rod_solutions_ += static_cast<long>(kept_list_.size());
  const int exact_count = static_cast<int>(exact_rods_.size());
#pragma omp parallel for schedule(dynamic, 8) num_threads(settings_.threads) if (settings_.threads > 1 && exact_count > 1)
  for (int k = 0; k < exact_count; ++k) preconditioner.solve_block(exact_rods_[k], b, x);
  for (const int r : exact_rods_) solved_by_factor_[r] = 1;
}

double ImplicitEuler::cg_residual_norm(const SparseMatrix& m, const VecX& b, const VecX& x) {
  if (!cg_split_) return solver_.residual_norm(m, b, x);
  const SolveRowsGuard guard{*this};
  solver_.set_active_ranges(cg_ranges_);
  return solver_.residual_norm(m, b, x);
}

ImplicitEuler::SolveRowsGuard::~SolveRowsGuard() {
  self.solver_.set_reference_b_norm2(0.0);
  self.restore_solve_rows();
}

void ImplicitEuler::restore_solve_rows() {
  if (partial_solve_) {
    solver_.set_active_ranges(active_free_ranges_);
    solver_.preconditioner().set_active_blocks(active_rods_);
  } else {
    solver_.clear_active_ranges();
    solver_.preconditioner().clear_active_blocks();
  }
}

bool ImplicitEuler::solve_with_cg(const SparseMatrix& m, const VecX& b, const VecX& guess, VecX& x,
                                  const std::vector<char>* same_rods) {
  // Rods tied by the coupling (pressed on each other, or one rod's far parts) can be factored
  // together in CG's preconditioner, each group by a sparse LDL^T, the other rods by their
  // banded factors: the preconditioner is then exact and CG takes about one iteration. The
  // per-rod factors alone leave the contact between rods to CG, which on pressed brushes took
  // 100 to 250 iterations a solve, converging almost linearly. But an exact solve is not always
  // the better Newton step: on hair_on_sphere.json, whose per-rod solves take few iterations,
  // the exact directions went further into each CCD cut and took 819 Newton iterations against
  // 331 (106 s against 16 s). So a coupled system is first given kPerRodIterations of CG on the
  // per-rod factors; a solve that needs more switches the attempt to the groups, from CG's last
  // iterate, for this and its remaining solves (docs/contact.md, "The coupled rods factored
  // together"). Within a Newton iteration the groups stay, and the active-set passes change
  // values, not the pattern: only the values are factored again (set_groups keeps the
  // symbolic analysis).
  //
  // A group's factor can pass its own test (RodBlockPreconditioner::factorize_groups) and still
  // mislead CG where the group's matrix is near the end of double precision (a pair pressed at
  // a tiny gap: barrier entries of 1e10 beside 1e-5): CG's recurrence then reports convergence
  // while the true residual is large (the vertical 4 x 4 brush of the brush benchmark's tests:
  // tips sent 1e12 radii into the paper). So a solve with factored groups is taken only if its
  // true residual is within sqrt(cg_tolerance), what an inexact solve may leave (below);
  // otherwise it is solved again with the rods' own factors.
  auto& preconditioner = solver_.preconditioner();
  const VecX* start = &guess;
  if (coupled_ && !group_coupled_rods_) {
    preconditioner.clear_groups();
    solver_.set_max_iterations(std::min(kPerRodIterations, settings_.cg_max_iterations));
    cg_over_coupled_rods(m, b, guess, x, same_rods);
    solver_.set_max_iterations(settings_.cg_max_iterations);
    if (solver_.info() == Eigen::Success) return true;
    group_coupled_rods_ = true;
    if (x.allFinite()) {
      cg_start_ = x;
      start = &cg_start_;
    }
  }
  if (coupled_ && group_coupled_rods_) {
    std::vector<std::vector<int>> groups = coupled_rod_groups();
    if (partial_solve_)  // a group is solved whole or held whole (select_active_rods)
      groups.erase(std::remove_if(groups.begin(), groups.end(),
                                  [&](const std::vector<int>& group) { return !active_rods_[group.front()]; }),
                   groups.end());
    preconditioner.set_groups(std::move(groups));
  } else
    preconditioner.clear_groups();
  cg_over_coupled_rods(m, b, *start, x, same_rods);
  if (preconditioner.group_count() > preconditioner.failed_groups()) {
    const double b_norm = b.norm();
    // Over the rows CG solved: the others' own factors solved them exactly.
    const double residual = x.allFinite() ? cg_residual_norm(m, b, x) : std::numeric_limits<double>::infinity();
    if (!(residual <= std::sqrt(settings_.cg_tolerance) * b_norm)) {
      preconditioner.clear_groups();
      cg_over_coupled_rods(m, b, *start, x, same_rods);
    }
  }
  if (solver_.info() == Eigen::Success) return true;
  // Rods pressed on each other by the barrier couple the system beyond what the per-rod
  // factors see, and CG can stall short of cg_tolerance (the 1000-bristle tilted brush of
  // `bristle bench --brush --tilt 0.9` at the lift: relative residuals 5e-7 to 4e-6 after
  // 1000 iterations, the same from a zero start). Newton needs a descent direction, not an
  // exact one (inexact Newton; Nocedal and Wright, "Numerical Optimization", 2nd ed., section
  // 7.1: a forcing term below 1 keeps local convergence): every CG iterate from zero on the
  // SPD system is one (from the contact passes' warm starts that is not guaranteed; a
  // direction cut by CCD is checked for descent in limit_step_by_ccd where a line search
  // follows, which is not while colliders hold vertices), and the iteration's
  // correction is judged on the next iterate as always. So a
  // solve within sqrt(cg_tolerance) is taken, its residual in the frame stats (cg_residual).
  // Failing it split the step down to the last level and then failed the run.
  if (barrier_ && std::isfinite(solver_.error()) && solver_.error() <= std::sqrt(settings_.cg_tolerance) &&
      x.allFinite())
    return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Stage: solve.

bool ImplicitEuler::solve(StepContext& ctx) {
  const DofLayout& layout = model_.layout;
  StepReport& report = ctx.report;
  const int n_free = layout.free_dof_count();
  SparseMatrix& system = system_matrix();
  const Clock::time_point solve_start = Clock::now();
  bool solved = true;
  double rod_residual = -1.0;  // >= 0: the contact solver's last pass was solved per rod
  // Newton on the rods still moving (select_active_rods): the solvers see only their rows,
  // whose right-hand side and guess are the iteration's; the others' are zero.
  partial_solve_ = ctx.rods_selected ? ctx.partial : select_active_rods(ctx);
  ctx.rods_selected = false;
  const VecX* rhs_free = &ctx.rhs_free;
  auto keep_active_rows = [&](VecX& vector) {
    for (int r = 0; r < layout.rod_count(); ++r)
      if (!active_rods_[r]) {
        const auto [begin, end] = layout.rod_free_range(r);
        vector.segment(begin, end - begin).setZero();
      }
  };
  if (partial_solve_) {
    active_rhs_free_ = ctx.rhs_free;
    keep_active_rows(active_rhs_free_);
    rhs_free = &active_rhs_free_;
    solver_.set_active_ranges(active_free_ranges_);
    solver_.preconditioner().set_active_blocks(active_rods_);
  }
  struct EndPartialSolve {
    ImplicitEuler& self;
    ~EndPartialSolve() {
      if (!self.partial_solve_) return;
      self.solver_.clear_active_ranges();
      self.solver_.preconditioner().clear_active_blocks();
      self.partial_solve_ = false;
    }
  } end_partial_solve{*this};
  if (contact_.enabled()) {
    const ContactSolver::LinearSolve linear_solve = [this](const SparseMatrix& m, const VecX& b, const VecX& guess,
                                                           VecX& x, const std::vector<char>* same_rods) {
      return solve_with_cg(m, b, guess, x, same_rods);
    };
    // Without coupling between rods (as the solve without contact), each rod's block is
    // solved on its own by its factor, and the contact solver solves again only the rods whose
    // constraints changed. Exact where it applies, so its residual counts as none.
    ContactSolver::RodSolve rod_solve;
    if (!coupled_)
      rod_solve = [this, &rod_residual](const SparseMatrix& m, const VecX& b, const std::vector<int>& rods, VecX& x) {
        const bool done = solver_.preconditioner().solve_blocks(m, rods, b, x);
        rod_residual = done ? 0.0 : -1.0;
        return done;
      };
    // Warm-started: a step's first iteration from the previous step's first velocity change;
    // a later one, with rod contact, from the part of the last iteration's Newton step that
    // it did not take, dv - s (dv, or its direction cut group by group), which is where the
    // next Newton step goes when CCD cut the last one short and the linearisation changed
    // little (the tilted 15 x 15 brush at touchdown, steps cut to 0.4% to 15%: CG started at
    // 1e-4 to 0.2 of |b| instead of |b|). After a full step it is zero, as without rod
    // contact. The contact solver writes dv_free on success only: it is sized (and zeroed)
    // here so nothing reads a stale vector.
    VecX& guess = ctx.untaken_dv_free;
    if (ctx.iteration == 0) {
      guess = warm_start_;
    } else if (barrier_ && ctx.dv_free.size() == n_free) {
      const VecX& taken = ctx.ccd_cut ? ctx.search_dv_free : ctx.dv_free;
      guess = ctx.dv_free - ctx.step_length * taken;
    } else {
      guess.setZero(n_free);
    }
    if (partial_solve_) keep_active_rows(guess);
    ctx.dv_free.setZero(n_free);
    solved = contact_.solve(system, *rhs_free, *ctx.x_hat, ctx.v, ctx.h, guess, linear_solve, ctx.dv_free,
                            rod_solve, partial_solve_ ? &active_rods_ : nullptr);
  } else {
    // Without contact the rods are uncoupled and the per-rod solves during assembly solved the
    // system exactly: their solution is CG's starting guess, and CG checks its residual (one
    // product) and iterates only if it is not yet within cg_tolerance. Solved per rod, that
    // residual was formed in assembly (build_rod) with the bits of CG's own, so its test is
    // taken here as ConjugateGradient takes it (the same expressions and sums: a zero b gives
    // a zero solution; otherwise |r|^2 < max(tol^2 |b|^2, the smallest normal double)), and
    // CG runs only where it fails, deciding then as it did before.
    bool passed_first_test = false;
    double relative_residual = 0.0;
    if (ctx.solved_per_rod) {
      bool any_failed = false;
      for (const char failed : ctx.rod_block_failed) any_failed = any_failed || failed != 0;
      // A block that was not positive definite: the preconditioner's Jacobi entries for it
      // come from the matrix, which must then be written.
      if (!(any_failed && !ctx.matrix_filled)) {
        const double tolerance = settings_.cg_tolerance;
        const double rhs2 = ConjugateGradient::squared_norm(ctx.rhs_free, settings_.threads);
        if (rhs2 == 0.0) {
          passed_first_test = true;
          ctx.dv_free.setZero(n_free);
        } else {
          const double threshold = std::max(tolerance * tolerance * rhs2, std::numeric_limits<double>::min());
          const double residual2 = ConjugateGradient::squared_norm(ctx.first_residual, settings_.threads);
          if (residual2 < threshold) {
            passed_first_test = true;
            relative_residual = std::sqrt(residual2 / rhs2);
            ctx.dv_free = ctx.guess;
          }
        }
      }
      if (!passed_first_test && !ctx.matrix_filled) {
        // CG runs, with the matrix: assembled again, writing it (the same values, guess and
        // factors, bit for bit). Its time counts as assembly.
        report.solve_seconds += seconds_since(solve_start);
        ++rewritten_matrices_;
        ctx.fill_matrix = true;
        // The blocks are solved again on the way (a preconditioner application, counted
        // with CG's iterations): counted once, as when the matrix is written the first time.
        const auto applications = solver_.preconditioner().applications();
        if (!assemble(ctx)) return false;
        report.cg_iterations -= static_cast<int>(solver_.preconditioner().applications() - applications);
        return solve(ctx);
      }
    }
    if (passed_first_test) {
      solver_.compute(system);
      report.cg_residual = relative_residual;
    } else {
      if (partial_solve_) keep_active_rows(ctx.guess);
      solved = solve_with_cg(system, *rhs_free, ctx.guess, ctx.dv_free);
      report.cg_residual = solver_.error();
    }
  }
  report.solve_seconds += seconds_since(solve_start);
  if (contact_.enabled()) report.cg_residual = rod_residual >= 0.0 ? rod_residual : solver_.error();
  ++report.newton_iterations;
  if (ctx.partial) ++report.partial_iterations;
  // The velocity change on all DOFs (zero on fixed ones). A non-finite solution (overflow in
  // CG) is named by the vertex where it appears; the state is untouched.
  const int dofs = layout.dof_count();
  ctx.dv.resize(dofs);
  if (ctx.dv_free.size() != n_free) ctx.dv_free.setZero(n_free);
  if (ctx.partial) keep_active_rows(ctx.dv_free);  // zero already: held exactly
  bool finite = true;  // checked in the same pass; the search for the message only on failure
  const int threads = settings_.threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && dofs > kParallelDofs) reduction(&& : finite)
  for (int dof = 0; dof < dofs; ++dof) {
    const int f = layout.free_index(dof);
    ctx.dv[dof] = f >= 0 ? ctx.dv_free[f] : 0.0;
    finite = finite && std::isfinite(ctx.dv[dof]);
  }
  if (!finite && find_non_finite(ctx.dv, report, "velocity")) return false;
  // Nothing else of a failed solve is used. It is named by where the force is largest.
  if (!solved) {
    std::ostringstream message;
    message << "conjugate gradient did not converge: relative residual " << solver_.error() << " after "
            << solver_.iterations() << " iterations (cg_tolerance " << settings_.cg_tolerance << ")";
    int worst = -1;
    for (int dof = 0; dof < dofs; ++dof) {
      const int f = layout.free_index(dof);
      if (f >= 0 && (worst < 0 || std::abs(ctx.rhs_free[f]) > std::abs(ctx.rhs_free[layout.free_index(worst)])))
        worst = dof;
    }
    if (worst >= 0) {
      const auto [rod, vertex] = layout.dof_owner(worst);
      message << "; largest force at rod '" << model_.rods[rod].name << "' vertex " << vertex;
      report.failed_rod = rod;
      report.failed_vertex = vertex;
    }
    // Rods pressed on each other are what the per-rod preconditioner cannot see: say so.
    if (coupled_ && barrier_ && ctx.x_lin) {
      const int pressed = rod_contact_.measure(*ctx.x_lin).pairs;
      if (pressed > 0)
        message << "; " << pressed << " pairs of segments pressed on each other (of two rods, or far apart on one) "
                << "couple the system (their rods are factored together in CG's preconditioner; a group whose "
                << "factorisation failed is left to CG): raise solver.cg_max_iterations (docs/contact.md, \"Limits "
                << "of rod-rod contact today\")";
    }
    report.ok = false;
    report.failure = message.str();
    return false;
  }
  if (ctx.iteration == 0 && contact_.enabled()) warm_start_ = ctx.dv_free;
  // Each solved rod's correction, for the next iteration's choice of rods.
  if (barrier_) {
    const int rod_count = layout.rod_count();
    if (!ctx.partial) {
      ctx.rod_correction.assign(rod_count, 0.0);
      ctx.rod_corrections_known = true;
      ctx.next_full = false;
    }
    for (int r = 0; r < rod_count; ++r) {
      if (ctx.partial && !active_rods_[r]) continue;
      const auto [begin, end] = layout.rod_dof_range(r);
      double largest = 0.0;
      for (int dof = begin; dof < end; ++dof) largest = std::max(largest, dof_correction(ctx, ctx.dv_free, dof));
      ctx.rod_correction[r] = largest;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Stage: line search.

double ImplicitEuler::phi_quadratic(const StepContext& ctx, const VecX& v) const {
  const VecX& v_hat = *ctx.v_hat;
  return 0.5 * (v - v_hat).dot(mass_.cwiseProduct(v - v_hat)) +
         0.5 * ctx.h * model_.damping_mass * v.dot(mass_.cwiseProduct(v));
}

ImplicitEuler::LineSearch ImplicitEuler::search_phi(StepContext& ctx, double potential_at_v, double slope,
                                                    double damping_scale, double first_step) {
  // Phi(v + s dv) - Phi(v) for the quadratic terms is a polynomial in s; only U needs an
  // evaluation per trial. dv is zero on fixed DOFs.
  const double h = ctx.h;
  const double alpha = model_.damping_mass, beta = model_.damping_stiffness;
  const VecX& v = ctx.v;
  const VecX& dv = ctx.search_direction();
  ctx.mass_dv = mass_.cwiseProduct(dv);
  const double dv_m_dv = dv.dot(ctx.mass_dv);
  const double linear_mass = (v - *ctx.v_hat).dot(ctx.mass_dv) + h * alpha * v.dot(ctx.mass_dv);
  const double quadratic_mass = 0.5 * (1.0 + h * alpha) * dv_m_dv;
  double linear_damping = 0.0, quadratic_damping = 0.0;
  if (beta > 0.0) {
    // h beta K v = damping_scale product (see assemble()); dv^T K dv from the system matrix:
    // dv^T J dv = (1 + h alpha) dv^T M dv + (h^2 + h beta) dv^T K dv.
    linear_damping = damping_scale * dv.dot(ctx.product);
    const VecX& dv_free = ctx.ccd_cut ? ctx.search_dv_free : ctx.dv_free;
    ctx.system_dv.noalias() = system_matrix() * dv_free;
    const double dv_j_dv = dv_free.dot(ctx.system_dv);
    quadratic_damping = 0.5 * h * beta * (dv_j_dv - (1.0 + h * alpha) * dv_m_dv) / (h * h + h * beta);
  }
  constexpr double kArmijo = 1e-4;
  constexpr int kMaxHalvings = 10;
  double step = first_step;
  for (int halving = 0; halving <= kMaxHalvings; ++halving) {
    ctx.trial_v = v + step * dv;
    ctx.trial_x = *ctx.x_hat + h * ctx.trial_v;
    if (assembler_.find_collapsed_edge(ctx.trial_x) < 0) {
      const EnergyBreakdown e = assembler_.potential_energies(ctx.trial_x, ctx.t1);
      const double change = step * (linear_mass + linear_damping) +
                             step * step * (quadratic_mass + quadratic_damping) + (e.incremental() - potential_at_v);
      // U is a sum of terms far larger than its change near convergence: a change within
      // round-off of them counts as no increase.
      const double noise = 64.0 * std::numeric_limits<double>::epsilon() *
                           (e.potential_magnitude() + std::abs(potential_at_v));
      if (change <= kArmijo * step * slope + noise) return {step, true, e};
    }
    ++ctx.report.line_search_halvings;
    step *= 0.5;
  }
  ++ctx.report.line_search_failures;
  return {1.0, false, EnergyBreakdown{}, false};
}

namespace {
template <int D>
void add_friction_elements(const std::vector<RodContactPair>& pairs, const VecX& x0, double mu, double slip,
                           ElementTable<RodFrictionTerm>& table) {
  for (const RodContactPair& pair : pairs) {
    Vec<4 * D> x;
    for (int k = 0; k < 4; ++k) x.template segment<D>(k * D) = x0.template segment<D>(pair.dofs[k]);
    if (const auto element = lag_rod_friction<D>(x, pair.constants, mu, slip)) table.add_coupling(pair.dofs, *element);
  }
}
/// The largest change of a friction element's force on its first segment (the gradient's
/// slots 0 + 1: W's weights there sum to 1) from x_before to x_before + h dv, over mu lambda.
template <int D>
double largest_friction_change(const ElementTable<RodFrictionTerm>& table, const VecX& x_hat, const VecX& v,
                               const VecX& taken, const VecX& dv, double h, double step) {
  double largest = 0.0;
  for (int k = 0; k < table.coupling_size(); ++k) {
    const auto& dofs = table.coupling_dofs(k);
    const RodFrictionConstants& c = table.coupling_constants(k);
    Vec<4 * D> before, after;
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < D; ++i) {
        const int dof = dofs[a] + i;
        before[a * D + i] = x_hat[dof] + h * (v[dof] - step * taken[dof]);
        after[a * D + i] = before[a * D + i] + h * dv[dof];
      }
    const Vec<4 * D> g0 = rod_friction_local<D>(before, c, false).gradient;
    const Vec<4 * D> g1 = rod_friction_local<D>(after, c, false).gradient;
    const Vec<D> change = (g1.template head<D>() + g1.template segment<D>(D)) -
                          (g0.template head<D>() + g0.template segment<D>(D));
    if (c.force > 0.0) largest = std::max(largest, change.norm() / c.force);
  }
  return largest;
}
}  // namespace

double ImplicitEuler::step_tolerance() const {
  // Sliding friction between rods: a step stopped at the tolerance lags the slide by up to
  // the tolerance every step, and the lag accumulates into the acceleration (a rod sliding
  // down rails at mu = 0.5, dt = 1/60 s: 5% to 16% slow at 1e-3 of its length, 0.07% at 1e-5).
  const bool friction = std::get<ElementTable<RodFrictionTerm>>(assembler_.terms()).coupling_size() > 0;
  return friction ? kFrictionToleranceScale * settings_.tolerance : settings_.tolerance;
}

bool ImplicitEuler::friction_converged(const StepContext& ctx) const {
  const auto& table = std::get<ElementTable<RodFrictionTerm>>(assembler_.terms());
  if (table.coupling_size() == 0) return true;
  const double change =
      model_.dimension == 2
          ? largest_friction_change<2>(table, *ctx.x_hat, ctx.v, ctx.search_direction(), ctx.dv, ctx.h, ctx.step_length)
          : largest_friction_change<3>(table, *ctx.x_hat, ctx.v, ctx.search_direction(), ctx.dv, ctx.h, ctx.step_length);
  return change <= kFrictionForceTolerance;
}

void ImplicitEuler::lag_friction(StepContext& ctx) {
  ElementTable<RodFrictionTerm>& table = assembler_.table<RodFrictionTerm>();
  table.clear_coupling();
  const double mu = model_.rod_contact.friction;
  if (!barrier_ || !(mu > 0.0)) return;
  const Clock::time_point start = Clock::now();
  // The pairs near each other at x0 (the barrier's own list, which the step's first assembly
  // rebuilds); those within g^ get an element. Sorted pairs, serial loop: the same elements
  // in the same order for every thread count.
  const VecX& x0 = *ctx.x0;
  const double acceleration = std::max(gravity_magnitude(model_), kMinimumAcceleration);
  const double slip = kStickingSpeedFraction * acceleration * ctx.h * ctx.h;  // e = eps_v h
  const std::vector<RodContactPair>& pairs = rod_contact_.find_pairs(x0, x0);
  if (model_.dimension == 2)
    add_friction_elements<2>(pairs, x0, mu, slip, table);
  else
    add_friction_elements<3>(pairs, x0, mu, slip, table);
  ctx.report.assembly_seconds += seconds_since(start);
}

void ImplicitEuler::load_contact_pairs(const VecX& x_from, const VecX& x_to, PathMotion motion) {
  ElementTable<RodContactTerm>& table = assembler_.table<RodContactTerm>();
  table.clear_coupling();
  for (const RodContactPair& pair : rod_contact_.find_pairs(x_from, x_to, motion))
    table.add_coupling(pair.dofs, pair.constants);
}

double ImplicitEuler::limit_step_by_ccd(StepContext& ctx) {
  // From the iterate x^ + h v to the full step x^ + h (v + dv): dv is zero on fixed DOFs.
  //
  // Rods are coupled only by the barrier's pairs within g^ at the iterate and by the step's
  // friction elements: the system is block diagonal over the groups of rods these pairs join.
  // Newton's direction restricted to one group is that group's own Newton direction, a descent
  // direction of Phi, and any positive scaling of each group's part still descends. So each
  // group goes the fraction CCD allows its own pairs, not the smallest fraction over the whole
  // scene: a pair pressed at a tiny gap slows its own rods, not a brush's every bristle. A pair
  // of two groups that would touch with their two fractions joins them (one group, the smaller
  // fraction), until no such pair is left: at worst one group and one fraction, the plain
  // CCD-limited step. Pairs found on no path stay apart: each group's path is part of the full
  // one, on which their swept boxes do not meet.
  const double h = ctx.h;
  const VecX& x_hat = *ctx.x_hat;
  const int dofs = static_cast<int>(x_hat.size());
  constexpr double kKeep = 0.1;
  ctx.ccd_cut = false;
  ctx.trial_x.resize(dofs);
  ctx.linearization_point.resize(dofs);
  for_each_entry(dofs, settings_.threads, [&](int i) {
    ctx.linearization_point[i] = x_hat[i] + h * ctx.v[i];
    ctx.trial_x[i] = x_hat[i] + h * (ctx.v[i] + ctx.dv[i]);
  });
  if (!ctx.trial_x.allFinite()) return 0.0;
  // Each group's path is a fraction of the whole: a pair clear of the path by its segments'
  // relative motion is clear while both go one fraction, and where two groups go different
  // fractions it is checked below.
  load_contact_pairs(ctx.linearization_point, ctx.trial_x, PathMotion::OneFraction);
  rod_contact_.pair_steps(ctx.linearization_point, ctx.trial_x, kKeep, pair_steps_, pair_active_);
  const DofLayout& layout = model_.layout;
  const int rod_count = layout.rod_count();
  const std::vector<RodContactPair>& pairs = rod_contact_.pairs();
  const int pair_count = static_cast<int>(pairs.size());
  pair_rods_.resize(pair_count);
  for (int k = 0; k < pair_count; ++k)
    pair_rods_[k] = {rod_contact_.segment_rod(pairs[k].segment_a), rod_contact_.segment_rod(pairs[k].segment_b)};
  auto rod_of = [&](int dof) { return layout.dof_owner(dof).first; };
  rod_group_.resize(rod_count);
  group_step_.assign(rod_count, 1.0);
  for (int r = 0; r < rod_count; ++r) rod_group_[r] = r;
  auto group_of = [&](int rod) {
    while (rod_group_[rod] != rod) rod = rod_group_[rod] = rod_group_[rod_group_[rod]];
    return rod;
  };
  auto join = [&](int rod_a, int rod_b) {
    const int a = group_of(rod_a), b = group_of(rod_b);
    if (a == b) return;
    rod_group_[std::max(a, b)] = std::min(a, b);
    group_step_[std::min(a, b)] = std::min(group_step_[a], group_step_[b]);
  };
  for (int k = 0; k < pair_count; ++k)
    if (pair_active_[k]) join(pair_rods_[k].first, pair_rods_[k].second);
  const std::vector<RelativelyClearPair>& clear_pairs = rod_contact_.relatively_clear_pairs();
  const int clear_count = static_cast<int>(clear_pairs.size());
  clear_rods_.resize(clear_count);
  for (int c = 0; c < clear_count; ++c)
    clear_rods_[c] = {rod_contact_.segment_rod(clear_pairs[c].segment_a), rod_contact_.segment_rod(clear_pairs[c].segment_b)};
  clear_near_.assign(clear_count, 0);
  const ElementTable<RodFrictionTerm>& friction = assembler_.table<RodFrictionTerm>();
  for (int k = 0; k < friction.coupling_size(); ++k)
    join(rod_of(friction.coupling_dofs(k)[0]), rod_of(friction.coupling_dofs(k)[2]));
  // Each group's fraction: the smallest over the pairs within it.
  auto settle = [&] {
    for (int k = 0; k < pair_count; ++k) {
      const int a = group_of(pair_rods_[k].first);
      if (a == group_of(pair_rods_[k].second)) group_step_[a] = std::min(group_step_[a], pair_steps_[k]);
    }
  };
  settle();
  for (bool joined = true; joined;) {
    joined = false;
    for (int k = 0; k < pair_count; ++k) {
      const int a = group_of(pair_rods_[k].first), b = group_of(pair_rods_[k].second);
      if (a == b) continue;
      const double step_a = group_step_[a], step_b = group_step_[b];
      // Both whole, or cut alike: the pair's own bound holds for that fraction.
      if (step_a == step_b && step_a <= pair_steps_[k]) continue;
      if (rod_contact_.pair_step(ctx.linearization_point, ctx.trial_x, k, step_a, step_b, kKeep) >= 1.0) continue;
      join(a, b);
      joined = true;
    }
    // A pair left out as clear only by its segments' motion relative to each other (a dragged
    // brush's neighbours) is clear while both go one fraction; at two fractions its rods part
    // by the difference. Unless it still stays clear of the barrier, it is checked as a listed
    // pair is (and listed for the search, below).
    for (int c = 0; c < clear_count; ++c) {
      const int a = group_of(clear_rods_[c].first), b = group_of(clear_rods_[c].second);
      if (a == b || group_step_[a] == group_step_[b]) continue;
      const RelativelyClearPair& pair = clear_pairs[c];
      if (!clear_near_[c] &&
          rod_contact_.clear_at_fractions(ctx.linearization_point, ctx.trial_x, pair, group_step_[a], group_step_[b]))
        continue;
      clear_near_[c] = 1;
      if (rod_contact_.relatively_clear_step(ctx.linearization_point, ctx.trial_x, pair, group_step_[a],
                                             group_step_[b], kKeep) >= 1.0)
        continue;
      join(a, b);
      joined = true;
    }
    if (joined) settle();
  }
  double smallest = 1.0, largest = 0.0;
  for (int r = 0; r < rod_count; ++r) {
    const double step = group_step_[group_of(r)];
    smallest = std::min(smallest, step);
    largest = std::max(largest, step);
  }
  if (smallest < 1.0) ++ctx.report.ccd_limited;
  // The relatively clear pairs that may come near at their groups' two fractions join the
  // barrier's pairs, whose energy the line search evaluates along the cut path.
  if (smallest != largest) {
    ElementTable<RodContactTerm>& table = assembler_.table<RodContactTerm>();
    for (int c = 0; c < clear_count; ++c) {
      if (!clear_near_[c]) continue;
      const int a = group_of(clear_rods_[c].first), b = group_of(clear_rods_[c].second);
      if (a == b || group_step_[a] == group_step_[b]) continue;
      const RodContactPair& pair = rod_contact_.list_relatively_clear(clear_pairs[c]);
      table.add_coupling(pair.dofs, pair.constants);
    }
  }
  // One fraction for all (a single group, or all cut alike): the plain step bound.
  if (smallest == largest) return smallest;
  // Newton's own direction stays in dv (the convergence tests measure it); the search goes
  // along search_dv.
  ctx.ccd_cut = true;
  ctx.search_dv = ctx.dv;
  ctx.search_dv_free = ctx.dv_free;
  for (int r = 0; r < rod_count; ++r) {
    const double step = group_step_[group_of(r)];
    if (step == 1.0) continue;
    const auto [first, last] = layout.rod_dof_range(r);
    for (int dof = first; dof < last; ++dof) {
      ctx.search_dv[dof] *= step;
      const int f = layout.free_index(dof);
      if (f >= 0) ctx.search_dv_free[f] *= step;
    }
  }
  // Each group's part descends when the solve is exact; CG's is within its tolerance, so a
  // group near rest could ascend a little and, with the others cut hard, tip the whole. Then
  // the one fraction for all, along Newton's direction: the smallest over every pair. The test
  // is for the line search's sake, and with vertices held by colliders there is none
  // (line_search): the constraints prescribe those vertices' velocities, so r . dv says nothing
  // about descent there (a tip carried into the paper is lifted against its load), and the test
  // failed in every iteration of a pressed brush's touchdown. One pair pressed at a tiny gap
  // then cut the whole brush to its fraction (the 1000-bristle tilted brush: 0.5% a step for
  // 25 iterations, tips 4.8 radii in the paper); each group now goes its own fraction
  // (docs/contact.md, "A brush held at a painter's angle").
  if (!colliders_hold_vertices() && !(ctx.rhs_free.dot(ctx.search_dv_free) > 0.0)) {
    ctx.ccd_cut = false;
    double step = 1.0;
    for (double pair_step : pair_steps_) step = std::min(step, pair_step);
    return step;
  }
  // Every group that moves cut to nothing (a pair already touching): the iteration takes
  // nothing, as the one fraction for all did, so that run_converged sees the stall.
  if (ctx.search_dv_free.lpNorm<Eigen::Infinity>() == 0.0) {
    ctx.ccd_cut = false;
    return 0.0;
  }
  return 1.0;
}

void ImplicitEuler::carry_with_handles(StepContext& ctx) {
  // Newton's first iterate puts the fixed vertices at their prescribed ends. Free vertices left
  // at x0 would let a handle drive its rods' root segments into the free segments of
  // neighbours (a brush pressed down: the roots descend onto bristles bent beside them), with
  // nothing checking that move. So the free vertices of a handled rod start where the handle's
  // rigid motion over the step takes them (Rod::carry_rotation, carry_translation). Over a
  // whole step that is the exact rigid motion, the one the fixed vertices end at, so two rods
  // of one handle keep their distances to round-off whatever the gap; over part of a step
  // (a split step) it is the motion's chord, x0 + h (M x0 - x0) / T, the line the fixed
  // vertices follow. CCD over x0 -> that start, for pairs of rods not moved together, catches
  // what a carry would still hit (another handle's rods, free rods); the free vertices then go
  // the clear fraction of the way.
  const DofLayout& layout = model_.layout;
  const VecX& x0 = *ctx.x0;
  const int D = model_.dimension;
  const int rod_count = static_cast<int>(model_.rods.size());
  bool carried = false;
  for (int r = 0; r < rod_count; ++r) {
    const Rod& rod = model_.rods[r];
    if (rod.carry_group < 0 || !(rod.carry_duration > 0.0)) continue;
    const bool whole_step = std::abs(ctx.h - rod.carry_duration) <= 1e-12 * rod.carry_duration;
    for (int i = 0; i < rod.vertex_count(); ++i) {
      const int dof = layout.vertex_dof(r, i);
      if (layout.free_index(dof) < 0) continue;
      Vec3 x = Vec3::Zero();
      x.head(D) = x0.segment(dof, D);
      const Vec3 moved = rod.carry_rotation * x + rod.carry_translation;
      const Vec3 end = whole_step ? moved : Vec3(x + (ctx.h / rod.carry_duration) * (moved - x));
      for (int k = 0; k < D; ++k) ctx.v[dof + k] = (end[k] - x[k]) / ctx.h;
      carried = true;
    }
  }
  if (!carried) return;
  // Only pairs of rods in different carry groups (or in none) are checked below: where every
  // rod is in one group (one handle holds the whole brush) there are none, and the pairs'
  // search over the carry's path (a tenth of a brush's quiet step) would find nothing to check.
  const int first_group = model_.rods.empty() ? -1 : model_.rods.front().carry_group;
  const bool one_group = first_group >= 0 && std::all_of(model_.rods.begin(), model_.rods.end(), [&](const Rod& rod) {
                           return rod.carry_group == first_group;
                         });
  if (one_group) return;
  const Clock::time_point start = Clock::now();
  ctx.trial_x.resize(x0.size());
  for_each_entry(static_cast<int>(x0.size()), settings_.threads, [&](int i) { ctx.trial_x[i] = x0[i] + ctx.h * ctx.v[i]; });
  double t = 0.0;
  if (ctx.trial_x.allFinite()) {
    load_contact_pairs(x0, ctx.trial_x);
    auto group = [&](int dof) { return model_.rods[layout.dof_owner(dof).first].carry_group; };
    t = rod_contact_.max_step(x0, ctx.trial_x, 0.1, [&](const RodContactPair& pair) {
      const int g = group(pair.dofs[0]);
      return g < 0 || g != group(pair.dofs[2]);
    });
  }
  if (t < 1.0) {
    for (int dof = 0; dof < layout.dof_count(); ++dof)
      if (layout.free_index(dof) >= 0) ctx.v[dof] *= t;
    ++ctx.report.ccd_limited;
  }
  ctx.report.assembly_seconds += seconds_since(start);
}

bool ImplicitEuler::deep_iterate_may_go_on(const StepContext& ctx, int k) const {
  // kContactIterations is for the constraint solver, whose iterates can switch active sets and
  // stick-slip states back and forth without end. With rod contact every iterate is feasible for
  // the barrier and the last the furthest along, and an iterate may still sit deep in a collider
  // because CCD cut each iteration short: the handle's rigid carry takes the tips of a pressed
  // brush into the paper, and each cut iteration lifts them only part of the way (a brush at a
  // painter's angle: 7.3 radii deep after 8 iterations, 0.53 after 25; docs/contact.md, "A
  // brush held at a painter's angle", "More iterations while a tip is in the paper"). Such a
  // step goes on, as far as
  // max_newton_iterations; one only stalled, its vertices out, stops at kContactIterations as
  // before (more iterations there bought hair_on_sphere one converged step for 2.8 times the time).
  return barrier_ && k < settings_.max_newton_iterations && contact_.max_penetration_fraction(ctx.x1) > kDeepInCollider;
}

void ImplicitEuler::log_iteration(const StepContext& ctx, int ccd_limited_before, double seconds) {
  IterationRecord record;
  record.time = ctx.t1;
  record.h = ctx.h;
  record.iteration = ctx.iteration;
  record.partial = ctx.partial;
  record.rods_solved = model_.layout.rod_count();
  if (ctx.partial) record.rods_solved = static_cast<int>(std::count(active_rods_.begin(), active_rods_.end(), 1));
  const int worst_dof = worst_correction_dof_;  // the failure messages' DOF stays the solver's own
  record.correction = relative_correction(ctx, ctx.dv_free);
  worst_correction_dof_ = worst_dof;
  record.tolerance = step_tolerance();
  record.ccd_limited = ctx.report.ccd_limited > ccd_limited_before;
  record.step_length = ctx.step_length;
  record.forces_consistent = ctx.forces_consistent;
  record.seconds = seconds;
  if (contact_.enabled()) {
    // The iterate's end positions (x1 is not yet updated after the first solve).
    const VecX& x_hat = *ctx.x_hat;
    logged_positions_.resize(x_hat.size());
    for (Eigen::Index i = 0; i < x_hat.size(); ++i) logged_positions_[i] = x_hat[i] + ctx.h * ctx.v[i];
    record.deepest_in_collider = std::max(0.0, contact_.max_penetration_fraction(logged_positions_));
  }
  iteration_log_(record);
}

bool ImplicitEuler::path_may_split() const {
  return settings_.converged() && !last_resort_ && split_depth_ < kPathSplits;
}

bool ImplicitEuler::end_at_clear_iterate(StepContext& ctx) {
  // A step whose straight motion is not clear and cannot be split again ends at the latest of
  // its Newton iterates whose own straight motion from x0 is (the iterates run_converged keeps
  // then; the last is x1). Each iterate is a point the barrier balanced, its pairs at the gaps
  // Newton left them; the cut below ends where one pair has closed part of its gap, and where
  // successive substeps were cut so, one pair's gap halved substep after substep (the
  // 1000-bristle tilted brush lifting off the paper: 7e-3 g^ to 1e-7 g^ over 16 substeps of
  // 1/960 s, and the run then failed in CG). Tried from the latest back, halving the index: a
  // few CCD passes.
  const VecX& x0 = *ctx.x0;
  const VecX& x_hat = *ctx.x_hat;
  const double h = ctx.h;
  const int dofs = static_cast<int>(x0.size());
  constexpr double kPathKeep = 1e-3;  // as clear_path's test
  for (int k = ctx.contact_iterate_count - 2; k >= 0; k = k > 0 ? k / 2 : -1) {
    const VecX& v = ctx.contact_iterates[k];
    ctx.trial_x.resize(dofs);
    for_each_entry(dofs, settings_.threads, [&](int i) { ctx.trial_x[i] = x_hat[i] + h * v[i]; });
    if (!ctx.trial_x.allFinite()) continue;
    load_contact_pairs(x0, ctx.trial_x, PathMotion::StraightLine);
    if (rod_contact_.max_step_reversed(x0, ctx.trial_x, kPathKeep) < 1.0) continue;
    ctx.v = v;
    ctx.x1.swap(ctx.trial_x);
    ctx.end_energies_known = false;
    ctx.report.converged = false;
    ++ctx.report.ccd_limited;
    return true;
  }
  return false;
}

bool ImplicitEuler::clear_path(StepContext& ctx) {
  // Each Newton iterate was reached from the last without a touch, but the step's motion is
  // the straight line x0 -> x1, which can cut through a rod the iterates went around (a rod
  // rolling off another at dt = 1/24 s). CCD over that line for the pairs whose order swaps
  // (their closest-point direction reverses, as it does for a pair that passed through the
  // other; CCD's bound would only creep on pairs sliding at a tiny gap). Where it is not
  // clear, attempt() has the converged solver split the step; where the step is not to be
  // split, the step ends part of the way, apart, counted as unconverged (below).
  const VecX& x0 = *ctx.x0;
  const Clock::time_point start = Clock::now();
  load_contact_pairs(x0, ctx.x1, PathMotion::StraightLine);
  constexpr double kPathKeep = 1e-3;  // end no closer than this fraction of the start gap
  double t = rod_contact_.max_step_reversed(x0, ctx.x1, kPathKeep);
  // The end the cut takes, x0 + t (x1 - x0), is a point no iterate was: the straight path to
  // it must be clear for every pair, not only the reversed ones (a pair beside the one that
  // went around can lie across that line). So the cut is CCD's over all pairs.
  if (t < 1.0) t = std::min(t, rod_contact_.max_step(x0, ctx.x1, kPathKeep));
  // The level the next step starts at (ImplicitEuler::step) follows where paths were not clear,
  // split or cut.
  if (t < 1.0) unclear_path_depth_ = std::max(unclear_path_depth_, split_depth_);
  if (t < 1.0 && !path_may_split() && end_at_clear_iterate(ctx)) {
    t = 1.0;
  } else if (t < 1.0 && !path_may_split()) {
    // The cut starts where Newton's iterations started, the carried start: fixed vertices at
    // their ends, free ones moved with their handle, apart (carry_with_handles). The free
    // vertices go the fraction of the way from there to x1 that CCD over all pairs clears, so
    // the whole motion is the carry, then that line: no pair touches on it. Cut from x0
    // instead, the fixed vertices went all the way and the free ones a fraction: a brush
    // lifting off the paper (`bristle bench --brush --tilt 0.9 --rows 25 --columns 10`,
    // t = 0.9375 s) had its root edges stretched by 15% in one step, 93% after a few, until a
    // solve failed; and that motion was one CCD never checked.
    //
    // The cut ends where every pair keeps at least half its gap at the carried start
    // (kCutKeep), not 1e-3 of it (kPathKeep, which only asks whether the line is clear): the
    // end is final, no barrier acts on it, and with 1e-3 the cuts of successive substeps took a
    // pair of the tilted 10 x 40 brush at touchdown from 0.12 g^ to 1.3e-3, 1.5e-6 and 1.7e-9 g^
    // (3.5e-15 m). Its barrier stiffness there, about kappa (g^ / g)^2, put entries of 8e11
    // beside 2e-3 on the system's diagonal, a matrix that is no longer positive definite in
    // doubles, and CG failed (docs/contact.md, "Not SPD in floating point").
    constexpr double kCutKeep = 0.5;
    const DofLayout& layout = model_.layout;
    const VecX& x_hat = *ctx.x_hat;
    const VecX& from = ctx.carried_start;
    load_contact_pairs(from, ctx.x1);
    const double cut = rod_contact_.max_step(from, ctx.x1, kCutKeep);
    if (cut < 1.0) {
      for (int dof = 0; dof < layout.dof_count(); ++dof)
        if (layout.free_index(dof) >= 0) {
          ctx.x1[dof] = from[dof] + cut * (ctx.x1[dof] - from[dof]);
          ctx.v[dof] = (ctx.x1[dof] - x_hat[dof]) / ctx.h;
        }
      ctx.end_energies_known = false;
      ctx.report.converged = false;
      ++ctx.report.ccd_limited;
    }
    t = 1.0;  // the step ends where it is clear
  }
  ctx.report.assembly_seconds += seconds_since(start);
  return t >= 1.0;
}

void ImplicitEuler::line_search(StepContext& ctx) {
  // Not while contact constraints are held (dv satisfies them exactly; a shortened step would
  // not). For an iteration linearised at the start, Phi(v) needs U at x^ + h v, one more energy
  // evaluation; its slope is that of the linearised residual, r . dv < 0.
  // With rod-rod contact every step is first limited to what CCD allows (no capsule may touch
  // another on the way), and searched from there; never linearised at the start.
  const double h = ctx.h, beta = model_.damping_stiffness;
  ctx.step_length = 1.0;
  ctx.ccd_cut = false;
  ctx.end_energies_known = false;
  ctx.forces_consistent = true;
  const bool in_contact = colliders_hold_vertices();
  const bool barrier = barrier_;
  double max_step = 1.0;
  if (barrier) {
    const Clock::time_point ccd_start = Clock::now();
    max_step = limit_step_by_ccd(ctx);
    ctx.step_length = max_step;
    ctx.report.assembly_seconds += seconds_since(ccd_start);
  }
  if (settings_.line_search && !in_contact && max_step > 0.0) {
    const Clock::time_point search_start = Clock::now();
    // Phi's potential part: with friction between rods, the lagged friction potential too.
    double potential_at_v = ctx.potential_at_lin.incremental();  // x_lin = x^ + h v, unless at the start
    bool searchable = true;
    if (ctx.at_start) {
      ctx.trial_x = *ctx.x_hat + h * ctx.v;
      searchable = assembler_.find_collapsed_edge(ctx.trial_x) < 0;
      if (searchable) potential_at_v = assembler_.potential_energies(ctx.trial_x, ctx.t1).incremental();
    }
    if (searchable) {
      // K v = product / (h^2 + h beta) at the start (w = (h^2 + h beta) v^), product / (h beta) after.
      const double damping_scale = ctx.at_start ? h * beta / (h * h + h * beta) : 1.0;
      // r . dv < 0: J is SPD (cut by group: checked in limit_step_by_ccd)
      const double slope = -ctx.rhs_free.dot(ctx.ccd_cut ? ctx.search_dv_free : ctx.dv_free);
      const LineSearch search = search_phi(ctx, potential_at_v, slope, damping_scale, max_step);
      ctx.step_length = search.step;
      // A failed search takes nothing: no iterate may raise Phi. Newton's directions descend
      // on Phi (J is SPD and r = grad Phi), so for them failing means the change is lost in
      // round-off. Baraff-Witkin's first direction uses the residual linearised at x^ instead
      // of Phi's gradient at x^ + h v^, and can point uphill when the rod turns fast: the next
      // iteration then starts over from v^, as Newton from x^ + h v^. The single-solve solver
      // (newton_iterations 1) has no next iteration and takes its solve whole, as Baraff and
      // Witkin do.
      const bool more = settings_.converged() || ctx.iteration + 1 < settings_.newton_iterations;
      // With rod-rod contact a failed search takes nothing either: a full step could touch.
      if (!search.found) ctx.step_length = more || !ctx.at_start || barrier ? 0.0 : 1.0;
      ctx.end_energies_known = search.energies_known;
      ctx.end_energies = search.energies;
    }
    ctx.report.assembly_seconds += seconds_since(search_start);
  }
  // The same arithmetic as the line search's trial, bit for bit.
  const double s = ctx.step_length;
  const VecX& direction = ctx.search_direction();
  for_each_entry(static_cast<int>(ctx.v.size()), settings_.threads, [&](int i) { ctx.v[i] += s * direction[i]; });
  if (barrier) {
    // The pairs' force estimates take their Newton values at the full step (primal-dual;
    // RodContact::update_forces), whatever fraction of it the search took, none included.
    // linearization_point is still x^ + h v before the step (limit_step_by_ccd). Where CCD cut
    // the step or the search shortened it, the iterate taken too: a pair that came inside g^
    // there gets its estimate for the rest of the step at once.
    const Clock::time_point start = Clock::now();
    ctx.trial_x = ctx.linearization_point + h * ctx.dv;
    ctx.forces_consistent = false;
    if (ctx.trial_x.allFinite()) {
      const VecX* taken = nullptr;
      if (ctx.ccd_cut || s < 1.0) {
        taken_x_.resize(ctx.v.size());
        for_each_entry(static_cast<int>(ctx.v.size()), settings_.threads,
                       [&](int i) { taken_x_[i] = (*ctx.x_hat)[i] + h * ctx.v[i]; });
        taken = &taken_x_;
      }
      const RodContact::ForceUpdate update = rod_contact_.update_forces(ctx.linearization_point, ctx.trial_x, taken);
      if (update.raised) ctx.stiffness_raised = true;
      ctx.forces_consistent = update.consistent;
    }
    ctx.report.assembly_seconds += seconds_since(start);
  }
}

void ImplicitEuler::projected_line_search(StepContext& ctx) {
  // Phi at the current iterate (x_lin = x^ + h v) and at length-corrected trials
  // v_s = (P(x^ + h (v + s dv)) - x^) / h, P the length correction about x_lin. Near the answer
  // P moves nothing (the edges already have the lengths the linearisation sees), so the fixed
  // point is backward Euler's; far from it P removes the stretch that the linearisation adds
  // to every turning edge, which is what makes plain Newton's line search cut the step.
  const Clock::time_point start = Clock::now();
  const VecX& x_hat = *ctx.x_hat;
  const double h = ctx.h;
  const double phi_current = phi_quadratic(ctx, ctx.v) + ctx.potential_at_lin.incremental();
  constexpr int kMaxHalvings = 6;
  double s = 1.0;
  ctx.end_energies_known = false;
  for (int halving = 0; halving <= kMaxHalvings; ++halving) {
    ctx.trial_v = ctx.v + s * ctx.dv;
    ctx.trial_x = x_hat + h * ctx.trial_v;
    const LengthCorrection::Outcome corrected = length_correction_.apply(*ctx.x_lin, ctx.trial_x);
    ctx.report.length_correction_iterations = std::max(ctx.report.length_correction_iterations, corrected.iterations);
    if (ctx.trial_x.allFinite() && assembler_.find_collapsed_edge(ctx.trial_x) < 0) {
      const DofLayout& layout = model_.layout;
      for (int dof = 0; dof < layout.dof_count(); ++dof)
        if (layout.free_index(dof) >= 0) ctx.trial_v[dof] = (ctx.trial_x[dof] - x_hat[dof]) / h;
      const EnergyBreakdown e = assembler_.potential_energies(ctx.trial_x, ctx.t1);
      const double phi = phi_quadratic(ctx, ctx.trial_v) + e.incremental();
      const double noise = 64.0 * std::numeric_limits<double>::epsilon() *
                           (e.potential_magnitude() + std::abs(phi_current));
      if (phi <= phi_current + noise) {
        ctx.step_length = s;
        ctx.v.swap(ctx.trial_v);
        ctx.x1.swap(ctx.trial_x);
        ctx.end_energies = e;
        ctx.end_energies_known = true;
        ctx.report.assembly_seconds += seconds_since(start);
        return;
      }
    }
    ++ctx.report.line_search_halvings;
    s *= 0.5;
  }
  // No decrease along the corrected path: the plain Newton step (a descent direction of Phi).
  ++ctx.report.line_search_failures;
  ctx.report.assembly_seconds += seconds_since(start);
  line_search(ctx);
  ctx.x1.resize(x_hat.size());
  for_each_entry(static_cast<int>(x_hat.size()), settings_.threads, [&](int i) { ctx.x1[i] = x_hat[i] + h * ctx.v[i]; });
}

// ---------------------------------------------------------------------------------------------
// Stage: length correction.

void ImplicitEuler::correct_lengths(StepContext& ctx) {
  const DofLayout& layout = model_.layout;
  const VecX& x_hat = *ctx.x_hat;
  const double h = ctx.h;
  ctx.x1.resize(x_hat.size());
  for_each_entry(static_cast<int>(x_hat.size()), settings_.threads, [&](int i) { ctx.x1[i] = x_hat[i] + h * ctx.v[i]; });
  const LengthCorrection::Outcome corrected = length_correction_.apply(*ctx.x_lin, ctx.x1);
  ctx.report.length_correction_iterations = std::max(ctx.report.length_correction_iterations, corrected.iterations);
  ctx.report.uncorrected_rods = std::max(ctx.report.uncorrected_rods, corrected.uncorrected_rods);
  for_each_entry(layout.dof_count(), settings_.threads, [&](int dof) {
    if (layout.free_index(dof) >= 0) ctx.v[dof] = (ctx.x1[dof] - x_hat[dof]) / h;
  });
  ctx.end_energies_known = false;
}

// ---------------------------------------------------------------------------------------------
// Stage: convergence test.

double ImplicitEuler::relative_correction(const StepContext& ctx, const VecX& dv_free) const {
  const DofLayout& layout = model_.layout;
  // A max and then the first DOF reaching it: the same answer for every thread count.
  const int dofs = layout.dof_count();
  const int threads = settings_.threads;
  auto relative = [&](int dof) { return dof_correction(ctx, dv_free, dof); };
  double worst = 0.0;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && dofs > kParallelDofs) reduction(max : worst)
  for (int dof = 0; dof < dofs; ++dof) worst = std::max(worst, relative(dof));
  worst_correction_dof_ = -1;
  if (worst > 0.0)
    for (int dof = 0; dof < dofs; ++dof)
      if (relative(dof) == worst) {
        worst_correction_dof_ = dof;
        break;
      }
  return worst;
}

double ImplicitEuler::dof_correction(const StepContext& ctx, const VecX& dv_free, int dof) const {
  const int f = model_.layout.free_index(dof);
  if (f < 0 || !(dof_length_[dof] > 0.0)) return 0.0;
  const double r = std::abs(ctx.h * dv_free[f]) / dof_length_[dof];
  return std::isfinite(r) ? r : std::numeric_limits<double>::infinity();
}

int ImplicitEuler::rods_above_tolerance(const StepContext& ctx, const VecX& dv_free) const {
  const DofLayout& layout = model_.layout;
  const double tolerance = step_tolerance();
  int above = 0;
  for (int r = 0; r < layout.rod_count(); ++r) {
    const auto [begin, end] = layout.rod_dof_range(r);
    for (int dof = begin; dof < end; ++dof)
      if (dof_correction(ctx, dv_free, dof) > tolerance) {
        ++above;
        break;
      }
  }
  return above;
}

bool ImplicitEuler::test_convergence(StepContext& ctx) {
  // The residual at v: r = M (v - v^) + h alpha M v + h grad U(x^ + h v) (no stiffness
  // damping here: run_converged iterates instead), and the simplified Newton correction
  // J_guess^-1 r with the factors the guess's solve kept. Near the answer it is Newton's
  // correction up to the change of J over the step (small where the guess is good; where it
  // is not, the correction is large and Newton iterates).
  // With coupling elements the kept factors are the rods' blocks only, not J: no estimate
  // from them; Newton iterates and tests its own corrections.
  if (coupled_) return false;
  const DofLayout& layout = model_.layout;
  const VecX& v_hat = *ctx.v_hat;
  const double h = ctx.h, alpha = model_.damping_mass;
  const Clock::time_point start = Clock::now();
  // The fixed DOFs where the commit puts them (x0 + dt v0, commit()): x^ + h v may differ from
  // that in its last bit (BDF2's x^) or in the sign of a zero (v = -0 plus a zero correction),
  // and the positions tested are then the ones committed, bit for bit, so that the commit can
  // take the frames this pass carries (SystemAssembler::advance).
  for (const int dof : fixed_dofs_) ctx.x1[dof] = (*ctx.x0)[dof] + ctx.dt * (*ctx.v0)[dof];
  const VecX& x = ctx.x1;
  EnergyBreakdown energies;
  assembler_.assemble(x, ctx.t1, system_projection(), 0.0, ctx.gradient, nullptr, nullptr, &energies);
  ctx.end_energies = energies;
  ctx.end_energies_known = true;
  ctx.rhs_free.resize(layout.free_dof_count());
  for_each_entry(layout.dof_count(), settings_.threads, [&](int dof) {
    const int f = layout.free_index(dof);
    if (f >= 0) ctx.rhs_free[f] = -(mass_[dof] * ((1.0 + h * alpha) * ctx.v[dof] - v_hat[dof]) + h * ctx.gradient[dof]);
  });
  ctx.report.assembly_seconds += seconds_since(start);
  const Clock::time_point solve_start = Clock::now();
  auto& preconditioner = solver_.preconditioner();
  const long applications = preconditioner.applications();
  ctx.dv_free = ctx.rhs_free;
  preconditioner.solve_in_place(ctx.dv_free);
  ctx.report.cg_iterations -= static_cast<int>(preconditioner.applications() - applications);  // not CG's
  ctx.report.solve_seconds += seconds_since(solve_start);
  if (!ctx.dv_free.allFinite()) return false;
  ctx.report.correction = relative_correction(ctx, ctx.dv_free);
  return ctx.report.correction <= settings_.tolerance;
}

// ---------------------------------------------------------------------------------------------
// Stage: energy test.

bool ImplicitEuler::test_energy(StepContext& ctx) {
  if (ctx.driven) return true;
  if (ctx.stiffness_raised) {
    // A pair's barrier stiffness was raised during the step (after the line search that
    // evaluated the end's energies): both ends' energies with it.
    ctx.energy_start = energies(State{*ctx.x0, *ctx.v0, ctx.t0}).total();
    ctx.end_energies = assembler_.potential_energies(ctx.x1, ctx.t1);
    ctx.end_energies.contact = rod_contact_.energy(ctx.x1);
    ctx.end_energies_known = true;
    ctx.stiffness_raised = false;
  }
  if (!ctx.end_energies_known) {
    ctx.end_energies = assembler_.potential_energies(ctx.x1, ctx.t1);
    ctx.end_energies_known = true;
  }
  // Kinetic energy with the velocity the state will carry (fixed DOFs: their prescribed one).
  const DofLayout& layout = model_.layout;
  const VecX& v0 = *ctx.v0;
  // Summed in fixed chunks, added in order: the same bits for every thread count.
  constexpr int kChunks = 64;
  const int dofs = layout.dof_count();
  double chunk_sums[kChunks];
  const int threads = settings_.threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && dofs > kParallelDofs)
  for (int c = 0; c < kChunks; ++c) {
    double sum = 0.0;
    const int end = static_cast<int>(static_cast<long>(dofs) * (c + 1) / kChunks);
    for (int dof = static_cast<int>(static_cast<long>(dofs) * c / kChunks); dof < end; ++dof) {
      const double v = layout.free_index(dof) >= 0 ? ctx.v[dof] : v0[dof];
      sum += mass_[dof] * v * v;
    }
    chunk_sums[c] = sum;
  }
  double kinetic = 0.0;
  for (const double sum : chunk_sums) kinetic += sum;
  ctx.end_energies.kinetic = 0.5 * kinetic;
  const EnergyBreakdown& e = ctx.end_energies;
  // Round-off of the sums, and a floor where they reach the subnormal range (an undriven rod
  // whose energy has drained to 1e-300 J and below, as a twisted rod freed at one end does):
  // there the energies carry no significant digits and a "gain" of 1e-317 J is not one.
  auto noise_of = [](const EnergyBreakdown& b, double other) {
    constexpr double kSubnormalFloor = std::numeric_limits<double>::min() / std::numeric_limits<double>::epsilon();
    return 64.0 * std::numeric_limits<double>::epsilon() *
               (std::abs(b.kinetic) + b.potential_magnitude() + std::abs(other)) +
           kSubnormalFloor;
  };
  // BDF2 is not dissipative step by step: on a swinging strand its energy rises by ~1e-5 of
  // m g L in one step and falls in the next (the L-stability it has damps over two steps). It
  // is held to the larger of the energies at the start of this step and of the last one.
  double start = ctx.energy_start;
  if (ctx.bdf2 && ctx.energy_previous_known) start = std::max(start, ctx.energy_previous);
  ctx.energy_next_previous = ctx.energy_start;  // the next step's "energy one step back"
  ctx.energy_next_previous_known = true;
  ctx.energy_gain = e.total() - start;
  return e.total() - start <= energy_allowance(ctx) + noise_of(e, start);
}

// An unconverged step the solver ends at its last (or best) iterate, rather than failing the
// run, is a step whose Newton iterations stalled in the non-smooth contact problem: its end is
// near the converged one, not far from it. An end whose rods carry a thousand times more
// kinetic and elastic energy than the step could have given them is a solve that went astray:
// a fuzzed twisted flat rod on friction-1 colliders went from 3e-5 J to 1e3 J in one such step
// and to 1e272 J four steps later, every step accepted (docs/physics.md, the step's item 9,
// "A step taken unconverged must not have diverged"). Such an end fails the attempt, and the
// step is split as any failed step; at the deepest split the run fails there, naming the rod.
//
// What the step could give the rods, each term a bound: their kinetic and elastic energy at
// its start; sum m |g| L (energy_scale_) and the fall of each free vertex over the step,
// m |g| (|v0| h + |g| h^2); each point load's work over its rod's length and over the step;
// and every free DOF moving at the fastest driver's speed (a moving fixed DOF, a moving
// collider's surface at the rods' vertices). Kinetic and elastic energies, not the total: they
// have no arbitrary zero, as gravity's and the loads' potentials have.
double ImplicitEuler::step_energy_scale(const StepContext& ctx) const {
  const DofLayout& layout = model_.layout;
  const VecX& x0 = *ctx.x0;
  const VecX& v0 = *ctx.v0;
  const double h = ctx.h;
  const double g = gravity_magnitude(model_);
  double scale = energy_scale_ + assembler_.potential_energies(x0, ctx.t0).elastic();
  // A handle strains the rods it drags: the elastic energy with its fixed DOFs where the step
  // takes them and the free ones left at the start (a stiff bristle whose root moves by u dt).
  bool fixed_moving = false;
  for (const int dof : fixed_dofs_) fixed_moving = fixed_moving || v0[dof] != 0.0;
  if (fixed_moving) {
    VecX driven = x0;
    for (const int dof : fixed_dofs_) driven[dof] += ctx.dt * v0[dof];
    scale += assembler_.potential_energies(driven, ctx.t1).elastic();
  }
  double driver_speed = 0.0;   // [m/s]
  double driver_spin = 0.0;    // [rad/s]
  double position_mass = 0.0;  // free position DOFs' masses summed [kg]
  double twist_inertia = 0.0;  // free twist DOFs' [kg m^2]
  for (int r = 0; r < layout.rod_count(); ++r) {
    const Rod& rod = model_.rods[r];
    for (int i = 0; i < rod.vertex_count(); ++i) {
      const int dof = layout.vertex_dof(r, i);
      for (int d = 0; d < model_.dimension; ++d) {
        const double m = mass_[dof + d];
        const double speed = std::abs(v0[dof + d]);
        if (layout.free_index(dof + d) < 0) {
          driver_speed = std::max(driver_speed, speed);
          continue;
        }
        scale += 0.5 * m * speed * speed + m * g * (speed * h + g * h * h);
        position_mass += m;
      }
    }
    for (int j = 0; j < rod.edge_count(); ++j) {
      const int dof = layout.edge_dof(r, j);
      if (dof < 0) continue;
      if (layout.free_index(dof) < 0) {
        driver_spin = std::max(driver_spin, std::abs(v0[dof]));
        continue;
      }
      scale += 0.5 * mass_[dof] * v0[dof] * v0[dof];
      twist_inertia += mass_[dof];
    }
  }
  for (const Collider& collider : model_.colliders) {
    if (collider.handle.empty()) continue;
    const Mat3 turn = collider.step_rotation - Mat3::Identity();
    for (int vertex = 0; vertex < layout.vertex_count(); ++vertex) {
      const int dof = layout.vertex_dof(vertex);
      Vec3 x = Vec3::Zero();
      for (int d = 0; d < model_.dimension; ++d) x[d] = x0[dof + d];
      driver_speed = std::max(driver_speed, (turn * x + collider.step_translation).norm() / ctx.dt);
    }
  }
  for (const PointLoad& load : model_.loads) {
    const double force = load.force_at(ctx.t1).norm();
    const Rod& rod = model_.rods[load.rod];
    const int dof = layout.vertex_dof(load.rod, load.vertex);
    const double speed = v0.segment(dof, model_.dimension).norm();
    const double mass = mass_[dof];
    scale += force * (rod.rest_length() + speed * h) + (mass > 0.0 ? force * force * h * h / mass : 0.0);
  }
  scale += 0.5 * position_mass * driver_speed * driver_speed + 0.5 * twist_inertia * driver_spin * driver_spin;
  return scale;
}

bool ImplicitEuler::end_unconverged(StepContext& ctx, int unconverged_rods) {
  if (find_non_finite(ctx.x1, ctx.report, "position") || find_collapsed_edge(ctx.x1, ctx.report)) return false;
  // A thousand: the most an accepted unconverged step raised it over the test suite was 38
  // times (a pushed rod's first contact), 0.3 times over the bundled scenes; the fuzzed rod's
  // first step 3.8e3 times, its halves and quarters 3e7 to 3e35 times. A margin of 26 below,
  // of 3.8 above at that step: a measured choice, not a proof (docs/physics.md).
  constexpr double kDivergedFactor = 1000.0;
  constexpr double kFloor = std::numeric_limits<double>::min() / std::numeric_limits<double>::epsilon();
  const DofLayout& layout = model_.layout;
  double end = assembler_.potential_energies(ctx.x1, ctx.t1).elastic();
  for (int dof = 0; dof < layout.dof_count(); ++dof)
    if (layout.free_index(dof) >= 0) end += 0.5 * mass_[dof] * ctx.v[dof] * ctx.v[dof];
  const double bound = kDivergedFactor * step_energy_scale(ctx) + kFloor;
  // Not above it (a bound that is not a number, from energies that overflow, refuses nothing):
  // the step is taken, counted unconverged. Refused, the attempt fails with its report's flags
  // as they were: the step is split, and its halves say whether they converged.
  if (!(end > bound)) {
    ctx.report.converged = false;
    ctx.report.unconverged_rods += unconverged_rods;
    return true;
  }
  std::ostringstream message;
  message << "the step did not converge, and where its iterations stopped the rods' kinetic and elastic energy is "
          << end << " J, over " << kDivergedFactor << " times what the step could give them (" << bound / kDivergedFactor
          << " J): its solve diverged";
  return fail_with_worst_correction(ctx, message);
}

// ---------------------------------------------------------------------------------------------
// Stage: commit.

void ImplicitEuler::commit(State& state, StepContext& ctx) {
  const DofLayout& layout = model_.layout;
  const VecX& x0 = *ctx.x0;
  const VecX& v0 = *ctx.v0;
  const double dt = ctx.dt;
  // Fixed DOFs end where their prescribed velocity takes them and keep that velocity.
  for (const int dof : fixed_dofs_) {
    ctx.x1[dof] = x0[dof] + dt * v0[dof];
    ctx.v[dof] = v0[dof];
  }
  // Rod contact: did the committed motion pass segments through each other? Not with the
  // barrier's clear path, unless cut short at the last split; the constraints' rows hold only
  // to first order and only where the first solve's path met a pair.
  ctx.report.rod_crossings = rod_contact_.crossings(x0, ctx.x1);
  // History for BDF2 and the predicted guess: where this step began.
  const int dofs = layout.dof_count();
  previous_x0_.resize(dofs);
  previous_v0_.resize(dofs);
  last_end_x_.resize(dofs);
  last_end_v_.resize(dofs);
  for_each_entry(dofs, settings_.threads, [&](int i) {
    previous_x0_[i] = x0[i];
    previous_v0_[i] = v0[i];
    last_end_x_[i] = ctx.x1[i];
    last_end_v_[i] = ctx.v[i];
  });
  previous_dt_ = dt;
  if (constraints_) keep_impulses_for_next_step(ctx.h);
  // x0, v0 (and x^, v^ for backward Euler) name the state's vectors: not used after this.
  state.positions.swap(ctx.x1);
  state.velocities.swap(ctx.v);
  state.time = ctx.t1;
  last_end_time_ = state.time;
  history_ = true;
  // Stage: transport frames. The reference frames of rods with twist follow their edges to
  // the committed positions (nothing for rods without).
  assembler_.advance(state.positions);
}

// ---------------------------------------------------------------------------------------------
// The step: the stages in order.

bool ImplicitEuler::newton_iteration(StepContext& ctx) {
  if (!assemble(ctx) || !solve(ctx)) return false;
  line_search(ctx);
  return true;
}

bool ImplicitEuler::run_fixed(StepContext& ctx) {
  const int iterations = std::max(1, settings_.newton_iterations);
  const double gravity_speed = gravity_magnitude(model_) * ctx.h;
  for (ctx.iteration = 0; ctx.iteration < iterations; ++ctx.iteration) {
    ctx.at_start = ctx.iteration == 0 && !ctx.from_guess && !barrier_;
    if (!newton_iteration(ctx)) return false;
    // Converged? The full correction (not the accepted fraction) against the velocity scale.
    if (settings_.newton_tolerance > 0.0 && ctx.iteration + 1 < iterations) {
      const double scale = std::max(ctx.v.lpNorm<Eigen::Infinity>(), gravity_speed);
      if (ctx.dv.lpNorm<Eigen::Infinity>() <= settings_.newton_tolerance * scale) break;
    }
  }
  if (settings_.length_correction && !contact_.enabled() && !barrier_) {
    correct_lengths(ctx);
  } else {
    const VecX& x_hat = *ctx.x_hat;
    ctx.x1.resize(x_hat.size());
    for_each_entry(static_cast<int>(x_hat.size()), settings_.threads,
                   [&](int i) { ctx.x1[i] = x_hat[i] + ctx.h * ctx.v[i]; });
  }
  return true;
}

bool ImplicitEuler::run_converged(StepContext& ctx, bool first_solved) {
  const bool contact = contact_.enabled();
  const bool damped = model_.damping_stiffness > 0.0;
  // Rod-rod contact: every iterate stays feasible, so no length correction (it moves vertices
  // after CCD has judged the step), and each Newton step is CCD-limited and line-searched.
  const bool barrier = barrier_;
  // The guess: Baraff-Witkin's solve linearised at x^, then the length correction. With rod
  // contact, the same solve as Newton's first iteration from rest (predict()), line-searched.
  ctx.iteration = 0;
  ctx.at_start = !barrier;
  const Clock::time_point first_solve_start = Clock::now();
  int ccd_limited_before = ctx.report.ccd_limited;
  if (!first_solved && (!assemble(ctx) || !solve(ctx))) return false;
  if (barrier)
    line_search(ctx);
  else
    for_each_entry(static_cast<int>(ctx.v.size()), settings_.threads, [&](int i) { ctx.v[i] += ctx.dv[i]; });
  ++ctx.report.stages.first_solves;
  const double first_solve_seconds = seconds_since(first_solve_start);
  ctx.report.stages.first_solve_seconds += first_solve_seconds;
  if (iteration_log_) log_iteration(ctx, ccd_limited_before, first_solve_seconds);
  const VecX& x_hat = *ctx.x_hat;
  auto remember_contact_iterate = [&] {
    if (static_cast<int>(ctx.contact_iterates.size()) <= ctx.contact_iterate_count) ctx.contact_iterates.emplace_back();
    ctx.contact_iterates[ctx.contact_iterate_count++] = ctx.v;
  };
  auto update_end_positions = [&] {
    ctx.x1.resize(x_hat.size());
    for_each_entry(static_cast<int>(x_hat.size()), settings_.threads,
                   [&](int i) { ctx.x1[i] = x_hat[i] + ctx.h * ctx.v[i]; });
  };
  bool converged = false;
  if (!contact && !barrier) {
    correct_lengths(ctx);
    if (!find_non_finite(ctx.x1, ctx.report, "position") && !find_collapsed_edge(ctx.x1, ctx.report)) {
      // Stiffness damping needs K at the guess: Newton's own correction tests it instead.
      converged = !damped && test_convergence(ctx);
    } else {
      return false;
    }
  } else {
    update_end_positions();
    ctx.report.correction = relative_correction(ctx, ctx.dv_free);
    ctx.contact_iterate_count = 0;
    // The single solve's answer, the fallback below; with rod contact, where the step cannot
    // be split again, the first of the iterates clear_path may end the step at.
    if (!barrier || !path_may_split()) remember_contact_iterate();
    // Rod contact alone: a first Newton step taken whole and already below the tolerance is
    // converged (a rod at rest stays so in one solve).
    if (barrier && !contact)
      converged = ctx.step_length == 1.0 && !ctx.ccd_cut && ctx.report.correction <= step_tolerance() &&
                  friction_converged(ctx) && ctx.forces_consistent;
  }
  // Newton from the guess, until its correction is below the tolerance; and where the step
  // would gain energy, on until the energy test passes too (converged backward Euler did not
  // gain energy in any of our runs, so a gain is a sign of an unfinished solve).
  bool energy_ok = false;
  int energy_retries = 0;
  bool strain_bound_reached = false;  // limit_contact_step_by_strain took nothing of the step
  for (int k = 0;; ++k) {
    if (converged) {
      if (find_non_finite(ctx.x1, ctx.report, "position") || find_collapsed_edge(ctx.x1, ctx.report)) return false;
      energy_ok = test_energy(ctx);
      if (energy_ok) break;
    }
    // Contact makes the force non-smooth: the active set and the stick-slip states can switch
    // from one iteration to the next and Newton stall above the tolerance, its iterates no
    // longer guaranteed to keep every vertex out (hair_on_sphere: 5.7 radii deep). After
    // kContactIterations the step ends at the best of its iterates, its first solve
    // (Baraff-Witkin's with the contact constraints held exactly, the solver of earlier
    // versions) included (keep_best_contact_iterate), and is counted in the report rather than
    // split again and again; so is a step whose Newton step the strain limit took nothing of.
    if (!converged && contact &&
        ((!contact_.contacts().empty() && k >= kContactIterations && !deep_iterate_may_go_on(ctx, k)) ||
         strain_bound_reached)) {
      const int stalled_rods = barrier ? 0 : rods_above_tolerance(ctx, ctx.dv_free);
      // With rod contact every iterate is feasible and the last is the furthest along: the
      // first solve was cut by CCD as much as any, so going back to it throws the step away.
      if (!barrier) keep_best_contact_iterate(ctx);
      update_end_positions();
      ctx.end_energies_known = false;
      return end_unconverged(ctx, stalled_rods);
    }
    // With friction between rods the tolerance is tighter than the user's (step_tolerance()),
    // and the friction forces must settle too. A step that cannot get there (a pile or a knot
    // whose pressed crossings jam, where CCD cuts every search short) but is within the
    // user's own tolerance is converged by the user's measure: it ends there, not in failure.
    if (!converged && k >= settings_.max_newton_iterations && step_tolerance() < settings_.tolerance &&
        ctx.report.correction <= settings_.tolerance && ctx.forces_consistent && !ctx.partial) {
      converged = true;
      continue;
    }
    // Rod-rod contact makes the potential non-convex along a path around a rod: a step whose
    // rods slip past one another (a rod's end sliding off another's) can gain energy as
    // converged backward Euler, and splitting it does not help. Nor does it help a step whose
    // iterations CCD cuts short in turn, pair after pair, in a crowd of pressed rods: the
    // vertical brush of `bristle bench --brush --rows 4 --columns 4 --segments 10` lifting
    // off the paper at t = 1 s did not converge in 25 iterations at any split level and failed
    // the run. Where such a step cannot be split again it ends at its last iterate (feasible,
    // as every iterate with rod contact is), counted unconverged, rather than failing the run.
    auto accept_at_last_resort = [&](bool energy_gain) { return barrier && last_resort_ && converged == energy_gain; };
    auto accept_energy_gain = [&] { return accept_at_last_resort(true); };
    if (k >= settings_.max_newton_iterations || (converged && ctx.bdf2)) {
      if (accept_energy_gain() || accept_at_last_resort(false)) return end_unconverged(ctx, 0);
      std::ostringstream message;
      if (converged)
        message << "the step would raise the total energy by " << ctx.energy_gain
                << " J (allowance " << energy_allowance(ctx) << " J) after " << ctx.iteration + 1
                << " Newton iterations";
      else
        message << "Newton's method did not converge in " << settings_.max_newton_iterations
                << " iterations (last correction " << ctx.report.correction << " of the rod length, tolerance "
                << step_tolerance() << ")";
      return fail_with_worst_correction(ctx, message);
    }
    ctx.iteration = k + 1;
    ctx.at_start = false;
    const Clock::time_point iteration_start = Clock::now();
    ccd_limited_before = ctx.report.ccd_limited;
    if (!contact && !damped && !barrier) {
      // Newton's linearised step stretches turning edges as the guess's did: each trial is
      // length-corrected before Phi judges it (projected_line_search).
      if (!assemble(ctx) || !solve(ctx)) return false;
      projected_line_search(ctx);
    } else {
      if (!newton_iteration(ctx)) return false;
      if (contact && !barrier && !contact_.contacts().empty())
        strain_bound_reached = !limit_contact_step_by_strain(ctx);
      update_end_positions();
      if ((contact && !barrier) || (barrier && !path_may_split())) remember_contact_iterate();
    }
    const double iteration_seconds = seconds_since(iteration_start);
    (ctx.partial ? ctx.report.stages.partial_iteration_seconds : ctx.report.stages.full_iteration_seconds) +=
        iteration_seconds;
    ctx.report.correction = relative_correction(ctx, ctx.dv_free);
    if (iteration_log_) log_iteration(ctx, ccd_limited_before, iteration_seconds);
    const bool was_converged = converged;
    // An iteration over the active rods only measures them: the step ends on one over all.
    // Nor where a vertex is still deep in a collider and more iterations may lift it (an
    // iteration that moved nothing would only repeat itself: it converges as before).
    converged = ctx.report.correction <= step_tolerance() && friction_converged(ctx) && ctx.forces_consistent &&
                !ctx.partial &&
                !(barrier && contact && ctx.step_length > 0.0 && deep_iterate_may_go_on(ctx, k + 1));
    // A line search that took nothing leaves the iterate where it was: the next iteration
    // would repeat it. So would more iterations at a converged iterate that still gains
    // energy, beyond a few. Split at once instead; where no split is left, end at the last
    // iterate as above (the 1000-bristle tilted brush of `bristle bench --brush --tilt 0.9`
    // lifting off the paper at t = 0.98 s failed the run here).
    // (A step the strain limit took nothing of ends as stalled, above, not here.)
    // An iteration over the active rods that took nothing is followed by one over all rods,
    // which may take a step or be stuck itself.
    if (ctx.partial && ctx.step_length == 0.0) ctx.next_full = true;
    const bool stuck = ctx.step_length == 0.0 && !converged && !strain_bound_reached && !ctx.partial;
    if (stuck || (was_converged && ++energy_retries > kEnergyRetries)) {
      if (stuck ? accept_at_last_resort(false) : accept_energy_gain()) return end_unconverged(ctx, 0);
      std::ostringstream message;
      if (stuck)
        message << "Newton's line search found no decrease (correction " << ctx.report.correction
                << " of the rod length, tolerance " << settings_.tolerance << ")";
      else
        message << "the step would raise the total energy by " << ctx.energy_gain
                << " J (allowance " << energy_allowance(ctx) << " J) after " << ctx.iteration + 1
                << " Newton iterations";
      return fail_with_worst_correction(ctx, message);
    }
  }
  return energy_ok;
}

// ---------------------------------------------------------------------------------------------
// Rod-rod contact as constraints (docs/contact.md, "Rod-rod contacts as constraints in the
// step"; Daviet, Bertails-Descoubes and Boissieux, SIGGRAPH Asia 2011).
//
// Newton's method on the residual without contact, r(v), with the step's contact impulses p
// beside it. Each iteration solves J dv0 = -r(v) rod by rod, then the impulses for the end
// velocity v + dv0 + J^-1 H^T p (Coulomb's law at every row, contact/coulomb_solver.hpp), and
// takes v += dv0 + J^-1 H^T p whole. p is the step's total impulse, not an increment: at a
// fixed point r(v) = H^T p, the momentum balance with the contact impulses, and the rows'
// linearised gaps and slips obey Coulomb's law. The rows are the pairs near each other on
// the first solve's path, linearised at the step's start, where each pair is apart.

bool ImplicitEuler::apply_contact_constraints(StepContext& ctx) {
  const DofLayout& layout = model_.layout;
  const int n_free = layout.free_dof_count();
  const SparseMatrix& system = system_matrix();
  RodBlockPreconditioner& blocks = solver_.preconditioner();
  StepReport& report = ctx.report;
  const Clock::time_point start = Clock::now();
  block_rhs_.setZero(n_free);
  block_solution_.setZero(n_free);
  // The system is block diagonal (no coupling between rods: the barrier is off), so A^-1
  // applied to a rod's entries is its block's solve; solve_blocks factors a block once and
  // reuses the factor while its values stay the same.
  bool solved = true;
  int failed_rod = -1;
  int failed_pivot = -1;  // within the failed rod's block, where its factorisation failed
  std::vector<int> one_rod(1);
  const RodBlockSolve block_solve = [&](int rod, Eigen::Ref<VecX> segment) {
    const auto [begin, end] = layout.rod_free_range(rod);
    block_rhs_.segment(begin, end - begin) = segment;
    one_rod[0] = rod;
    if (!blocks.solve_blocks(system, one_rod, block_rhs_, block_solution_)) {
      if (solved) {
        failed_rod = rod;
        failed_pivot = blocks.failed_pivot(rod);
      }
      solved = false;
      segment.setZero();  // no response: the solve goes on harmlessly and the step fails after it
      return;
    }
    segment = block_solution_.segment(begin, end - begin);
  };
  // Responses are formed as the impulse solve needs them (RodContactOperator).
  RodContactOperator impulse_problem(layout, contact_rows_, block_solve, ctx.v, ctx.dv_free, ctx.h);
  // The impulses are solved until no contact's velocity is off by more than would move it
  // kImpulseTolerance of the smallest radius over the step: far below what the rows'
  // linearisation leaves. Sweeps accelerated by nonsmooth conjugate gradients (rod pile:
  // 443 Newton iterations in 90 steps instead of 905; docs/contact.md).
  impulse_settings_.tolerance = kImpulseTolerance * smallest_radius_ / ctx.h;
  impulse_settings_.nonsmooth_cg = true;
  const CoulombResult result = solve_coulomb(impulse_problem, impulse_settings_, contact_impulses_);
  if (!solved) {
    report.solve_seconds += seconds_since(start);
    // The place to name: the DOF whose pivot failed (a vertex, or the twist of the edge after
    // it), else, for the other reasons solve_blocks lists, the largest correction's vertex.
    int failed_dof = -1;
    if (failed_pivot >= 0) {
      const int free = layout.rod_free_range(failed_rod).first + failed_pivot;
      const auto [first, last] = layout.rod_dof_range(failed_rod);
      for (int dof = first; dof < last && failed_dof < 0; ++dof)
        if (layout.free_index(dof) == free) failed_dof = dof;
    }
    std::ostringstream message;
    int vertex = -1;
    if (failed_dof >= 0) {
      vertex = layout.dof_owner(failed_dof).second;
      const bool twist = failed_dof >= layout.vertex_dof(failed_rod, vertex) + layout.dimension();
      message << "the system block of rod '" << model_.rods[failed_rod].name
              << "' is not positive definite (or not finite) to working precision, so the contact impulses cannot be "
                 "solved rod by rod: its factorisation failed at rod '"
              << model_.rods[failed_rod].name << "' vertex " << vertex
              << (twist ? " (the twist of the edge after it)" : "");
    } else {
      // Not a pivot's failure (an entry outside the rod's band, or coupled rods): the rod's
      // first free vertex stands for it.
      for (int v = 0; v < model_.rods[failed_rod].vertex_count() && vertex < 0; ++v)
        if (layout.free_index(layout.vertex_dof(failed_rod, v)) >= 0) vertex = v;
      message << "the system block of rod '" << model_.rods[failed_rod].name
              << "' could not be solved on its own for the contact impulses (an entry outside its band, or rods "
                 "coupled; named at its first free vertex, rod '"
              << model_.rods[failed_rod].name << "' vertex " << std::max(vertex, 0) << ")";
    }
    report.ok = false;
    report.failure = message.str();
    report.failed_rod = failed_rod;
    report.failed_vertex = std::max(vertex, 0);
    return false;
  }
  report.impulse_sweeps += result.sweeps;
  report.impulse_residual = result.residual;
  ctx.dv_free += impulse_problem.velocity_change();
  const int dofs = layout.dof_count();
  for_each_entry(dofs, settings_.threads, [&](int dof) {
    const int f = layout.free_index(dof);
    ctx.dv[dof] = f >= 0 ? ctx.dv_free[f] : 0.0;
  });
  report.solve_seconds += seconds_since(start);
  return !find_non_finite(ctx.dv, report, "velocity");
}

bool ImplicitEuler::run_constrained(StepContext& ctx) {
  const VecX& x_hat = *ctx.x_hat;
  const double h = ctx.h;
  const int dofs = static_cast<int>(x_hat.size());
  ctx.iteration = 0;
  ctx.at_start = true;
  if (!assemble(ctx) || !solve(ctx)) return false;
  // The rows: the pairs near each other anywhere between the start and the first solve's end
  // (the contact impulses only hold the rods back from there).
  ctx.trial_x.resize(dofs);
  for_each_entry(dofs, settings_.threads, [&](int i) { ctx.trial_x[i] = x_hat[i] + h * (ctx.v[i] + ctx.dv[i]); });
  rod_rows_ = rod_contact_.constraint_rows(x_hat, ctx.trial_x);
  collider_rows_ = collider_contact_rows(model_, x_hat, ctx.trial_x);
  const std::size_t row_count = rod_rows_.size() + collider_rows_.size();
  ctx.report.contact_rows = static_cast<int>(row_count);
  ctx.report.contacts_pressed = 0;
  if (!model_.colliders.empty()) ctx.report.contact.colliders.assign(model_.colliders.size(), ColliderContactStats{});
  // With no rows the loop below is plain Newton; a converged step is then checked for
  // contacts its path met after all (add_missed_rows).
  contact_impulses_.assign(row_count, Vec3::Zero());
  contact_rows_.resize(row_count);
  ctx.end_energies_known = false;
  // Sliding friction lags the slide by up to the tolerance each step, as with the barrier
  // (step_tolerance()): with friction the tolerance is as tight as there.
  bool friction = false;
  for (const RodContactRow& row : rod_rows_) friction = friction || row.friction > 0.0;
  for (const RodContactRow& row : collider_rows_) friction = friction || row.friction > 0.0;
  const double tolerance = friction ? kFrictionToleranceScale * settings_.tolerance : settings_.tolerance;
  bool taken_unconverged = false;  // ended at the last resort: end_unconverged judges the end
  for (int k = 0;; ++k) {
    // The rows linearised where this iteration's system is: the gap's curvature (a segment
    // sliding over another's end, turning about it) is seen iteration by iteration, and at
    // convergence every gap at the end of the step is exactly nonnegative.
    const VecX* v_lin = ctx.at_start ? nullptr : &ctx.v;
    rod_contact_.linearise_rows(rod_rows_, *ctx.x_lin, v_lin, h);
    linearise_collider_rows(model_, collider_rows_, *ctx.x_lin, v_lin, h);
    std::copy(rod_rows_.begin(), rod_rows_.end(), contact_rows_.begin());
    std::copy(collider_rows_.begin(), collider_rows_.end(), contact_rows_.begin() + rod_rows_.size());
    if (k == 0 && ctx.continuing) warm_start_impulses(h);
    if (!apply_contact_constraints(ctx)) return false;
    ctx.x1.resize(dofs);
    for_each_entry(dofs, settings_.threads, [&](int i) {
      ctx.v[i] += ctx.dv[i];
      ctx.x1[i] = x_hat[i] + h * ctx.v[i];
    });
    ctx.report.correction = relative_correction(ctx, ctx.dv_free);
    // The first iteration's change is the step itself, not a correction: where a contact
    // pushes, its rows are linearised at the start, and a rod turning about another's end
    // would sink into it by their error. At least one more iteration then, at the iterate.
    bool pressed = false;
    for (const Vec3& p : contact_impulses_) pressed = pressed || p[0] > 0.0;
    if (!settings_.converged()) {
      if (k + 1 >= std::max(1, settings_.newton_iterations)) break;  // the fixed count, as run_fixed
    } else if (ctx.report.correction <= tolerance && (k > 0 || !pressed)) {
      // Converged with these rows; on with more if the end met contacts they lack.
      if (k >= settings_.max_newton_iterations || !add_missed_rows(ctx)) break;
    }
    if (settings_.converged() && k >= settings_.max_newton_iterations) {
      // Split the step unless it cannot be split again; then it ends here, counted.
      if (last_resort_) {
        taken_unconverged = true;
        break;
      }
      std::ostringstream message;
      message << "Newton's method with rod-rod contact constraints did not converge in "
              << settings_.max_newton_iterations << " iterations (last correction " << ctx.report.correction
              << " of the rod length, tolerance " << tolerance << ")";
      return fail_with_worst_correction(ctx, message);
    }
    ctx.iteration = k + 1;
    ctx.at_start = false;
    if (!assemble(ctx) || !solve(ctx)) return false;
  }
  for (const Vec3& p : contact_impulses_) ctx.report.contacts_pressed += p[0] > 0.0 ? 1 : 0;
  if (taken_unconverged ? !end_unconverged(ctx, 0)
                        : find_non_finite(ctx.x1, ctx.report, "position") || find_collapsed_edge(ctx.x1, ctx.report))
    return false;
  report_collider_impulses(ctx);
  return true;
}

namespace {
// A row's key across steps: its collider (-1 for a pair of segments), then its two segments,
// or its vertex.
std::array<int, 3> row_key(const RodContactRow& row) {
  return row.collider < 0 ? std::array<int, 3>{-1, row.segments[0], row.segments[1]}
                          : std::array<int, 3>{row.collider, row.vertices[0], 0};
}
}  // namespace

void ImplicitEuler::keep_impulses_for_next_step(double h) {
  kept_impulses_.clear();
  for (std::size_t i = 0; i < contact_rows_.size(); ++i) {
    const Vec3& p = contact_impulses_[i];
    if (!(p[0] > 0.0)) continue;
    const SegmentContactFrame& frame = contact_rows_[i].frame;
    kept_impulses_.push_back({row_key(contact_rows_[i]), p[0], frame.tangent1 * p[1] + frame.tangent2 * p[2]});
  }
  std::sort(kept_impulses_.begin(), kept_impulses_.end());
  kept_impulses_h_ = h;
}

// The impulse solve on a resting pile converges linearly, slowly (W is stiff rods' coupling):
// each row starts from its impulse of the step before, which for contacts that persist is
// close to the answer. The normal impulse is scaled to this step's length, the tangential one
// taken onto the row's present tangents and into its friction disc; new rows start at zero.
void ImplicitEuler::warm_start_impulses(double h) {
  if (kept_impulses_.empty() || !(kept_impulses_h_ > 0.0)) return;
  const double scale = h / kept_impulses_h_;
  for (std::size_t i = 0; i < contact_rows_.size(); ++i) {
    KeptImpulse probe;
    probe.key = row_key(contact_rows_[i]);
    const auto at = std::lower_bound(kept_impulses_.begin(), kept_impulses_.end(), probe);
    if (at == kept_impulses_.end() || at->key != probe.key) continue;
    const SegmentContactFrame& frame = contact_rows_[i].frame;
    const double normal = scale * at->normal;
    Vec2 tangential(scale * frame.tangent1.dot(at->tangential), scale * frame.tangent2.dot(at->tangential));
    const double bound = contact_rows_[i].friction * normal;
    if (tangential.norm() > bound) tangential *= bound > 0.0 ? bound / tangential.norm() : 0.0;
    contact_impulses_[i] = Vec3(normal, tangential[0], tangential[1]);
  }
}

bool ImplicitEuler::add_missed_rows(StepContext& ctx) {
  const VecX& x_hat = *ctx.x_hat;
  std::vector<RodContactRow> rod_rows = rod_contact_.constraint_rows(x_hat, ctx.x1);
  std::vector<RodContactRow> collider_rows = collider_contact_rows(model_, x_hat, ctx.x1);
  // Rows the step lacks whose gap at the end is negative: measured at x1 (v_lin null). A row
  // is known by its two segments, or its collider and vertex: the step's keys sorted, each
  // found row looked up (rows run to 10^4 on hair: no comparison of every pair).
  using Key = std::array<int, 3>;
  auto keep_missing = [&](const std::vector<RodContactRow>& have, std::vector<RodContactRow>& found) {
    std::vector<Key> known;
    known.reserve(have.size());
    for (const RodContactRow& row : have) known.push_back(row_key(row));
    std::sort(known.begin(), known.end());
    std::vector<RodContactRow> kept;
    for (const RodContactRow& row : found)
      if (row.frame.gap < 0.0 && !std::binary_search(known.begin(), known.end(), row_key(row))) kept.push_back(row);
    found = std::move(kept);
  };
  rod_contact_.linearise_rows(rod_rows, ctx.x1, nullptr, ctx.h);
  linearise_collider_rows(model_, collider_rows, ctx.x1, nullptr, ctx.h);
  keep_missing(rod_rows_, rod_rows);
  keep_missing(collider_rows_, collider_rows);
  if (rod_rows.empty() && collider_rows.empty()) return false;
  // Impulses stay with their rows: the rod rows first, then the colliders'.
  std::vector<Vec3> impulses(contact_impulses_.begin(), contact_impulses_.begin() + rod_rows_.size());
  impulses.resize(rod_rows_.size() + rod_rows.size(), Vec3::Zero());
  impulses.insert(impulses.end(), contact_impulses_.begin() + rod_rows_.size(), contact_impulses_.end());
  impulses.resize(impulses.size() + collider_rows.size(), Vec3::Zero());
  contact_impulses_ = std::move(impulses);
  rod_rows_.insert(rod_rows_.end(), rod_rows.begin(), rod_rows.end());
  collider_rows_.insert(collider_rows_.end(), collider_rows.begin(), collider_rows.end());
  contact_rows_.resize(rod_rows_.size() + collider_rows_.size());
  ctx.report.contact_rows = std::max(ctx.report.contact_rows, static_cast<int>(contact_rows_.size()));
  return true;
}

void ImplicitEuler::report_collider_impulses(StepContext& ctx) const {
  ContactReport& report = ctx.report.contact;
  const DofLayout& layout = model_.layout;
  const double h = ctx.h;
  const std::size_t first = rod_rows_.size();
  for (std::size_t i = 0; i < collider_rows_.size(); ++i) {
    const RodContactRow& row = contact_rows_[first + i];
    const Vec3& p = contact_impulses_[first + i];
    ColliderContactStats& stats = report.colliders[row.collider];
    const double tangential = p.tail<2>().norm();
    const double bound = row.friction * p[0];
    if (p[0] > 0.0) {
      ++stats.contacts;
      // Sticking: the friction impulse inside its disc (a sliding one is on its rim).
      if (tangential < bound * (1.0 - 1e-9)) ++stats.sticking;
    }
    stats.normal_force += p[0] / h;
    stats.friction_force += tangential / h;
    // On the rods; the collider's own is its opposite: the report's force is the collider's on the rods.
    stats.force += (row.frame.normal * p[0] + row.frame.tangent1 * p[1] + row.frame.tangent2 * p[2]) / h;
    if (tangential > 0.0)
      report.max_friction_ratio =
          std::max(report.max_friction_ratio, bound > 0.0 ? tangential / bound : std::numeric_limits<double>::infinity());
    report.max_friction_excess = std::max(report.max_friction_excess, (tangential - bound) / h);
    // How deep the vertex ended inside the collider (the rows hold the end gap to first order).
    const int gv = row.vertices[0];
    const double radius = model_.rods[layout.vertex_rod(gv)].material.radius;
    Vec3 x = Vec3::Zero();
    x.head(layout.dimension()) = ctx.x1.segment(layout.vertex_dof(gv), layout.dimension());
    const double depth = collider_penetration(model_.colliders[row.collider], x, radius, layout.dimension());
    report.max_penetration = std::max(report.max_penetration, depth);
    if (radius > 0.0) report.max_penetration_fraction = std::max(report.max_penetration_fraction, depth / radius);
  }
}

bool ImplicitEuler::limit_contact_step_by_strain(StepContext& ctx) {
  // Newton's step in collider contact is taken whole (the constraints hold on the full step
  // only; line_search), and where the active set or the tips' stick-slip states switch from
  // one iteration to the next that step can be far outside its linearisation: a pressed brush
  // of 20-segment bristles being dragged had iterates with edges stretched to 15 times their
  // length, alternating with nearly unstretched ones (docs/contact.md, "A pressed brush under
  // the default solver"). So the step is halved until no edge's strain |l / L - 1| exceeds
  // the trust bound: the largest of kContactStrainTrust, the previous iterate's largest strain
  // (with kContactStrainSlack, so that a step along which that edge stretches a little further
  // still moves), and twice the step start's (a rod stretched at the start may stretch
  // further; the first solve, not limited, may stretch it).
  //
  // Rod by rod: this path has no coupling between rods (rod contact by the barrier, the only
  // source of coupling elements, takes the line search instead), so each rod's Newton step is
  // its own, and each is limited by its own edges. One bristle's wild step then shortens that
  // bristle's step only; limited as a whole, it held back every other bristle of a brush
  // (docs/contact.md, "A pressed brush under the default solver", "Rod by rod": the
  // 1000-bristle benchmark's unconverged steps 31 -> 15). A rod that even 1/1024 of its step strains past its bound takes none of it
  // (counted in strain_stalled_rods); where no rod moves, the caller ends the step as stalled
  // (keep_best_contact_iterate): a next iteration would repeat the same directions.
  // The iterate stays where the next solve can restore the constraints: on a plane a part of
  // the step keeps every vertex out (the constraint is linear in x, and both ends satisfy
  // it); on a curved collider the chord may dip in by a fraction of the step, which the next
  // iteration's constraints, or keep_best_contact_iterate's depth test, take back.
  assert(!coupled_);
  const DofLayout& layout = model_.layout;
  const VecX& x_hat = *ctx.x_hat;
  const double h = ctx.h;
  const int n = static_cast<int>(x_hat.size());
  const int threads = settings_.threads;
  const int rod_count = layout.rod_count();
  ctx.trial_x.resize(n);
  // step_length: the shortest fraction a rod that moved took (a stalled rod does not make the
  // step one of length 0, which run_converged would take for a line search that found nothing).
  double shortest = 1.0;
  int most_halvings = 0, stalled = 0, moved = 0, with_step = 0;
  // Each rod writes its own entries of v and trial_x: the same bits on any number of threads.
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads) if (threads > 1 && n > kParallelRodDofs) reduction(min : shortest) reduction(max : most_halvings) reduction(+ : stalled, moved, with_step)
  for (int r = 0; r < rod_count; ++r) {
    const auto [begin, end] = layout.rod_dof_range(r);
    bool has_step = false;
    for (int i = begin; i < end && !has_step; ++i) has_step = ctx.dv[i] != 0.0;
    if (!has_step) continue;  // fixed, or Newton left it where it is: nothing to limit
    ++with_step;
    const double allowed = std::max({kContactStrainTrust, kContactStrainSlack * largest_edge_strain_of_rod(model_, ctx.x1, r),
                                     2.0 * largest_edge_strain_of_rod(model_, *ctx.x0, r)});
    double s = 1.0;
    bool passed = false;
    int halvings = 0;
    for (;; ++halvings) {  // s = 1, 1/2, ..., 2^-kContactStrainHalvings
      for (int i = begin; i < end; ++i) ctx.trial_x[i] = x_hat[i] + h * (ctx.v[i] - (1.0 - s) * ctx.dv[i]);
      if (largest_edge_strain_of_rod(model_, ctx.trial_x, r) <= allowed) {
        passed = true;
        break;
      }
      if (halvings == kContactStrainHalvings) break;
      s *= 0.5;
    }
    if (!passed) {
      s = 0.0;
      ++stalled;
    } else {
      ++moved;
      shortest = std::min(shortest, s);
    }
    if (s < 1.0)
      for (int i = begin; i < end; ++i) ctx.v[i] -= (1.0 - s) * ctx.dv[i];
    most_halvings = std::max(most_halvings, halvings);
  }
  // The halvings of the rod halved most, as the step's: what halving the whole step took.
  ctx.report.line_search_halvings += most_halvings;
  ctx.report.strain_stalled_rods += stalled;
  if (moved == 0 && with_step > 0) {
    ctx.step_length = 0.0;
    return false;
  }
  if (shortest < 1.0) ctx.step_length = shortest;
  return true;
}

void ImplicitEuler::keep_best_contact_iterate(StepContext& ctx) const {
  // The first solve linearises every edge about the step's start, so a bristle it turns by an
  // angle theta is stretched by theta^2 / 2 that its system never saw (length_correction.hpp):
  // brush bristles pressed onto paper came out of it strained by 20-30% a step, up to 20 times
  // their length over brush_stroke.json (394 J of stretch energy), where Newton's iterates had
  // brought the strain to 1e-7; and where a dragged bristle's tip switches between sticking and
  // sliding, the iterates alternate between two states, one of them strained by 10%. So the
  // step ends at the iterate lowest in Phi, the incremental potential of backward Euler
  // without the contact terms, among those whose deepest vertex is no deeper in a collider than
  // the first solve's, within 1% of a radius; the first solve is the last resort, as before
  // (iterates that went astray: the hair of run_converged's comment). Phi here has neither
  // collider friction nor stiffness damping (its K is lagged, so it has no value of its own),
  // so between a sticking and a sliding iterate the ranking leans to the sliding one: a
  // stalled step may end with less friction than the converged one would. docs/contact.md,
  // "A pressed brush under the default solver".
  //
  // Rod by rod: nothing couples the rods in this path (limit_contact_step_by_strain), so Phi
  // is a sum over the rods, and each rod keeps the iterate lowest in its own Phi among those no
  // deeper than its own first solve (within 1% of its radius): the step's Phi is never above
  // that of any one iterate passing every rod's depth test (docs/contact.md, "A pressed brush
  // under the default solver"). An iterate's rod counts only where its positions are finite
  // and no edge of it has collapsed (its energies are not defined there).
  constexpr double kPenetrationAllowance = 0.01;  // of a vertex's radius
  assert(!coupled_);
  const DofLayout& layout = model_.layout;
  const int rod_count = layout.rod_count();
  const VecX& x_hat = *ctx.x_hat;
  const VecX& v_hat = *ctx.v_hat;
  const double h = ctx.h;
  const double alpha = model_.damping_mass;
  VecX x = x_hat + h * ctx.contact_iterates[0];
  auto rod_defined = [&](int r) {
    const auto [begin, end] = layout.rod_dof_range(r);
    if (!x.segment(begin, end - begin).allFinite()) return false;
    const Rod& rod = model_.rods[r];
    for (int j = 0; j < rod.edge_count(); ++j) {
      // find_collapsed_edge's test: a length of zero, or one whose square overflows.
      const double squared = (vertex_position(model_, x, r, j + 1) - vertex_position(model_, x, r, j)).squaredNorm();
      if (!(squared > 0.0 && std::isfinite(squared))) return false;
    }
    return true;
  };
  std::vector<double> potential, depth, allowed_depth, best_phi(rod_count), phi_of(rod_count);
  std::vector<int> best(rod_count, 0);
  std::vector<char> defined(rod_count);
  auto rod_phis = [&](const VecX& v) {  // Phi of each rod at v (x already at v's end); +inf where undefined
    bool all_defined = true;
    for (int r = 0; r < rod_count; ++r) all_defined = all_defined && (defined[r] = rod_defined(r));
    // The energies need every edge defined; where one is not, its rod is evaluated at the
    // step's start instead (committed, so defined), and its Phi is +inf.
    VecX evaluated;
    const VecX* at = &x;
    if (!all_defined) {
      evaluated = x;
      for (int r = 0; r < rod_count; ++r)
        if (!defined[r]) {
          const auto [begin, end] = layout.rod_dof_range(r);
          evaluated.segment(begin, end - begin) = ctx.x0->segment(begin, end - begin);
        }
      at = &evaluated;
    }
    assembler_.rod_potentials(*at, ctx.t1, potential);
    for (int r = 0; r < rod_count; ++r) {
      if (!defined[r]) {
        phi_of[r] = std::numeric_limits<double>::infinity();
        continue;
      }
      const auto [begin, end] = layout.rod_dof_range(r);
      double kinetic = 0.0;
      for (int i = begin; i < end; ++i) {
        const double dv = v[i] - v_hat[i];
        kinetic += 0.5 * mass_[i] * dv * dv + 0.5 * h * alpha * mass_[i] * v[i] * v[i];
      }
      phi_of[r] = kinetic + potential[r];
    }
  };
  contact_.max_penetration_fraction_by_rod(x, allowed_depth);
  for (double& d : allowed_depth) d = std::max(d, 0.0) + kPenetrationAllowance;
  rod_phis(ctx.contact_iterates[0]);
  best_phi = phi_of;
  for (int k = 1; k < ctx.contact_iterate_count; ++k) {
    const VecX& v = ctx.contact_iterates[k];
    x = x_hat + h * v;
    rod_phis(v);
    contact_.max_penetration_fraction_by_rod(x, depth);
    for (int r = 0; r < rod_count; ++r)
      if (phi_of[r] < best_phi[r] && depth[r] <= allowed_depth[r]) {
        best[r] = k;
        best_phi[r] = phi_of[r];
      }
  }
  for (int r = 0; r < rod_count; ++r) {
    const auto [begin, end] = layout.rod_dof_range(r);
    ctx.v.segment(begin, end - begin) = ctx.contact_iterates[best[r]].segment(begin, end - begin);
  }
}

bool ImplicitEuler::fail_with_worst_correction(StepContext& ctx, std::ostringstream& message) const {
  name_worst_correction(ctx, message);
  ctx.report.ok = false;
  ctx.report.failure = message.str();
  return false;
}

void ImplicitEuler::name_worst_correction(StepContext& ctx, std::ostringstream& message) const {
  // Where the last Newton correction was largest; with none (a zero correction) the first
  // free vertex, so that a failure always names a rod and vertex.
  int dof = worst_correction_dof_;
  for (int d = 0; dof < 0 && d < model_.layout.dof_count(); ++d)
    if (model_.layout.free_index(d) >= 0) dof = d;
  if (dof < 0) return;
  const auto [rod, vertex] = model_.layout.dof_owner(dof);
  message << " at rod '" << model_.rods[rod].name << "' vertex " << vertex;
  ctx.report.failed_rod = rod;
  ctx.report.failed_vertex = vertex;
}

void ImplicitEuler::finish_report(const State& state, StepContext& ctx) {
  StepReport& report = ctx.report;
  report.cg_iterations += static_cast<int>(solver_.preconditioner().applications());
  if (report.ok && !settings_.step_energies && !settings_.converged()) return;
  if (report.ok && ctx.end_energies_known) {
    report.energies = ctx.end_energies;
    report.energies.kinetic = 0.5 * state.velocities.dot(mass_.cwiseProduct(state.velocities));
  } else {
    report.energies = energies(state);
  }
}

StepReport ImplicitEuler::attempt(State& state, double dt, bool allow_bdf2) {
  StepContext& ctx = context_;
  start_ok_ = check_start(state, dt, ctx);
  // Nothing is carried from one attempt to the next (a split step's halves, the next step).
  assembler_.forget_unchanged_rods();
  if (!start_ok_) return ctx.report;
  solver_.preconditioner().reset_applications();
  // An attempt whose coupled solves went to the factored groups (solve_with_cg) hands that
  // choice to the next one: a pressed brush stays pressed from step to step, and each attempt
  // spent its first kPerRodIterations on the per-rod factors before switching again (the 1000
  // x 20 tilted brush: 12218 CG iterations -> 6016, Newton's 859 -> 838). Every
  // kGroupedAttemptsBetweenProbes attempts one starts on the per-rod factors again, so that a
  // scene whose contact eased (or that took one hard step) goes back to them.
  const bool probe = grouped_attempts_ >= kGroupedAttemptsBetweenProbes;
  group_coupled_rods_ = grouped_last_attempt_ && !probe;
  grouped_attempts_ = group_coupled_rods_ ? grouped_attempts_ + 1 : 0;
  ctx.stiffness_raised = false;
  // Rod-rod contact: each pair's barrier stiffness for this step, from the force it carried.
  const bool stiffness_changed = barrier_ && rod_contact_.begin_step();
  predict(ctx, allow_bdf2);
  lag_friction(ctx);
  if (contact_.enabled()) contact_.begin_step();
  if (settings_.converged()) {
    // The energy at the start: where the last step ended, else evaluated.
    // Where the last step left the state (free DOFs; fixed ones moving make the step driven).
    // A driven step has no energy test (test_energy), so nothing reads it: not evaluated (a
    // 25th of the dragged 1000-bristle brush's run, its rod contact's pairs found again).
    const bool known = last_end_energy_known_ && ctx.continuing && !stiffness_changed;
    ctx.energy_start = known ? last_end_energy_ : ctx.driven ? 0.0 : energies(state).total();
    ctx.energy_previous_known = known && last_start_energy_known_;
    ctx.energy_previous = last_start_energy_;
  }
  ctx.report.constraints = constraints_;
  bool ok = constraints_ ? run_constrained(ctx) : settings_.converged() ? run_converged(ctx) : run_fixed(ctx);
  const Clock::time_point path_start = Clock::now();
  if (ok && barrier_ && !(find_non_finite(ctx.x1, ctx.report, "position") ||
                                        find_collapsed_edge(ctx.x1, ctx.report))) {
    // A step whose straight motion is not clear goes around something it cannot pass on a
    // straight line in one step (a rod sliding off another's end and around it): the
    // converged solver takes it in two halves, each closer to the path the iterates took;
    // only a step that cannot be split again is cut short (clear_path).
    if (!clear_path(ctx) && path_may_split()) {
      ctx.report.ok = false;
      ctx.report.failure = "the step's straight motion passes through a rod that its Newton iterates went around";
      ok = false;
    }
    ctx.report.stages.path_check_seconds += seconds_since(path_start);
  }
  if (ok && !(find_non_finite(ctx.x1, ctx.report, "position") || find_collapsed_edge(ctx.x1, ctx.report))) {
    const Clock::time_point commit_start = Clock::now();
    if (contact_.enabled()) contact_.report(ctx.x1, ctx.h, ctx.report.contact);
    commit(state, ctx);
    if (barrier_) {
      // The pairs near each other where the step ended: its stats, and the barrier's elements
      // for energies() at the committed state.
      load_contact_pairs(state.positions, state.positions);
      ctx.report.rod_contact = rod_contact_.measure(state.positions);
      rod_contact_.prune_forces(state.positions);
      rod_contact_.commit_stiffness();
    }
    if (constraints_) ctx.report.rod_contact = rod_contact_.measure_all(state.positions);
    ctx.report.stages.commit_seconds += seconds_since(commit_start);
    if (settings_.converged()) {
      last_end_energy_ = ctx.end_energies.total();
      last_end_energy_known_ = ctx.end_energies_known && !ctx.driven;
      last_start_energy_ = ctx.energy_next_previous;
      last_start_energy_known_ = ctx.energy_next_previous_known && !ctx.driven;
    }
  } else {
    ctx.report.ok = false;
    if (barrier_) rod_contact_.abandon_step();
  }
  // Only a step that held carries its choice: a failed attempt's retries (split steps) start
  // on the per-rod factors, as every attempt did before.
  grouped_last_attempt_ = ctx.report.ok && group_coupled_rods_;
  // This step's friction elements are lagged at its start: no later step or energy
  // evaluation may see them (the next attempt lags its own).
  assembler_.table<RodFrictionTerm>().clear_coupling();
  finish_report(state, ctx);
  return ctx.report;
}

StepReport ImplicitEuler::step(State& state, double dt) {
  unclear_path_depth_ = -1;
  const StepReport report = step_or_split(state, dt, 0, true, first_depth_);
  // A step whose straight motion was not clear at some split level was split there, or cut
  // short where it may not split again; the next step, likely alike (bristles springing apart
  // as a brush lifts off the paper, tips pressed into it at touchdown), starts one level deeper
  // than that instead of failing the same levels first, and each step that found every path
  // clear starts one level shallower again (docs/contact.md, "Steps that start split").
  // A path cut short at the last level that may split for it counts too (clear_path): the
  // lift's quarter steps are cut, and their next step starts there again rather than halving
  // the same way (the 1000-bristle brush: 855 -> 843 Newton iterations).
  if (barrier_ && settings_.converged() && report.ok) {
    const int deepest = std::min(kPathSplits, settings_.max_step_splits);
    first_depth_ = unclear_path_depth_ >= 0 ? std::min(unclear_path_depth_ + 1, deepest) : std::max(first_depth_ - 1, 0);
  }
  return report;
}

StepReport ImplicitEuler::step_or_split(State& state, double dt, int depth, bool allow_bdf2, int first_depth) {
  first_depth = std::min(first_depth, settings_.max_step_splits);
  StepReport report;
  if (depth >= first_depth) {
    // A step that cannot be split again (the fixed-count solver's, or at the deepest split) is
    // the last resort: where a step that could be split fails, it ends at its last feasible
    // iterate, counted unconverged (clear_path, run_converged's accept_at_last_resort).
    last_resort_ = !settings_.converged() || depth >= settings_.max_step_splits;
    split_depth_ = depth;
    const Clock::time_point attempt_start = Clock::now();
    report = attempt(state, dt, allow_bdf2);
    // The converged solver takes a step it could not converge (or that would gain energy) again
    // as two backward Euler steps of half the length; a state it cannot start from is final.
    if (report.ok || report.interrupted || !settings_.converged() || depth >= settings_.max_step_splits || !start_ok_)
      return report;
    report.failed_attempts = 1;
    report.failed_attempt_newton_iterations = report.newton_iterations;
    report.failed_attempt_seconds = seconds_since(attempt_start);
  }
  const State saved = state;
  const SystemAssembler::ElementState saved_frames = assembler_.element_state();
  const double t1 = state.time + dt;
  // The failed attempt's work counts too.
  StepReport total;
  if (depth >= first_depth) accumulate(total, report);
  total.substeps = 0;
  for (int half = 0; half < 2; ++half) {
    const StepReport part = step_or_split(state, 0.5 * dt, depth + 1, false, first_depth);
    accumulate(total, part);
    total.substeps += part.substeps;
    if (!part.ok) {
      state = saved;
      assembler_.restore_element_state(saved_frames);
      total.ok = false;
      total.rod_crossings = 0;  // the first half's motion is undone
      total.failure = part.failure;
      total.failed_rod = part.failed_rod;
      total.failed_vertex = part.failed_vertex;
      total.interrupted = part.interrupted;
      total.energies = energies(state);
      history_ = false;
      return total;
    }
  }
  state.time = t1;  // two halves add up to dt up to round-off; the clock stays exact
  last_end_time_ = t1;
  return total;
}

}  // namespace bristle
