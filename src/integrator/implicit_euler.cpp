#include "bristle/integrator/implicit_euler.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

namespace bristle {
namespace {
using Clock = std::chrono::steady_clock;
// Below this many DOFs a loop over them is not worth waking other threads for.
constexpr int kParallelDofs = 20000;
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
}  // namespace

ImplicitEuler::ImplicitEuler(const Model& model, SolverSettings settings)
    : model_(model), settings_(settings), assembler_(model), mass_(model.dof_masses()),
      contact_(model, settings.contact), length_correction_(model) {
  length_correction_.set_threads(settings_.threads);
  const int n = model.layout.free_dof_count();
  warm_start_ = VecX::Zero(n);
  solver_.preconditioner().set_blocks(model.layout.rod_free_ranges());
  solver_.preconditioner().set_threads(settings_.threads);
  assembler_.set_threads(settings_.threads);
  solver_.setTolerance(settings_.cg_tolerance);
  solver_.setMaxIterations(settings_.cg_max_iterations);
}

EnergyBreakdown ImplicitEuler::energies(const State& state) const {
  EnergyBreakdown e = assembler_.potential_energies(state.positions, state.time);
  e.kinetic = 0.5 * state.velocities.dot(mass_.cwiseProduct(state.velocities));
  return e;
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
  for (int dof = first; dof < size; ++dof) {
    const auto [rod, vertex] = model_.layout.dof_owner(dof);
    std::ostringstream message;
    message << "non-finite " << what << " at rod '" << model_.rods[rod].name << "' vertex " << vertex;
    report.ok = false;
    report.failure = message.str();
    report.failed_rod = rod;
    report.failed_vertex = vertex;
    return true;
  }
  return false;
}

bool ImplicitEuler::find_collapsed_edge(const VecX& positions, StepReport& report) const {
  const int edge = assembler_.find_collapsed_edge(positions);
  if (edge < 0) return false;
  const StretchElement& e = assembler_.stretch_elements()[edge];
  const int vertex = model_.layout.dof_owner(e.dof[0]).second;
  std::ostringstream message;
  message << "edge " << vertex << "-" << vertex + 1 << " of rod '" << model_.rods[e.rod].name
          << "' collapsed to zero length (rod '" << model_.rods[e.rod].name << "' vertex " << vertex << ")";
  report.ok = false;
  report.failure = message.str();
  report.failed_rod = e.rod;
  report.failed_vertex = vertex;
  return true;
}

ImplicitEuler::LineSearch ImplicitEuler::line_search(const VecX& x0, const VecX& v0, const VecX& v, double h,
                                                     double potential_at_v, double slope, double damping_scale,
                                                     StepReport& report) {
  // Phi(v + s dv) - Phi(v) for the quadratic terms is a polynomial in s; only U needs an
  // evaluation per trial. dv is zero on fixed DOFs.
  const double alpha = model_.damping_mass, beta = model_.damping_stiffness;
  mass_dv_ = mass_.cwiseProduct(dv_);
  const double dv_m_dv = dv_.dot(mass_dv_);
  const double linear_mass = (v - v0).dot(mass_dv_) + h * alpha * v.dot(mass_dv_);
  const double quadratic_mass = 0.5 * (1.0 + h * alpha) * dv_m_dv;
  double linear_damping = 0.0, quadratic_damping = 0.0;
  if (beta > 0.0) {
    // h beta K v = damping_scale product_ (see step()); dv^T K dv from the system matrix:
    // dv^T J dv = (1 + h alpha) dv^T M dv + (h^2 + h beta) dv^T K dv.
    linear_damping = damping_scale * dv_.dot(product_);
    system_dv_.noalias() = assembler_.matrix() * dv_free_;
    const double dv_j_dv = dv_free_.dot(system_dv_);
    quadratic_damping = 0.5 * h * beta * (dv_j_dv - (1.0 + h * alpha) * dv_m_dv) / (h * h + h * beta);
  }
  constexpr double kArmijo = 1e-4;
  constexpr int kMaxHalvings = 10;
  double step = 1.0;
  for (int halving = 0; halving <= kMaxHalvings; ++halving) {
    trial_v_ = v + step * dv_;
    trial_x_ = x0 + h * trial_v_;
    if (assembler_.find_collapsed_edge(trial_x_) < 0) {
      const EnergyBreakdown e = assembler_.potential_energies(trial_x_, report_time_);
      const double change = step * (linear_mass + linear_damping) + step * step * (quadratic_mass + quadratic_damping) +
                            (e.potential() - potential_at_v);
      // U is a sum of terms far larger than its change near convergence: a change within
      // round-off of them counts as no increase.
      const double noise = 64.0 * std::numeric_limits<double>::epsilon() *
                           (std::abs(e.stretch) + std::abs(e.bend) + std::abs(e.gravity) + std::abs(e.load) +
                            std::abs(potential_at_v));
      if (change <= kArmijo * step * slope + noise) return {step, true, e};
    }
    ++report.line_search_halvings;
    step *= 0.5;
  }
  // No sufficient decrease along dv. The caller decides (see step()).
  ++report.line_search_failures;
  return {1.0, false, EnergyBreakdown{}, false};
}

StepReport ImplicitEuler::step(State& state, double dt) {
  StepReport report;
  const DofLayout& layout = model_.layout;
  const double h = dt;
  const double alpha = model_.damping_mass, beta = model_.damping_stiffness;
  const double t1 = state.time + h;
  report_time_ = t1;
  const VecX& x0 = state.positions;
  const VecX& v0 = state.velocities;
  const int n_free = layout.free_dof_count();
  const int iterations = std::max(1, settings_.newton_iterations);

  // A state this step cannot start from is reported, not assembled (the kernels assert
  // finite, non-degenerate stencils). Its energies are not evaluated either.
  if (find_non_finite(x0, report, "position") || find_non_finite(v0, report, "velocity") ||
      find_collapsed_edge(x0, report))
    return report;

  // Fixed DOFs keep the velocity they carry in the state; free DOFs start from v0.
  VecX& v = velocity_;  // kept buffers, swapped into the state at the end: no allocation
  v.resize(v0.size());
  for_each_entry(static_cast<int>(v0.size()), settings_.threads, [&](int i) { v[i] = v0[i]; });
  // Linearization::Predicted starts Newton from the velocity extrapolated from the last two
  // steps of this same run, v~ = v0 + (h / h_prev) (v0 - v_prev), a second-order guess of v1
  // for smooth motion; one Newton iteration from there is then as accurate as several from
  // v0. The guess is taken only when it is better than v0 by the measure Newton minimises,
  // Phi(v~) <= Phi(v0) (at large steps, or at a sudden change, extrapolating overshoots and
  // Newton from there can settle on another, unphysical minimum of Phi); otherwise the step
  // is Baraff-Witkin's, linearised at the start. Never across a jump (the state was changed
  // between steps) nor with colliders (a contact can stop a vertex within a step, and an
  // extrapolated guess would predict contacts that do not happen).
  bool from_guess = false;
  // This step continues the last one when the state is where that step left it: time, and
  // the free DOFs' positions and velocities (fixed DOFs may be moved by handles in between).
  bool continuing = previous_h_ > 0.0 && state.time == last_end_time_ && last_end_v_.size() == v0.size() &&
                    last_end_x_.size() == x0.size() && previous_v0_.size() == v0.size();
  for (int dof = 0; continuing && dof < layout.dof_count(); ++dof)
    if (layout.free_index(dof) >= 0 && (v0[dof] != last_end_v_[dof] || x0[dof] != last_end_x_[dof])) continuing = false;
  // Phi below leaves out h beta/2 v^T K v (K is not known before assembly): with stiffness
  // damping the comparison would not be the one the line search makes, so no guess then.
  if (settings_.linearization == Linearization::Predicted && continuing && !contact_.enabled() &&
      model_.damping_stiffness == 0.0) {
    const Clock::time_point guess_start = Clock::now();
    const double ratio = h / previous_h_;
    trial_v_ = v0;
    for (int dof = 0; dof < layout.dof_count(); ++dof)
      if (layout.free_index(dof) >= 0) trial_v_[dof] = v0[dof] + ratio * (v0[dof] - previous_v0_[dof]);
    trial_x_ = x0 + h * trial_v_;
    w_ = x0 + h * v0;  // scratch until the iterations need w_
    if (assembler_.find_collapsed_edge(trial_x_) < 0 && assembler_.find_collapsed_edge(w_) < 0) {
      mass_dv_ = mass_.cwiseProduct(trial_v_ - v0);
      const double phi_guess = 0.5 * (trial_v_ - v0).dot(mass_dv_) +
                               0.5 * h * alpha * trial_v_.dot(mass_.cwiseProduct(trial_v_)) +
                               assembler_.potential_energies(trial_x_, t1).potential();
      const double phi_start = 0.5 * h * alpha * v0.dot(mass_.cwiseProduct(v0)) +
                               assembler_.potential_energies(w_, t1).potential();
      if (phi_guess <= phi_start) {
        v = trial_v_;
        from_guess = true;
      }
    }
    report.assembly_seconds += seconds_since(guess_start);
  }
  if (settings_.linearization == Linearization::Predicted) previous_v0_ = v0;
  previous_h_ = h;
  // Where the system is linearised: x0 for Baraff-Witkin's first solve, else x0 + h v (kept
  // in linearization_point_).
  const VecX* x_lin = &x0;
  auto& preconditioner = solver_.preconditioner();
  preconditioner.reset_applications();
  // Eigen's thread count is global; its parallel sparse product (row by row, in CG) is the
  // only Eigen kernel of the step that uses it.
  Eigen::setNbThreads(std::max(1, settings_.threads));
  // Contact (src/contact) replaces the plain solve below only when there are colliders.
  const bool contact = contact_.enabled();
  if (contact) contact_.begin_step();
  const ContactSolver::LinearSolve linear_solve = [this](const SparseMatrix& m, const VecX& b,
                                                         const VecX& guess, VecX& x) {
    solver_.compute(m);
    x = solver_.solveWithGuess(b, guess);
    return solver_.info() == Eigen::Success;
  };
  // The end-of-step energies, when the last line search already evaluated them.
  EnergyBreakdown end_energies;
  bool end_energies_known = false;
  const double gravity_speed = model_.gravity.head(model_.dimension).norm() * h;

  for (int iteration = 0; iteration < iterations; ++iteration) {
    // Baraff-Witkin's first solve is linearised at the start of the step; every other
    // iteration where the current iterate puts the rod.
    const bool at_start = iteration == 0 && !from_guess;
    if (!at_start) {
      linearization_point_ = x0 + h * v;
      x_lin = &linearization_point_;
      if (iteration > 0 && (find_non_finite(*x_lin, report, "position") || find_collapsed_edge(*x_lin, report))) break;
    }

    const Clock::time_point assembly_start = Clock::now();
    // Assemble: grad U(x_lin), (h^2 + h beta) K into the matrix, and K w. Away from the start
    // x_lin = x0 + h v, so without stiffness damping w is exactly zero and K w is not formed.
    const bool with_product = at_start || beta != 0.0;
    if (with_product) {
      w_.resize(x0.size());
      for_each_entry(static_cast<int>(x0.size()), settings_.threads,
                     [&](int i) { w_[i] = h * (x0[i] + h * v[i] - (*x_lin)[i]) + (h * beta) * v[i]; });
    }
    // Build the system: J = (1 + h alpha) M + (h^2 + h beta) K on the free DOFs, and the
    // right-hand side -r. Without contact each rod's block is built, factored and solved as
    // soon as the rod is assembled, while its values are in cache; contact may change the
    // system first, so there the preconditioner factors it in the solve.
    SparseMatrix& system = assembler_.matrix();
    const double* values = system.valuePtr();
    rhs_free_.resize(n_free);
    residual_.resize(layout.dof_count());
    const double mass_scale = 1.0 + h * alpha;
    if (!(system_mass_scale_ == mass_scale && system_mass_.size() == mass_.size())) {
      system_mass_ = mass_scale * mass_;
      system_mass_scale_ = mass_scale;
    }
    auto build_dofs = [&](int begin, int end) {
      for (int dof = begin; dof < end; ++dof) {
        residual_[dof] = mass_[dof] * (mass_scale * v[dof] - v0[dof]) + h * gradient_[dof];
        if (with_product) residual_[dof] += product_[dof];
        const int f = layout.free_index(dof);
        if (f >= 0) rhs_free_[f] = -residual_[dof];
      }
    };
    const bool solve_per_rod = !contact;
    if (solve_per_rod) {
      preconditioner.prepare_blocks(system);
      guess_.resize(n_free);
    }
    // Each rod's block solved where it is made, into CG's starting guess (see the solve below).
    const int* diagonal = assembler_.diagonal_slots().data();
    const SystemAssembler::RodCallback build_rod = [&](int rod, const BandView& block) {
      const auto [begin, end] = assembler_.rod_dofs(rod);
      build_dofs(begin, end);
      const auto [free_begin, free_end] = layout.rod_free_range(rod);
      for (int f = free_begin; f < free_end; ++f) guess_[f] = rhs_free_[f];
      // A block that is not positive definite starts CG from the Jacobi step, as CG's own
      // preconditioner does there (the matrix's values are final: copied out before this call).
      if (!preconditioner.solve_block_in_place(rod, block, guess_.data() + free_begin))
        for (int f = free_begin; f < free_end; ++f) {
          const double d = values[diagonal[f]];
          guess_[f] = d != 0.0 ? rhs_free_[f] / d : rhs_free_[f];
        }
    };
    EnergyBreakdown potential_at_lin;
    assembler_.assemble(*x_lin, t1, settings_.projection, h * h + h * beta, gradient_, with_product ? &w_ : nullptr,
                        with_product ? &product_ : nullptr, &potential_at_lin,
                        solve_per_rod ? build_rod : SystemAssembler::RodCallback{}, &system_mass_);
    if (solve_per_rod) {
      preconditioner.declare_blocks_solved(values);
    } else {
      for_each_entry(layout.dof_count(), settings_.threads, [&](int dof) { build_dofs(dof, dof + 1); });
    }
    report.assembly_seconds += seconds_since(assembly_start);
    if (find_non_finite(residual_, report, "force")) break;

    // Solve, warm-started from the previous step's first velocity change.
    const Clock::time_point solve_start = Clock::now();
    bool solved = true;
    if (contact) {
      solved = contact_.solve(system, rhs_free_, x0, v, h, iteration == 0 ? warm_start_ : VecX::Zero(n_free).eval(),
                              linear_solve, dv_free_);
    } else {
      // Without contact the rods are uncoupled and the per-rod solves during assembly solved
      // the system exactly: their solution is CG's starting guess, and CG checks its
      // residual (one product) and iterates only if it is not yet within cg_tolerance (then
      // the preconditioner forms the rods' factors for its iterations).
      solver_.compute(system);
      dv_free_ = solver_.solveWithGuess(rhs_free_, guess_);
    }
    report.solve_seconds += seconds_since(solve_start);
    report.cg_residual = solver_.error();
    report.newton_iterations = iteration + 1;
    // The velocity change on all DOFs (zero on fixed ones). A non-finite solution (overflow
    // in CG) is named by the vertex where it appears; v is the step's own buffer, so the state
    // stays as it was.
    const int dofs = layout.dof_count();
    dv_.resize(dofs);
    bool finite = true;  // checked in the same pass; the search for the message only on failure
    const int threads = settings_.threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && dofs > kParallelDofs) reduction(&& : finite)
    for (int dof = 0; dof < dofs; ++dof) {
      const int f = layout.free_index(dof);
      dv_[dof] = f >= 0 ? dv_free_[f] : 0.0;
      finite = finite && std::isfinite(dv_[dof]);
    }
    if (!finite && find_non_finite(dv_, report, "velocity")) break;
    if (!solved || solver_.info() != Eigen::Success) {
      std::ostringstream message;
      message << "conjugate gradient did not converge: relative residual " << solver_.error()
              << " after " << solver_.iterations() << " iterations (cg_tolerance "
              << settings_.cg_tolerance << ")";
      report.ok = false;
      report.failure = message.str();
      break;
    }
    if (iteration == 0 && contact) warm_start_ = dv_free_;  // only the contact solve starts from it

    // Line search on Phi (not while contact constraints are held). For Baraff-Witkin's first
    // solve, linearised at x0, Phi(v0) needs U at x0 + h v0, one more energy evaluation; its
    // slope is that of the linearised residual, r . dv < 0.
    double step_length = 1.0;
    end_energies_known = false;
    const bool in_contact = contact && !contact_.contacts().empty();
    if (settings_.line_search && !in_contact) {
      const Clock::time_point search_start = Clock::now();
      double potential_at_v = potential_at_lin.potential();  // x_lin = x0 + h v, unless at_start
      bool searchable = true;
      if (at_start) {
        trial_x_ = x0 + h * v;
        searchable = assembler_.find_collapsed_edge(trial_x_) < 0;
        if (searchable) potential_at_v = assembler_.potential_energies(trial_x_, t1).potential();
      }
      if (searchable) {
        // K v = product_ / (h^2 + h beta) at the start (w = (h^2 + h beta) v0), product_ / (h beta) after.
        const double damping_scale = at_start ? h * beta / (h * h + h * beta) : 1.0;
        const double slope = -rhs_free_.dot(dv_free_);  // r . dv < 0: J is SPD
        const LineSearch search = line_search(x0, v0, v, h, potential_at_v, slope, damping_scale, report);
        step_length = search.step;
        // A failed search. Newton's directions descend on Phi (J is SPD and r = grad Phi), so
        // for them failing means the change is lost in round-off: the step is converged, take
        // it. Baraff-Witkin's first direction uses the residual linearised at x0 instead of
        // Phi's gradient at x0 + h v0, and can point uphill when the rod turns fast: then,
        // if another iteration follows, it starts over from v0, as Newton from x0 + h v0.
        if (!search.found && at_start && iteration + 1 < iterations) step_length = 0.0;
        end_energies_known = search.energies_known;
        end_energies = search.energies;
      }
      report.assembly_seconds += seconds_since(search_start);
    }
    // The same arithmetic as the line search's trial, bit for bit.
    for_each_entry(static_cast<int>(v.size()), settings_.threads, [&](int i) { v[i] += step_length * dv_[i]; });

    // Converged? The correction against the velocity scale of the step.
    if (settings_.newton_tolerance > 0.0 && iteration + 1 < iterations) {
      const double scale = std::max(v.lpNorm<Eigen::Infinity>(), gravity_speed);
      // The full Newton correction, not the accepted fraction: a line search that shortens the
      // step far from the solution must not look like convergence.
      if (dv_.lpNorm<Eigen::Infinity>() <= settings_.newton_tolerance * scale) break;
    }
  }
  report.cg_iterations = static_cast<int>(preconditioner.applications());

