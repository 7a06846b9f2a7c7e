// Newton iterations on the rods still moving (SolverSettings::active_rods): a step ends where
// the step over every rod ends, to within the tolerance.

#include <algorithm>
#include <cmath>
#include <cstring>

#include <doctest/doctest.h>

#include "bristle/bench/brush_benchmark.hpp"
#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/model/handle.hpp"
#include "bristle/model/model.hpp"
#include "bristle/scene/load_scene.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;

namespace {

/// One step taken from the same state both ways: Newton's later iterations on the moving rods
/// (`active`) and on all rods (`all`). Where both converged in the same substeps, both are
/// backward Euler steps to the tolerance, and their ends differ by about that much at most.
struct StepComparison {
  int compared = 0, compared_partial = 0;
  double worst = 0.0;  // largest difference over the rod length

  /// True where the two steps were compared.
  bool add(const StepReport& active, const StepReport& all, const VecX& x_active, const VecX& x_all, double length,
           double tolerance) {
    REQUIRE_MESSAGE(active.ok, active.failure);
    REQUIRE_MESSAGE(all.ok, all.failure);
    if (!(active.converged && all.converged && active.substeps == all.substeps)) return false;
    const double difference = (x_active - x_all).lpNorm<Eigen::Infinity>();
    worst = std::max(worst, difference / length);
    CHECK(difference <= 4.0 * tolerance * length);
    ++compared;
    compared_partial += active.partial_iterations > 0;
    return true;
  }
};

/// The benchmark's painter's stroke on a tilted 6 x 6 brush of 20-segment bristles (about 3 s
/// in Release), placed by its handle.
struct TiltedBrush {
  static BrushBenchmarkSettings six_by_six() {
    BrushBenchmarkSettings settings;
    settings.rows = 6;
    settings.columns = 6;
    settings.tilt = 0.9;
    return settings;
  }
  BrushBenchmarkSettings settings = six_by_six();
  Scene scene = load_scene_from_string(brush_benchmark_scene(settings), "brush benchmark");
  Model model = scene.model;
  HandleDriver handles{model, scene.handles};
  State state = initial_state(model);
  TiltedBrush() { handles.place(model, state); }

  int steps() const { return static_cast<int>(std::lround(1.2 / settings.dt)); }
  double length() const { return model.rods.front().rest_length(); }
  /// Each step of the stroke taken twice from the same state, with `first` and `second`;
  /// visit(report_first, report_second, state_first, state_second, solver_first,
  /// solver_second) after each; the stroke goes on from the second's end.
  template <class Visit>
  void stroke_both_ways(const SolverSettings& first, const SolverSettings& second, Visit&& visit) {
    for (int s = 0; s < steps(); ++s) {
      handles.prepare_step(model, state, settings.dt);
      State with_first = state, with_second = state;
      ImplicitEuler first_solver(model, first), second_solver(model, second);
      const StepReport a = first_solver.step(with_first, settings.dt);
      const StepReport b = second_solver.step(with_second, settings.dt);
      CAPTURE(s);
      visit(a, b, with_first, with_second, first_solver, second_solver);
      state = with_second;
      state.time = (s + 1) * settings.dt;
    }
  }
  /// The whole stroke side by side, `first` and `second` (made on this model) each stepping its
  /// own state, the handles driven by the first's: both must end every step at the same
  /// positions and velocities, bit for bit. visit(report_first, report_second) after each step.
  template <class Visit>
  void stroke_same_bits(ImplicitEuler& first, ImplicitEuler& second, Visit&& visit) {
    State a = state, b = state;
    for (int s = 0; s < steps(); ++s) {
      CAPTURE(s);
      handles.prepare_step(model, a, settings.dt);
      // The handles' prescribed velocities (prepare_step also moves the colliders: once a step).
      for (int dof = 0; dof < model.layout.dof_count(); ++dof)
        if (model.layout.free_index(dof) < 0) b.velocities[dof] = a.velocities[dof];
      const StepReport ra = first.step(a, settings.dt);
      const StepReport rb = second.step(b, settings.dt);
      REQUIRE_MESSAGE(ra.ok, ra.failure);
      REQUIRE_MESSAGE(rb.ok, rb.failure);
      REQUIRE(a.positions.size() == b.positions.size());
      CHECK(std::memcmp(a.positions.data(), b.positions.data(), sizeof(double) * a.positions.size()) == 0);
      CHECK(std::memcmp(a.velocities.data(), b.velocities.data(), sizeof(double) * a.velocities.size()) == 0);
      visit(ra, rb);
      b.time = a.time;
    }
  }
};

}  // namespace

