#include "bristle/analysis/static_solver.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCholesky>

#include "bristle/integrator/rod_preconditioner.hpp"

namespace bristle {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

/// The model with gravity and loads scaled by `factor`, loads evaluated at `load_time`.
Model scaled_model(const Model& model, double factor, double load_time) {
  Model scaled = model;
  scaled.gravity = factor * model.gravity;
  for (PointLoad& load : scaled.loads) {
    load.force = factor * load.force_at(load_time);
    load.ramp = 0.0;
  }
  return scaled;
}

/// |g|_inf over the free DOFs.
double free_residual(const DofLayout& layout, const VecX& gradient) {
  double r = 0.0;
  for (int dof = 0; dof < layout.dof_count(); ++dof)
    if (layout.free_index(dof) >= 0) r = std::max(r, std::abs(gradient[dof]));
  return r;
}

double energy_magnitude(const EnergyBreakdown& e) {
  return std::abs(e.stretch) + std::abs(e.bend) + std::abs(e.gravity) + std::abs(e.load);
}

/// F: the larger of the largest external force on one vertex and E I / L^2 per rod, at full load.
double force_scale(const Model& full) {
  const int D = full.dimension;
  const VecX mass = full.dof_masses();
  std::vector<double> external(full.layout.vertex_count(), 0.0);
  const double g = full.gravity.head(D).norm();
  for (int v = 0; v < full.layout.vertex_count(); ++v)
    external[v] = mass[full.layout.vertex_dof(v)] * g;
  for (const PointLoad& load : full.loads)
    external[full.layout.global_vertex(load.rod, load.vertex)] += load.force.head(D).norm();
  double scale = 0.0;
  for (double f : external) scale = std::max(scale, f);
  for (const Rod& rod : full.rods) {
    const double length = rod.rest_length();
    if (length > 0.0) scale = std::max(scale, rod.material.bending_stiffness() / (length * length));
  }
  return scale;
}

/// 16 eps max(E A / lbar) X: the round-off floor of the stretch forces.
double roundoff_floor(const Model& model, const VecX& x) {
  double stiffness = 0.0, extent = x.size() ? x.cwiseAbs().maxCoeff() : 0.0;
  for (const Rod& rod : model.rods) {
    extent = std::max(extent, rod.rest_length());
    for (int j = 0; j < rod.edge_count(); ++j) stiffness = std::max(stiffness, rod.stretch_stiffness(j));
  }
  return 16.0 * kEps * stiffness * extent;
}

struct StepOutcome {
  bool converged = false;
  std::string message;
};

/// Newton with line search on one load level. `x` is updated in place.
class NewtonSolver {
 public:
  NewtonSolver(const Model& model, const StaticSettings& settings, StaticResult& result)
      : layout_(model.layout), settings_(settings), result_(result), assembler_(model) {
    solver_.preconditioner().set_blocks(layout_.rod_free_ranges());
    solver_.setTolerance(settings.cg_tolerance);
    solver_.setMaxIterations(settings.cg_max_iterations);
  }

  StepOutcome solve(VecX& x, double tol_abs) {
    StepOutcome out;
    const int n = layout_.free_dof_count();
    VecX gradient, g_free(n), d_free(n), x_trial, gradient_trial;
    assemble_hessian(x, gradient);
    double residual = free_residual(layout_, gradient);
    EnergyBreakdown energy = assembler_.potential_energies(x, 0.0);

    for (int it = 0;; ++it) {
      result_.residual = residual;
      if (!std::isfinite(residual)) {
        out.message = "non-finite force";
        return out;
      }
      if (residual <= tol_abs) {
        out.converged = true;
        return out;
      }
      if (it >= settings_.max_iterations) {
        std::ostringstream message;
        message << "no convergence in " << settings_.max_iterations << " Newton iterations (|grad U|_inf = "
                << residual << " N, tolerance " << tol_abs << " N)";
        out.message = message.str();
        return out;
      }
      ++result_.iterations;

      for (int dof = 0; dof < layout_.dof_count(); ++dof) {
        const int f = layout_.free_index(dof);
        if (f >= 0) g_free[f] = gradient[dof];
      }
      if (!direction(g_free, d_free)) {
        out.message = "could not compute a descent direction";
        return out;
      }

      // Backtracking (Armijo) line search on U.
      const double slope = g_free.dot(d_free);  // < 0
      const double e0 = energy.potential();
      const double noise = 64.0 * kEps * energy_magnitude(energy);
      double step = 1.0;
      bool accepted = false;
      for (int b = 0; b <= settings_.max_backtracks; ++b, step *= 0.5) {
        x_trial = x;
        for (int dof = 0; dof < layout_.dof_count(); ++dof) {
          const int f = layout_.free_index(dof);
          if (f >= 0) x_trial[dof] += step * d_free[f];
        }
        const EnergyBreakdown e1 = assembler_.potential_energies(x_trial, 0.0);
        const double u1 = e1.potential();
        if (!std::isfinite(u1)) continue;
        if (u1 <= e0 + settings_.armijo * step * slope) {
          accepted = true;
        } else if (u1 - e0 <= noise) {
          // Energy change below round-off: judge the step by the force instead.
          assembler_.assemble(x_trial, 0.0, settings_.projection, 0.0, gradient_trial);
          accepted = free_residual(layout_, gradient_trial) < residual;
        }
        if (accepted) {
          energy = e1;
          break;
        }
      }
      if (!accepted) {
        std::ostringstream message;
        message << "line search failed (|grad U|_inf = " << residual << " N, tolerance " << tol_abs << " N)";
        out.message = message.str();
        return out;
      }
      x.swap(x_trial);
      assemble_hessian(x, gradient);
      residual = free_residual(layout_, gradient);
    }
  }

