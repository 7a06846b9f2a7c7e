#include "bristle/integrator/implicit_euler.hpp"

#include <chrono>
#include <cmath>
#include <sstream>

namespace bristle {
namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}
}  // namespace

ImplicitEuler::ImplicitEuler(const Model& model, SolverSettings settings)
    : model_(model), settings_(settings), assembler_(model), mass_(model.dof_masses()),
      contact_(model, settings.contact) {
  const int n = model.layout.free_dof_count();
  warm_start_ = VecX::Zero(n);
  solver_.preconditioner().set_blocks(model.layout.rod_free_ranges());
  solver_.setTolerance(settings_.cg_tolerance);
  solver_.setMaxIterations(settings_.cg_max_iterations);
}

EnergyBreakdown ImplicitEuler::energies(const State& state) const {
  EnergyBreakdown e = assembler_.potential_energies(state.positions, state.time);
  e.kinetic = 0.5 * state.velocities.dot(mass_.cwiseProduct(state.velocities));
  return e;
}

bool ImplicitEuler::find_non_finite(const VecX& values, StepReport& report, const char* what) const {
  for (int dof = 0; dof < values.size(); ++dof) {
    if (std::isfinite(values[dof])) continue;
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

StepReport ImplicitEuler::step(State& state, double dt) {
  StepReport report;
  const DofLayout& layout = model_.layout;
  const double h = dt;
  const double alpha = model_.damping_mass, beta = model_.damping_stiffness;
  const double t1 = state.time + h;
  const VecX& x0 = state.positions;
  const VecX& v0 = state.velocities;
  const int n_free = layout.free_dof_count();

  // A state this step cannot start from is reported, not assembled (the kernels assert
  // finite, non-degenerate stencils). Its energies are not evaluated either.
  if (find_non_finite(x0, report, "position") || find_non_finite(v0, report, "velocity") ||
      find_collapsed_edge(x0, report))
    return report;

  // Fixed DOFs keep the velocity they carry in the state; free DOFs start from v0.
  VecX v = v0;
  VecX x_lin = x0;
  auto& preconditioner = solver_.preconditioner();
  preconditioner.reset_applications();
  // Contact (src/contact) replaces the plain solve below only when there are colliders.
  const bool contact = contact_.enabled();
  if (contact) contact_.begin_step();
  const ContactSolver::LinearSolve linear_solve = [this](const SparseMatrix& m, const VecX& b,
                                                         const VecX& guess, VecX& x) {
    solver_.compute(m);
    x = solver_.solveWithGuess(b, guess);
    return solver_.info() == Eigen::Success;
  };

  for (int iteration = 0; iteration < std::max(1, settings_.newton_iterations); ++iteration) {
    if (iteration > 0) {
      x_lin = x0 + h * v;
      if (find_non_finite(x_lin, report, "position") || find_collapsed_edge(x_lin, report)) break;
    }

    const Clock::time_point assembly_start = Clock::now();
    // Assemble: grad U(x_lin), (h^2 + h beta) K into the matrix, and K w.
    w_ = h * (x0 + h * v - x_lin) + (h * beta) * v;
    assembler_.assemble(x_lin, t1, settings_.projection, h * h + h * beta, gradient_, &w_, &product_);

    // Build the system: J = (1 + h alpha) M + (h^2 + h beta) K on the free DOFs.
    SparseMatrix& system = assembler_.matrix();
    double* values = system.valuePtr();
    residual_ = mass_.cwiseProduct((1.0 + h * alpha) * v - v0) + h * gradient_ + product_;
    rhs_free_.resize(n_free);
    for (int dof = 0; dof < layout.dof_count(); ++dof) {
      const int f = layout.free_index(dof);
      if (f < 0) continue;
      values[assembler_.diagonal_slots()[f]] += (1.0 + h * alpha) * mass_[dof];
      rhs_free_[f] = -residual_[dof];
    }
    report.assembly_seconds += seconds_since(assembly_start);
    if (find_non_finite(residual_, report, "force")) break;

    // Solve, warm-started from the previous step's first velocity change.
    const Clock::time_point solve_start = Clock::now();
    if (contact) {
      contact_.solve(system, rhs_free_, x0, v, h, iteration == 0 ? warm_start_ : VecX::Zero(n_free).eval(),
                     linear_solve, dv_free_);
    } else {
      solver_.compute(system);
      dv_free_ = solver_.solveWithGuess(rhs_free_, iteration == 0 ? warm_start_ : VecX::Zero(n_free).eval());
    }
    report.solve_seconds += seconds_since(solve_start);
    report.cg_residual = solver_.error();
    report.newton_iterations = iteration + 1;
    // Update the free velocities. A non-finite solution (overflow in CG) is named by the
    // vertex where it appears; v is local, so the state stays as it was.
    for (int dof = 0; dof < layout.dof_count(); ++dof) {
      const int f = layout.free_index(dof);
      if (f >= 0) v[dof] += dv_free_[f];
    }
    if (find_non_finite(v, report, "velocity")) break;
    if (solver_.info() != Eigen::Success) {
      std::ostringstream message;
      message << "conjugate gradient did not converge: relative residual " << solver_.error()
              << " after " << solver_.iterations() << " iterations (cg_tolerance "
              << settings_.cg_tolerance << ")";
      report.ok = false;
      report.failure = message.str();
      break;
    }
    if (iteration == 0) warm_start_ = dv_free_;
  }
  report.cg_iterations = static_cast<int>(preconditioner.applications());

  if (report.ok) {
    VecX x1 = x0 + h * v;
    if (!find_non_finite(x1, report, "position") && !find_collapsed_edge(x1, report)) {
      if (contact) contact_.report(x1, h, report.contact);
      state.positions = std::move(x1);
      state.velocities = std::move(v);
      state.time = t1;
    }
  }
  report.energies = energies(state);
  return report;
}

}  // namespace bristle