  if (report.ok) {
    // The end positions in a kept buffer (swapped with the state's below): no allocation.
    VecX& x1 = end_positions_;
    x1.resize(x0.size());
    for_each_entry(static_cast<int>(x0.size()), settings_.threads, [&](int i) { x1[i] = x0[i] + h * v[i]; });
    // The edges back to the lengths the last linear solve saw (see SolverSettings), and the
    // velocity that moves the rod there. Not with colliders: it could move a vertex into one.
    if (settings_.length_correction && !contact) {
      const LengthCorrection::Outcome corrected = length_correction_.apply(*x_lin, x1);
      report.length_correction_iterations = corrected.iterations;
      report.uncorrected_rods = corrected.uncorrected_rods;
      for_each_entry(layout.dof_count(), settings_.threads, [&](int dof) {
        if (layout.free_index(dof) >= 0) v[dof] = (x1[dof] - x0[dof]) / h;
      });
      end_energies_known = false;
    }
    if (!find_non_finite(x1, report, "position") && !find_collapsed_edge(x1, report)) {
      if (contact) contact_.report(x1, h, report.contact);
      // x0, v0 and x_lin (which may point at x0) name the state's old vectors: not used after.
      state.positions.swap(x1);
      state.velocities.swap(v);
      if (settings_.linearization == Linearization::Predicted) {  // only the guess needs them
        last_end_v_ = state.velocities;
        last_end_x_ = state.positions;
        last_end_time_ = t1;
      }
      state.time = t1;
    } else {
      end_energies_known = false;
    }
  }
  if (report.ok && !settings_.step_energies) return report;
  if (report.ok && end_energies_known) {
    report.energies = end_energies;
    report.energies.kinetic = 0.5 * state.velocities.dot(mass_.cwiseProduct(state.velocities));
  } else {
    report.energies = energies(state);
  }
  return report;
}

}  // namespace bristle