TEST_CASE("active rods: a tilted brush's touchdown steps end where the steps over every rod end") {
  // A tilted 6 x 6 brush of 20-segment bristles through the benchmark's stroke (about 3 s in
  // Release): from the same state, each step is taken twice, once with Newton's
  // later iterations on the bristles still moving and once on all of them. Both are converged
  // backward Euler steps (every correction below the tolerance, 1e-3 of a bristle's length),
  // so where both took the same substeps their ends differ by about that much at most. An
  // iteration over the moving bristles alone may not end the step: if it did, the held
  // bristles' residuals, which changed since they were last solved, would go unmeasured.
  TiltedBrush brush;
  SolverSettings all_rods = brush.scene.solver;
  all_rods.active_rods = false;
  SolverSettings active_rods = brush.scene.solver;
  REQUIRE(active_rods.active_rods);  // the default
  const int steps = brush.steps();
  StepComparison comparison;
  int partial_iterations = 0;
  brush.stroke_both_ways(active_rods, all_rods, [&](const StepReport& active, const StepReport& all, const State& with_active,
                                                    const State& with_all, const ImplicitEuler&, const ImplicitEuler&) {
    CHECK(all.partial_iterations == 0);
    comparison.add(active, all, with_active.positions, with_all.positions, brush.length(), brush.scene.solver.tolerance);
    CHECK(active.rod_crossings == 0);
    partial_iterations += active.partial_iterations;
  });
  MESSAGE("largest difference " << comparison.worst << " of a bristle's length over " << comparison.compared
                                << " steps, " << comparison.compared_partial << " of them with " << partial_iterations
                                << " iterations on the moving bristles");
  CHECK(comparison.compared >= steps / 2);
  CHECK(comparison.compared_partial >= 1);
  CHECK(partial_iterations >= 50);  // or the brush no longer exercises the active rods
}

TEST_CASE("active rods: rods thrown onto held rods beside hanging rods end each step where the full solve ends") {
  // Six cells a metre apart, each an upper rod thrown down (1 to 2.5 m/s) across two held
  // rods at dt = 1/24 s (the crossing drop of the rod-contact tests), beside twenty rods
  // hanging still from their top vertex. After a step's first iterations only the landing
  // rods move: each step is taken twice from the same state, with Newton's later iterations
  // on the moving rods and on all rods; both converge, and end within the tolerance's reach of
  // each other (1e-3 of a rod's length per correction).
  const double radius = 0.001;
  const Material nylon = test::make_material(1140.0, radius, 3.0e9);
  std::vector<Rod> rods;
  std::vector<std::pair<int, double>> thrown;  // rod, speed
  for (int cell = 0; cell < 6; ++cell) {
    const double x0 = cell * 1.0;
    for (const double x : {x0 - 0.03, x0 + 0.03}) {
      std::vector<int> all;
      for (int i = 0; i <= 6; ++i) all.push_back(i);
      rods.push_back(test::straight_rod(6, Vec3(x, -0.03, 0), Vec3(x, 0.03, 0), 3, all, nylon));
    }
    // Thrown from 1 to 21 cm up: each lands in its own step.
    const double z = 0.01 + 0.04 * cell;
    thrown.emplace_back(static_cast<int>(rods.size()), 1.0 + 0.3 * cell);
    rods.push_back(test::straight_rod(10, Vec3(x0 - 0.05, 0.002 * cell, z), Vec3(x0 + 0.05, 0.002 * cell, z), 3, {},
                                      nylon));
  }
  for (int k = 0; k < 20; ++k) {
    const double x = 0.5 + 0.3 * k;
    rods.push_back(test::straight_rod(10, Vec3(x, 1.0, 0.1), Vec3(x, 1.0, 0.0), 3, {0}, nylon));
  }
  Model model = test::make_model(3, std::move(rods), Vec3(0, 0, -9.81));
  model.rod_contact.enabled = true;
  State state = initial_state(model);
  for (const auto& [rod, speed] : thrown)
    for (int i = 0; i < model.rods[rod].vertex_count(); ++i) state.velocities[model.layout.vertex_dof(rod, i) + 2] = -speed;
  SolverSettings active_rods;
  SolverSettings all_rods;
  all_rods.active_rods = false;
  const double dt = 1.0 / 24.0, length = 0.1, tolerance = active_rods.tolerance;
  StepComparison comparison;
  int active_total = 0, all_total = 0;
  for (int s = 0; s < 24; ++s) {
    State with_active = state, with_all = state;
    ImplicitEuler active_solver(model, active_rods), all_solver(model, all_rods);
    const StepReport active = active_solver.step(with_active, dt);
    const StepReport all = all_solver.step(with_all, dt);
    CAPTURE(s);
    CHECK(all.partial_iterations == 0);
    // The first step (one rod landing, the others in the air or hanging) costs no more.
    if (comparison.add(active, all, with_active.positions, with_all.positions, length, tolerance) && s == 0)
      CHECK(active.newton_iterations <= all.newton_iterations);
    active_total += active.newton_iterations;
    all_total += all.newton_iterations;
    state = with_all;
  }
  // Once landed rods are held, a step ends only on an iteration over all rods, one more than
  // where the full solve ended, and that one can find the barrier's force estimates not yet
  // consistent and go on (a landing step: 24 iterations against 13).
  MESSAGE("Newton iterations " << active_total << " against " << all_total << " over every rod");
  CHECK(active_total <= 1.5 * all_total);
  MESSAGE("largest difference " << comparison.worst << " of a rod's length over " << comparison.compared << " steps, "
                                << comparison.compared_partial
                                << " of them with iterations on the moving rods");
  CHECK(comparison.compared >= 16);
  CHECK(comparison.compared_partial >= 3);
}

