#include "bristle/analysis/static_solver.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCholesky>

#include "bristle/analysis/contact_barrier.hpp"
#include "bristle/analysis/modes.hpp"
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

/// "rod 'name' vertex i" (or "edge j (twist)") of the free DOF with the largest |g| (the
/// largest residual force or moment).
std::string largest_residual_at(const Model& model, const VecX& gradient) {
  const DofLayout& layout = model.layout;
  int worst = -1;
  double largest = -1.0;
  for (int dof = 0; dof < layout.dof_count(); ++dof)
    if (layout.free_index(dof) >= 0 && std::abs(gradient[dof]) > largest) {
      largest = std::abs(gradient[dof]);
      worst = dof;
    }
  for (int r = 0; worst >= 0 && r < static_cast<int>(model.rods.size()); ++r)
    for (int i = 0; i < model.rods[r].vertex_count(); ++i) {
      const int first = layout.vertex_dof(r, i);
      if (worst >= first && worst < first + model.dimension)
        return "rod '" + model.rods[r].name + "' vertex " + std::to_string(i);
      // A twist DOF's residual is a moment about its edge.
      if (i + 1 < model.rods[r].vertex_count() && worst == layout.edge_dof(r, i))
        return "rod '" + model.rods[r].name + "' edge " + std::to_string(i) + " (twist)";
    }
  return "no free vertex";
}

double energy_magnitude(const EnergyBreakdown& e) {
  return e.potential_magnitude();
}

/// F: the larger of the largest external force on one vertex and E I / L^2 per rod, at full load.
double force_scale(const Model& full) {
  const int D = full.dimension;
  const VecX mass = full.dof_masses();
  std::vector<double> external(full.layout.vertex_count(), 0.0);
  const double g = gravity_magnitude(full);
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
  VecX gradient;  ///< at the last iterate, to name where the residual force is largest
  double residual = 0.0, tolerance = 0.0;  ///< |grad U|_inf there and tol_abs [N]
};

/// Progress test: the solve is abandoned when, within the last kStallWindow iterations,
/// neither has the best |grad U|_inf fallen by 0.1% nor the energy U by more than its
/// round-off (docs/analysis.md, "Failure"). Both are needed: leaving a saddle (a column
/// above its buckling load) lowers U for a hundred iterations while the force grows.
constexpr int kStallWindow = 100;
constexpr double kStallFactor = 0.999;
/// All load steps of one solve, the retries of split steps included, share a budget of this
/// many times max_iterations per requested load step. Without it, a step that cannot converge
/// ran max_iterations again for each of its halvings (seven times in all). Near a buckling
/// threshold a legitimate step needs several hundred iterations, so the budget is per solve,
/// not a smaller cap per step.
constexpr int kBudgetPerLoadStep = 2;
/// And CG iterations, this many per Newton iteration of that budget. The per-rod factors solve
/// an uncoupled system exactly, so a solve takes about one CG iteration per Newton iteration
/// (scenes/validation: 458 in 469, 121 in 123). A system CG cannot solve (stiffnesses of 1e-30
/// and 1e299 N/m in one scene, found by tools/fuzz_scenes.py) fails at every regularisation of
/// direction(), 5 x cg_max_iterations CG iterations for each Newton iteration: 28 s for a
/// 3-rod 2D scene before this bound, about 1 s with it.
constexpr long long kCgIterationsPerNewtonIteration = 100;

/// What is left of one static solve's work, shared by its load steps and their retries.
struct SolveBudget {
  int newton_iterations = 0;
  long long cg_iterations = 0;
  bool spent() const { return newton_iterations <= 0 || cg_iterations <= 0; }
};