 private:
  using Solver = Eigen::ConjugateGradient<SparseMatrix, Eigen::Lower | Eigen::Upper, RodBlockPreconditioner>;

  /// The gradient, and in the assembler's matrix the exact Hessian when it is positive
  /// definite (the banded Cholesky of every rod block succeeds), the projected one otherwise.
  void assemble_hessian(const VecX& x, VecX& gradient) {
    if (settings_.exact_when_definite) {
      assembler_.assemble(x, 0.0, HessianProjection::Exact, 1.0, gradient);
      solver_.preconditioner().compute(assembler_.matrix());
      if (solver_.preconditioner().failed_blocks() == 0) return;
    }
    assembler_.assemble(x, 0.0, settings_.projection, 1.0, gradient);
  }

  /// d = -(K+ + mu diag K+)^-1 g, mu = 0 first; a descent direction (g . d < 0) or false.
  /// The matrix in the assembler holds K+ (assembled with the gradient).
  bool direction(const VecX& g, VecX& d) {
    SparseMatrix& k = assembler_.matrix();
    const std::vector<int>& diagonal = assembler_.diagonal_slots();
    const VecX diag_values = [&] {
      VecX v(diagonal.size());
      for (std::size_t i = 0; i < diagonal.size(); ++i) v[i] = k.valuePtr()[diagonal[i]];
      return v;
    }();
    const double max_diag = diag_values.size() ? diag_values.cwiseAbs().maxCoeff() : 0.0;
    const double mus[] = {0.0, 1e-12, 1e-9, 1e-6, 1e-3};
    for (double mu : mus) {
      for (std::size_t i = 0; i < diagonal.size(); ++i)
        k.valuePtr()[diagonal[i]] = diag_values[i] + mu * std::max(std::abs(diag_values[i]), 1e-3 * max_diag);
      if (mu > 0.0) ++result_.regularised_solves;
      solver_.compute(k);
      d = solver_.solve(-g);
      result_.cg_iterations += solver_.iterations();
      if (solver_.info() == Eigen::Success && d.allFinite() && g.dot(d) < 0.0) return true;
    }
    // Last resort: Jacobi-preconditioned steepest descent.
    ++result_.regularised_solves;
    for (int i = 0; i < g.size(); ++i) {
      const double dii = std::abs(diag_values[i]) > 0.0 ? std::abs(diag_values[i]) : (max_diag > 0.0 ? max_diag : 1.0);
      d[i] = -g[i] / dii;
    }
    return d.allFinite() && g.dot(d) < 0.0;
  }

  const DofLayout& layout_;
  const StaticSettings& settings_;
  StaticResult& result_;
  SystemAssembler assembler_;
  Solver solver_;
};

}  // namespace

StaticResult solve_static(const Model& model, State& state, const StaticSettings& settings) {
  StaticResult result;
  const DofLayout& layout = model.layout;
  if (state.positions.size() != layout.dof_count() || !state.positions.allFinite()) {
    result.message = "static solve: the initial state has the wrong size or a non-finite position";
    return result;
  }

  const Model full = scaled_model(model, 1.0, settings.load_time);
  result.force_scale = force_scale(full);
  auto tolerance_at = [&](double relative, const VecX& x) {
    return relative * result.force_scale + roundoff_floor(model, x);
  };

  VecX x = state.positions;
  const int steps = std::max(1, settings.load_steps);
  // Load levels still to reach, as a stack (a failed increment pushes its midpoint).
  std::vector<double> targets;
  for (int k = steps; k >= 1; --k) targets.push_back(static_cast<double>(k) / steps);
  double level = 0.0;
  int subdivisions = 0;
  std::string failure;
  while (!targets.empty()) {
    const double target = targets.back();
    const bool last = target >= 1.0;
    const Model scaled = scaled_model(model, target, settings.load_time);
    NewtonSolver newton(scaled, settings, result);
    VecX x_try = x;
    const StepOutcome outcome =
        newton.solve(x_try, tolerance_at(last ? settings.tolerance : settings.intermediate_tolerance, x_try));
    if (outcome.converged) {
      x.swap(x_try);
      level = target;
      targets.pop_back();
      ++result.load_steps;
      continue;
    }
    if (subdivisions >= settings.max_subdivisions || !(target - level > 1e-6)) {
      std::ostringstream message;
      message << "static solve failed at load factor " << target << ": " << outcome.message;
      failure = message.str();
      x.swap(x_try);  // report the last iterate
      break;
    }
    ++subdivisions;
    targets.push_back(0.5 * (level + target));
  }

  state.positions = x;
  if (state.velocities.size() != layout.dof_count()) state.velocities = VecX::Zero(layout.dof_count());
  SystemAssembler assembler(full);
  VecX gradient;
  assembler.assemble(x, 0.0, HessianProjection::Projected, 0.0, gradient);
  result.residual = free_residual(layout, gradient);
  result.tolerance = tolerance_at(settings.tolerance, x);
  result.energies = assembler.potential_energies(x, 0.0);
  // Stable iff the exact Hessian is positive definite (Cholesky succeeds).
  if (layout.free_dof_count() > 0) {
    assembler.assemble(x, 0.0, HessianProjection::Exact, 1.0, gradient);
    Eigen::SimplicialLLT<SparseMatrix> cholesky(assembler.matrix());
    result.stable = cholesky.info() == Eigen::Success;
  }
  result.ok = failure.empty();
  result.message = failure;
  if (result.ok)
    for (int dof = 0; dof < layout.dof_count(); ++dof)
      if (layout.free_index(dof) >= 0) state.velocities[dof] = 0.0;
  return result;
}

}  // namespace bristle