TEST_CASE("split solves: a tilted brush's steps end where the steps with one CG over every rod end") {
  // SolverSettings::split_coupled_solves: the bristles no other bristle touches are solved by
  // their own factors and CG runs on the coupled ones, its test against the whole |b|. From
  // the same state each step of a tilted 6 x 6 brush's stroke is taken both ways; both are
  // converged backward Euler steps, so where both took the same substeps their ends differ by
  // about the tolerance at most, and no bristle passes through another.
  TiltedBrush brush;
  SolverSettings split = brush.scene.solver;
  REQUIRE(split.split_coupled_solves);  // the default
  SolverSettings whole = brush.scene.solver;
  whole.split_coupled_solves = false;
  StepComparison comparison;
  long split_solves = 0;
  brush.stroke_both_ways(split, whole, [&](const StepReport& a, const StepReport& b, const State& with_split,
                                           const State& with_whole, const ImplicitEuler& split_solver,
                                           const ImplicitEuler& whole_solver) {
    CHECK(whole_solver.split_solves() == 0);
    split_solves += split_solver.split_solves();
    CHECK(a.rod_crossings == 0);
    comparison.add(a, b, with_split.positions, with_whole.positions, brush.length(), brush.scene.solver.tolerance);
  });
  MESSAGE("largest difference " << comparison.worst << " of a bristle's length over " << comparison.compared
                                << " steps; " << split_solves << " split solves");
  CHECK(comparison.compared >= brush.steps() / 2);
  CHECK(split_solves >= 100);  // or the brush no longer exercises the split
}

TEST_CASE("reused rods: a tilted brush's stroke with rods taken from their last assembly is the same bits") {
  // SystemAssembler::set_reuse_unchanged_rods, which the step turns on: the held rods of a
  // partial iteration, and any rod whose DOFs did not change, keep their last assembly's
  // results. That is exact only if nothing changed the system matrix in between: the contact
  // solver filters it in place where no pair couples the rods (the brush before its bristles
  // touch) and must put every value back. The whole stroke with reuse and without it: the same
  // positions and velocities, bit for bit, at every step, on two threads.
  TiltedBrush brush;
  SolverSettings settings = brush.scene.solver;
  settings.threads = 2;
  ImplicitEuler with_reuse(brush.model, settings), without_reuse(brush.model, settings);
  without_reuse.assembler().set_reuse_unchanged_rods(false);
  int partial_iterations = 0, coupled_steps = 0, uncoupled_contact_steps = 0;
  brush.stroke_same_bits(with_reuse, without_reuse, [&](const StepReport& ra, const StepReport& rb) {
    CHECK(ra.newton_iterations == rb.newton_iterations);
    partial_iterations += ra.partial_iterations;
    (ra.rod_contact.pairs > 0 ? coupled_steps : uncoupled_contact_steps) += ra.contact.contact_count() > 0 ? 1 : 0;
  });
  MESSAGE(partial_iterations << " partial iterations; steps in collider contact with pairs " << coupled_steps
                             << ", without " << uncoupled_contact_steps);
  CHECK(partial_iterations >= 50);
  CHECK(coupled_steps >= 10);
  CHECK(uncoupled_contact_steps >= 1);
}

TEST_CASE("kept rod solutions: a tilted brush's stroke with unchanged rods' solves kept is the same bits") {
  // ImplicitEuler::cg_over_coupled_rods keeps, in the contact solver's later passes of a
  // Newton iteration, the solution and factor of each rod that no pair couples, that its last
  // pass solved by its own factor and that the pass did not change (ContactSolver's
  // same_rods). That is exact only if the contact solver's word is right and the kept entries
  // are the filtered system's solution, so the stroke with and without keeping must give the
  // same positions and velocities, bit for bit, at every step.
  TiltedBrush brush;
  SolverSettings settings = brush.scene.solver;
  settings.threads = 2;
  ImplicitEuler keeping(brush.model, settings), solving(brush.model, settings);
  solving.set_keep_unchanged_rod_solutions(false);
  brush.stroke_same_bits(keeping, solving, [&](const StepReport& ra, const StepReport& rb) {
    CHECK(ra.cg_iterations == rb.cg_iterations);
  });
  MESSAGE(keeping.kept_rod_solutions() << " rod solves kept of " << keeping.split_solves() << " split solves");
  CHECK(solving.kept_rod_solutions() == 0);
  CHECK(keeping.kept_rod_solutions() >= 1000);  // or the brush no longer exercises the keeping
}