/// Newton with line search on one load level. `x` is updated in place.
class NewtonSolver {
 public:
  /// `budget`, when given, counts down the Newton and CG iterations left to the whole solve.
  NewtonSolver(const Model& model, const ContactBarrier& barrier, const StaticSettings& settings,
               StaticResult& result, SolveBudget* budget = nullptr)
      : layout_(model.layout), settings_(settings), result_(result), barrier_(barrier), assembler_(model),
        budget_(budget) {
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
    double contact = barrier_.energy(x);
    const int cap = settings_.max_iterations;
    double best = residual, u_mark = energy.potential() + contact;
    int best_at = 0;

    for (int it = 0;; ++it) {
      result_.residual = residual;
      out.gradient = gradient;
      out.residual = residual;
      out.tolerance = tol_abs;
      if (!std::isfinite(residual)) {
        out.message = "non-finite force";
        return out;
      }
      if (residual <= tol_abs) {
        out.converged = true;
        return out;
      }
      const double u = energy.potential() + contact;
      const double u_noise = 64.0 * kEps * (energy_magnitude(energy) + std::abs(contact));
      if (residual < kStallFactor * best || u < u_mark - u_noise) {
        best = std::min(best, residual);
        u_mark = u;
        best_at = it;
      }
      const bool stalled = it - best_at >= kStallWindow;
      if (it >= cap || stalled || (budget_ && budget_->spent())) {
        std::ostringstream message;
        message << "no convergence after " << it << " Newton iterations ("
                << (stalled ? "no progress in the last " + std::to_string(kStallWindow) + " iterations"
                    : it >= cap                           ? "max_iterations"
                    : budget_->newton_iterations <= 0 ? "the work budget of the whole solve"
                                                      : "the linear solves' work budget of the whole solve")
                << ")";
        out.message = message.str();
        return out;
      }
      if (budget_) --budget_->newton_iterations;
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
      const double e0 = energy.potential() + contact;
      const double noise = 64.0 * kEps * (energy_magnitude(energy) + std::abs(contact));
      double step = 1.0;
      bool accepted = false;
      for (int b = 0; b <= settings_.max_backtracks; ++b, step *= 0.5) {
        x_trial = x;
        for (int dof = 0; dof < layout_.dof_count(); ++dof) {
          const int f = layout_.free_index(dof);
          if (f >= 0) x_trial[dof] += step * d_free[f];
        }
        // A collapsed edge has no direction (the kernels assert on it), a penetrating vertex
        // infinite energy: both are points the line search must step back from.
        if (assembler_.find_collapsed_edge(x_trial) >= 0) continue;
        const double contact1 = barrier_.energy(x_trial);
        if (!std::isfinite(contact1)) continue;
        const EnergyBreakdown e1 = assembler_.potential_energies(x_trial, 0.0);
        const double u1 = e1.potential() + contact1;
        if (!std::isfinite(u1)) continue;
        if (u1 <= e0 + settings_.armijo * step * slope) {
          accepted = true;
        } else if (u1 - e0 <= noise) {
          // Energy change below round-off: judge the step by the force instead.
          assembler_.assemble(x_trial, 0.0, settings_.projection, 0.0, gradient_trial);
          barrier_.add(x_trial, settings_.projection, gradient_trial, nullptr);
          accepted = free_residual(layout_, gradient_trial) < residual;
        }
        if (accepted) {
          energy = e1;
          contact = contact1;
          break;
        }
      }
      if (!accepted) {
        std::ostringstream message;
        message << "line search failed (no step decreases the energy)";
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
      barrier_.add(x, HessianProjection::Exact, gradient, &assembler_.matrix());
      solver_.preconditioner().factorize(assembler_.matrix());  // the assembler's pattern, kept in its arrays
      if (solver_.preconditioner().failed_blocks() == 0) return;
    }
    assembler_.assemble(x, 0.0, settings_.projection, 1.0, gradient);
    barrier_.add(x, settings_.projection, gradient, &assembler_.matrix());
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
      if (budget_) {
        if (budget_->cg_iterations <= 0) break;  // steepest descent below; the solve then stops
        solver_.setMaxIterations(static_cast<int>(
            std::min<long long>(settings_.cg_max_iterations, budget_->cg_iterations)));
      }
      solver_.compute(k);
      d = solver_.solve(-g);
      result_.cg_iterations += solver_.iterations();
      if (budget_) budget_->cg_iterations -= std::max<long long>(1, solver_.iterations());
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
  const ContactBarrier& barrier_;
  SystemAssembler assembler_;
  Solver solver_;
  SolveBudget* budget_;
};

/// Without colliders a rod with no fixed vertex can balance no net external force: no
/// equilibrium exists, and Newton would chase the rod downhill until it gives up. Say so at
/// once ("" when every rod can be in equilibrium).
std::string unsupported_rod(const Model& full) {
  if (!full.colliders.empty()) return "";
  const int D = full.dimension;
  for (int r = 0; r < static_cast<int>(full.rods.size()); ++r) {
    const Rod& rod = full.rods[r];
    if (!rod.fixed.empty()) continue;
    Vec3 net = Vec3::Zero();
    double magnitude = 0.0;
    for (int i = 0; i < rod.vertex_count(); ++i) {
      const Vec3 weight = rod.vertex_mass(i) * full.gravity;
      net += weight;
      magnitude += weight.norm();
    }
    for (const PointLoad& load : full.loads) {
      if (load.rod != r) continue;
      net += load.force;
      magnitude += load.force.norm();
    }
    if (D == 2) net.z() = 0.0;  // only the plane's components act
    if (net.norm() > 1e-12 * magnitude) {
      std::ostringstream message;
      message << "static solve: rod '" << rod.name << "' has no fixed vertex and a net external force of "
              << net.norm() << " N (gravity and loads) with no collider to rest on: it has no "
              << "equilibrium (it would fall forever); fix a vertex or add a collider";
      return message.str();
    }
  }
  return "";
}

/// The largest vertex displacement of a DOF vector [m].
double largest_displacement(const Model& model, const VecX& u) {
  const int D = model.dimension;
  double largest = 0.0;
  for (int v = 0; v < model.layout.vertex_count(); ++v)
    largest = std::max(largest, u.segment(model.layout.vertex_dof(v), D).norm());
  return largest;
}

double longest_rod(const Model& model) {
  double longest = 0.0;
  for (const Rod& rod : model.rods) longest = std::max(longest, rod.rest_length());
  return longest;
}

}  // namespace

double static_force_tolerance(const Model& model, const VecX& x, double relative) {
  const Model full = scaled_model(model, 1.0, std::numeric_limits<double>::infinity());
  return relative * force_scale(full) + roundoff_floor(model, x);
}

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
  const ContactBarrier barrier(full, result.force_scale);

  VecX x = state.positions;
  std::string failure = unsupported_rod(full);
  if (failure.empty() && barrier.enabled()) {
    failure = barrier.lift_out(x);
    if (!failure.empty()) failure = "static solve: " + failure;
  }
  if (failure.empty() && SystemAssembler(model).find_collapsed_edge(x) >= 0)
    failure = barrier.enabled() ? "static solve: lifting the rods out of the colliders collapsed an edge to zero length"
                                : "static solve: the initial state has an edge of zero length";

  const int steps = std::max(1, settings.load_steps);
  // Load levels still to reach, as a stack (a failed increment pushes its midpoint).
  std::vector<double> targets;
  if (failure.empty())
    for (int k = steps; k >= 1; --k) targets.push_back(static_cast<double>(k) / steps);
  double level = 0.0;
  int subdivisions = 0;
  // Split load steps retry from scratch; without a common budget a solve that cannot converge
  // would take (max_subdivisions + 1) times the iterations of one.
  SolveBudget budget;
  budget.newton_iterations = kBudgetPerLoadStep * steps * settings.max_iterations;
  budget.cg_iterations = kCgIterationsPerNewtonIteration * budget.newton_iterations;
  while (!targets.empty()) {
    const double target = targets.back();
    const bool last = target >= 1.0;
    const Model scaled = scaled_model(model, target, settings.load_time);
    NewtonSolver newton(scaled, barrier, settings, result, &budget);
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
    if (subdivisions >= settings.max_subdivisions || !(target - level > 1e-6) || budget.spent()) {
      // The documented form, "static solve: <reason>", naming where the force is largest.
      std::ostringstream message;
      message << "static solve: " << outcome.message << ": largest residual force " << outcome.residual << " N at "
              << largest_residual_at(model, outcome.gradient) << " (tolerance " << outcome.tolerance
              << " N, load factor " << target << ")";
      failure = message.str();
      x.swap(x_try);  // report the last iterate
      break;
    }
    ++subdivisions;
    targets.push_back(0.5 * (level + target));
  }

  SystemAssembler assembler(full);
  VecX gradient;
  // Lifting a rod out of a collider can push two vertices along one ray to the same point (a
  // rod through the centre of a sphere of radius 0, found by tools/fuzz_scenes.py). The solve
  // then fails before it starts, and the report below is of the state as given: the kernels
  // assert on a zero-length edge.
  if (!failure.empty() && assembler.find_collapsed_edge(x) >= 0) x = state.positions;
  // Stable iff the exact Hessian has no negative eigenvalue: positive definite (Cholesky
  // succeeds), or else no eigenvalue below the round-off threshold of modal analysis (Sylvester
  // inertia, modes.hpp). The second case is a neutral direction, an eigenvalue that is zero in
  // exact arithmetic and +-round-off in practice: a buckled 3D column turning about its clamp
  // axis costs no energy, since these rods have no twist. Cholesky alone would call such an
  // equilibrium stable or not at the whim of the last bit.
  auto is_stable = [&](const VecX& at) {
    if (layout.free_dof_count() == 0) return true;
    assembler.assemble(at, 0.0, HessianProjection::Exact, 1.0, gradient);
    barrier.add(at, HessianProjection::Exact, gradient, &assembler.matrix());
    Eigen::SimplicialLLT<SparseMatrix> cholesky(assembler.matrix());
    if (cholesky.info() == Eigen::Success) return true;
    if (barrier.enabled()) return false;  // modal analysis does not see the contact barrier
    State probe = state;
    probe.positions = at;
    ModalSettings modal;
    modal.count = 1;
    const ModalResult modes = modal_analysis(full, probe, modal);
    return modes.ok && modes.unstable_count == 0;
  };
  result.stable = failure.empty() ? is_stable(x) : false;

  // Push off a saddle along its unstable mode and solve again (see the header).
  for (int escape = 0; failure.empty() && !result.stable && escape < settings.saddle_escapes; ++escape) {
    State at = state;
    at.positions = x;
    ModalSettings modal;
    modal.count = 1;
    modal.want_shapes = true;
    const ModalResult modes = modal_analysis(full, at, modal);
    if (!modes.ok || modes.shapes.empty()) break;
    result.unstable_modes = modes.unstable_count;
    if (modes.unstable_count == 0) break;  // singular, not unstable: nothing to push along
    const double size = largest_displacement(full, modes.shapes[0]);
    if (!(size > 0.0)) break;
    VecX x_try = x + (settings.escape_amplitude * longest_rod(full) / size) * modes.shapes[0];
    if (barrier.enabled() && !barrier.lift_out(x_try).empty()) break;
    ++result.saddle_escapes;
    NewtonSolver newton(full, barrier, settings, result);
    if (!newton.solve(x_try, tolerance_at(settings.tolerance, x_try)).converged) break;  // keep the saddle
    x.swap(x_try);
    result.stable = is_stable(x);
  }
  if (failure.empty() && result.saddle_escapes > 0) {
    State at = state;
    at.positions = x;
    ModalSettings modal;
    modal.count = 1;
    const ModalResult modes = modal_analysis(full, at, modal);
    if (modes.ok) result.unstable_modes = modes.unstable_count;
  }

  state.positions = x;
  if (state.velocities.size() != layout.dof_count()) state.velocities = VecX::Zero(layout.dof_count());
  if (assembler.find_collapsed_edge(x) >= 0) {  // only a state given collapsed (failure says so)
    result.message = failure;
    return result;
  }
  assembler.assemble(x, 0.0, HessianProjection::Projected, 0.0, gradient);
  barrier.add(x, HessianProjection::Projected, gradient, nullptr);
  result.residual = free_residual(layout, gradient);
  result.tolerance = tolerance_at(settings.tolerance, x);
  result.energies = assembler.potential_energies(x, 0.0);
  if (barrier.enabled()) {
    const BarrierContacts contacts = barrier.contacts(x);
    result.contacts = contacts.contacts;
    result.min_gap = contacts.min_gap;
    result.contact_forces = contacts.normal_force;
  }
  result.ok = failure.empty();
  result.message = failure;
  if (result.ok)
    for (int dof = 0; dof < layout.dof_count(); ++dof)
      if (layout.free_index(dof) >= 0) state.velocities[dof] = 0.0;
  return result;
}

}  // namespace bristle
