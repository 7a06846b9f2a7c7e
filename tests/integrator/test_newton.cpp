// Newton iterations on the backward Euler step: the line search, the predicted linearisation,
// early exit, threads, the matrix the step really hands to CG, and the strain limit of steps in
// collider contact on curved colliders.

#include <cmath>
#include <cstring>
#include <random>

#include <doctest/doctest.h>
#include <Eigen/SparseCholesky>
#include <nlohmann/json.hpp>

#include "bristle/bench/brush_benchmark.hpp"
#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/model/handle.hpp"
#include "bristle/scene/load_scene.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

/// The hair strand of the performance issue: 50 vertices over 0.2 m, radius 50 um, E = 3 GPa,
/// 1300 kg/m^3, clamped at the root along `direction`. Gravito-bending number about 54: it
/// droops most of the way down, a large rotation.
Rod hair_strand(const Vec3& root, const Vec3& direction, const std::string& name) {
  return straight_rod(49, root, root + 0.2 * direction.normalized(), 3, {0, 1}, make_material(1300.0, 50e-6, 3.0e9),
                      name);
}

/// Several strands pointing different ways, gravity along -y: out-of-plane motion for most.
Model strand_bundle(int strands) {
  std::vector<Rod> rods;
  for (int s = 0; s < strands; ++s) {
    const double angle = 0.7 * s;
    rods.push_back(hair_strand(Vec3(0.0, 0.0, 0.01 * s), Vec3(std::cos(angle), 0.3 * std::sin(1.3 * s), std::sin(angle)),
                               "strand" + std::to_string(s)));
  }
  return make_model(3, std::move(rods), earth_gravity());
}

Vec3 tip(const Model& model, const State& state, int rod) {
  return vertex_position(model, state.positions, rod, model.rods[rod].vertex_count() - 1);
}

/// Distance between a rod's tips in two runs, relative to the strand length.
double tip_error(const Model& model, const State& run, const State& reference, int rod, double length) {
  return (tip(model, run, rod) - tip(model, reference, rod)).norm() / length;
}

/// m g L of one strand: the energy scale of its sag [J].
double strand_energy_scale(const Model& model) {
  const Rod& rod = model.rods[0];
  double mass = 0.0;
  for (int i = 0; i < rod.vertex_count(); ++i) mass += rod.vertex_mass(i);
  return mass * 9.81 * rod.rest_length();
}

/// The fixed-count solver these tests study, with the defaults it had before the converged
/// solver became the default: one iteration, the projected bending Hessian.
SolverSettings fixed_count_solver() {
  SolverSettings s;
  s.newton_iterations = 1;
  s.projection = HessianProjection::Projected;
  return s;
}

State run(const Model& model, SolverSettings settings, double dt, double duration, double* max_rise = nullptr) {
  ImplicitEuler integrator(model, settings);
  State state = initial_state(model);
  double energy = integrator.energies(state).total();
  if (max_rise) *max_rise = 0.0;
  const int steps = static_cast<int>(std::lround(duration / dt));
  for (int k = 0; k < steps; ++k) {
    const StepReport report = integrator.step(state, dt);
    REQUIRE_MESSAGE(report.ok, report.failure);
    if (max_rise) *max_rise = std::max(*max_rise, report.energies.total() - energy);
    energy = report.energies.total();
  }
  return state;
}

/// Converged backward Euler, the performance issue's reference: 10 Newton iterations per step,
/// cg_tolerance 1e-12, the scene defaults otherwise.
State converged_run(const Model& model, double dt, double duration) {
  SolverSettings reference = fixed_count_solver();
  reference.newton_iterations = 10;
  reference.cg_tolerance = 1e-12;
  return run(model, reference, dt, duration);
}

/// The brush benchmark's tuft (bristle bench --brush: nylon bristles of radius 0.1 mm, 25 mm
/// long, roots 28 mm up, clamped in a ferrule under a handle; brush_stroke.json's brush), cut
/// to rows x columns bristles of `segments` edges, rod contact off, the default (converged)
/// solver, on `collider` instead of the paper; `keys`, when given, replace the handle's.
Scene tuft_scene(int rows, int columns, int segments, const nlohmann::json& collider,
                 const nlohmann::json& keys = nlohmann::json()) {
  BrushBenchmarkSettings settings;
  settings.rows = rows;
  settings.columns = columns;
  settings.segments = segments;
  settings.rod_contact = false;
  nlohmann::json scene = nlohmann::json::parse(brush_benchmark_scene(settings));
  scene["colliders"] = nlohmann::json::array({collider});
  if (!keys.is_null()) scene["handles"][0]["keys"] = keys;
  return load_scene_from_string(scene.dump(), "tuft");
}

/// Steps `scene` `steps` times by 1/60 s with its handles, calling after_step(report, state,
/// model) after each step; REQUIREs every step to succeed.
template <typename AfterStep>
void run_tuft(const Scene& scene, int steps, AfterStep&& after_step) {
  Model model = scene.model;
  const HandleDriver handles(model, scene.handles);
  State state = initial_state(model);
  handles.place(model, state);
  ImplicitEuler integrator(model, scene.solver);
  const double dt = 1.0 / 60.0;
  for (int s = 0; s < steps; ++s) {
    CAPTURE(s);
    handles.prepare_step(model, state, dt);
    const StepReport report = integrator.step(state, dt);
    REQUIRE_MESSAGE(report.ok, report.failure);
    state.time = (s + 1) * dt;
    after_step(report, state, model);
  }
}

}  // namespace

TEST_CASE("integrator Newton: converged iterations never gain energy at large steps") {
  // Backward Euler solved to convergence dissipates; a single linearised solve, or two or
  // three Newton iterations, can gain energy at dt = 1/60 s and 1/24 s in 3D (the potential is
  // not convex), which is why docs/scene-format.md recommends converging at large steps:
  // newton_iterations 20 with newton_tolerance 1e-4. Several strands swinging out of plane.
  // Tolerance per step: 1e-9 of m g L (rounding of the energies themselves).
  const Model model = strand_bundle(3);
  const double scale = strand_energy_scale(model);
  for (double dt : {1.0 / 60.0, 1.0 / 24.0}) {
    CAPTURE(dt);
    SolverSettings single = fixed_count_solver();
    double single_rise = 0.0;
    run(model, single, dt, 1.0, &single_rise);
    MESSAGE("dt = " << dt << " s: largest gain in one step with a single solve: " << single_rise / scale
                    << " m g L (not asserted: the failure converging fixes)");
    SolverSettings converged = fixed_count_solver();
    converged.newton_iterations = 20;
    converged.newton_tolerance = 1e-4;
    double rise = 0.0;
    run(model, converged, dt, 1.0, &rise);
    CHECK(rise <= 1e-9 * scale);
  }
}

TEST_CASE("integrator Newton: two iterations from the predicted velocity match converged backward Euler") {
  // The performance issue's accuracy target: after 0.25 s at dt = 1/240 s the strands' tips
  // within 0.5% of the strand length of a converged run (10 iterations, cg_tolerance 1e-12).
  const Model model = strand_bundle(2);
  const double dt = 1.0 / 240.0, duration = 0.25, length = 0.2;
  const State converged = converged_run(model, dt, duration);

  SolverSettings predicted = fixed_count_solver();
  predicted.newton_iterations = 2;
  predicted.linearization = Linearization::Predicted;
  const State fast = run(model, predicted, dt, duration);
  SolverSettings start = fixed_count_solver();
  start.newton_iterations = 2;
  const State slow = run(model, start, dt, duration);
  SolverSettings single = fixed_count_solver();
  const State baraff_witkin = run(model, single, dt, duration);

  for (int rod = 0; rod < 2; ++rod) {
    CAPTURE(rod);
    const double error_predicted = tip_error(model, fast, converged, rod, length);
    const double error_start = tip_error(model, slow, converged, rod, length);
    const double error_single = tip_error(model, baraff_witkin, converged, rod, length);
    CAPTURE(error_predicted);
    CAPTURE(error_start);
    CAPTURE(error_single);
    CHECK(error_predicted < 0.005);
    CHECK(error_predicted < 0.2 * error_start);
    // The converged answer really is far from single solves: the strands have moved.
    CHECK(error_single > 0.1);
  }
}

TEST_CASE("integrator Newton: one solve per step with the length correction matches converged backward Euler") {
  // The strand benchmark's solver (one Baraff-Witkin solve, bending modes, length correction)
  // on strands swinging out of their plane: within 0.5% of the strand length of converged
  // backward Euler after 0.25 s, where the same single solve without the correction lags by
  // more than 10% (the test above), and Gauss-Newton bending, which has no stiffness across
  // the bending plane, is ten times further off than the bending modes.
  const Model model = strand_bundle(2);
  const double dt = 1.0 / 240.0, duration = 0.25, length = 0.2;
  const State converged = converged_run(model, dt, duration);

  SolverSettings corrected = fixed_count_solver();
  corrected.projection = HessianProjection::BendingModes;
  corrected.length_correction = true;
  corrected.line_search = false;
  double max_rise = 0.0;
  const State one_solve = run(model, corrected, dt, duration, &max_rise);
  SolverSettings uncorrected = corrected;
  uncorrected.length_correction = false;
  const State lagging = run(model, uncorrected, dt, duration);
  SolverSettings gauss_newton = corrected;
  gauss_newton.projection = HessianProjection::GaussNewton;
  const State planar_stiffness = run(model, gauss_newton, dt, duration);
  double worst = 0.0, worst_gauss_newton = 0.0;
  for (int rod = 0; rod < 2; ++rod) {
    CAPTURE(rod);
    const double error = tip_error(model, one_solve, converged, rod, length);
    const double error_uncorrected = tip_error(model, lagging, converged, rod, length);
    const double error_gauss_newton = tip_error(model, planar_stiffness, converged, rod, length);
    CAPTURE(error);
    CAPTURE(error_uncorrected);
    CAPTURE(error_gauss_newton);
    CHECK(error < 0.005);
    CHECK(error_uncorrected > 0.1);
    worst = std::max(worst, error);
    worst_gauss_newton = std::max(worst_gauss_newton, error_gauss_newton);
  }
  CHECK(worst_gauss_newton > 10.0 * worst);
  CHECK(max_rise <= 1e-9 * strand_energy_scale(model));
}

TEST_CASE("integrator Newton: newton_tolerance stops early once the correction is negligible") {
  const Model model = strand_bundle(1);
  SolverSettings settings = fixed_count_solver();
  settings.newton_iterations = 20;
  settings.newton_tolerance = 1e-6;
  ImplicitEuler integrator(model, settings);
  State state = initial_state(model);
  int most = 0;
  for (int k = 0; k < 20; ++k) {
    const StepReport report = integrator.step(state, 1.0 / 240.0);
    REQUIRE(report.ok);
    most = std::max(most, report.newton_iterations);
  }
  CHECK(most < 20);
  CHECK(most >= 2);
  // The same steps with every iteration taken end within the tolerance's reach.
  SolverSettings full = settings;
  full.newton_tolerance = 0.0;
  const State reference = run(model, full, 1.0 / 240.0, 20.0 / 240.0);
  CHECK((tip(model, state, 0) - tip(model, reference, 0)).norm() < 1e-6 * 0.2);
}

TEST_CASE("integrator Newton: frames are bitwise identical whatever the thread count") {
  // 40 strands: about 90,000 stored entries, above the size (20,000) at which Eigen runs CG's
  // sparse product on several threads, so that path is exercised too.
  const Model model = strand_bundle(40);
  for (Linearization linearization : {Linearization::Start, Linearization::Predicted}) {
    CAPTURE(static_cast<int>(linearization));
    State results[2];
    for (int t = 0; t < 2; ++t) {
      SolverSettings settings = fixed_count_solver();
      settings.newton_iterations = 2;
      settings.linearization = linearization;
      // The start-linearised runs also take the length correction (threads over rods there too).
      settings.length_correction = linearization == Linearization::Start;
      settings.threads = t + 1;
      results[t] = run(model, settings, 1.0 / 240.0, 10.0 / 240.0);
    }
    CHECK(bitwise_equal(results[0].positions, results[1].positions));
    CHECK(bitwise_equal(results[0].velocities, results[1].velocities));
    CHECK(results[0].velocities.cwiseAbs().maxCoeff() > 0.0);
  }
}

TEST_CASE("integrator Newton: the matrix handed to CG is SPD on stressed rods, damped, at any step") {
  // Compressed, strongly bent, out-of-plane rods with clamped roots, both kinds of damping:
  // after a step the assembler holds the last system (1 + h alpha) M + (h^2 + h beta) K+
  // exactly as CG got it. Its Cholesky factorisation must succeed.
  std::mt19937 rng(17);
  std::vector<Rod> rods;
  for (int r = 0; r < 3; ++r) {
    std::vector<Vec3> rest = random_vertices(12, 0.05, 0.3, 3, rng);
    rods.push_back(rod_from_vertices(rest, 3, {0, 1}, soft_material(), RestShape::Initial, "rod" + std::to_string(r)));
  }
  Model model = make_model(3, std::move(rods), earth_gravity());
  model.damping_mass = 0.3;
  model.damping_stiffness = 1e-3;
  for (double h : {1e-3, 1.0 / 24.0, 1.0}) {
    CAPTURE(h);
    State state = initial_state(model);
    // Squeeze every rod to 70% and fold it hard, out of plane.
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int r = 0; r < 3; ++r) {
      std::vector<Vec3> p = rod_positions(model, state.positions, r);
      std::vector<Vec3> squeezed = {p[0], p[1]};
      for (std::size_t i = 2; i < p.size(); ++i) {
        const Vec3 step = 0.7 * (p[i] - p[i - 1]) + 0.02 * Vec3(u(rng), u(rng), u(rng));
        squeezed.push_back(squeezed.back() + (i % 2 ? 1.0 : -0.6) * step);
      }
      set_rod_positions(model, state.positions, r, squeezed);
    }
    for (int newton : {1, 2}) {
      SolverSettings settings = fixed_count_solver();
      settings.newton_iterations = newton;
      ImplicitEuler integrator(model, settings);
      State s = state;
      const StepReport report = integrator.step(s, h);
      CHECK(report.ok);
      Eigen::SimplicialLLT<SparseMatrix> cholesky(integrator.assembler().matrix());
      CHECK(cholesky.info() == Eigen::Success);
    }
  }
}

// The strain limit of Newton's steps in collider contact (ImplicitEuler::limit_contact_step_by_strain,
// docs/contact.md "A pressed brush under the default solver") was tested on the paper only
// (tests/contact/test_scene_handles.cpp: brushes pressed and dragged on a plane). On a curved
// collider a part of a step no longer keeps every vertex out (the chord dips in), and the
// constraints' normals turn with the iterate.

TEST_CASE("integrator Newton: the strain limit keeps a tuft pressed and dragged over a sphere unstretched") {
  // 4 x 4 bristles of 20 segments pressed 8 mm onto a sphere (its top where the paper was) and
  // dragged 4 cm over it (0.7 s, 42 steps), on spheres of radius 4 and 10 cm. Where the tips
  // stick and slip on the sphere Newton stalls, and its full steps, as on the paper, swing to
  // iterates with edges stretched by several percent. Traced 2026-11-29 (the contact solver
  // changing that day), largest committed strain at 4 cm / 10 cm: with the limit bypassed
  // 2.6% / 1.9% (4.2% / 2.4% with an earlier version), with it 0.70% / 0.73% (0.89% / 1.0%).
  // Which radii show the difference depends on the solver's details (at 5 cm one version gave
  // 0.9% both ways, the next 2.4% against 0.97%); with the limit the committed strain stayed
  // near or under its trust bound, 1%, in every run traced (at most 1.4%).
  for (const double radius : {0.04, 0.1}) {
    CAPTURE(radius);
    const Scene scene = tuft_scene(4, 4, 20,
                                   {{"type", "sphere"}, {"center", {0.0, -radius, 0.0}}, {"radius", radius}, {"friction", 0.4}});
    double largest_strain = 0.0, deepest = 0.0;
    int unconverged = 0, most_contacts = 0;
    long halvings = 0;
    run_tuft(scene, 42, [&](const StepReport& report, const State& state, const Model& model) {
      CHECK(state.positions.allFinite());
      largest_strain = std::max(largest_strain, largest_edge_strain(model, state.positions));
      deepest = std::max(deepest, report.contact.max_penetration_fraction);
      unconverged += !report.converged;
      most_contacts = std::max(most_contacts, report.contact.contact_count());
      halvings += report.line_search_halvings;  // in collider contact, the strain limit's alone
    });
    MESSAGE("radius " << radius << ": largest edge strain " << largest_strain << ", deepest " << deepest
                      << " radii, unconverged steps " << unconverged << ", halvings " << halvings);
    CHECK(largest_strain < 0.015);
    // A part of a step keeps a vertex out of a plane, not of a sphere: the chord dips in, and
    // the next iteration's constraints, or the kept iterate's depth test (1% of a radius
    // beyond the first solve's), take it back. Traced: at most 0.5% of a radius.
    CHECK(deepest < 0.02);
    CHECK(most_contacts >= 16);  // every tip on the sphere
    // The limit acted and Newton stalled, or this does not test the limit (if the solver one
    // day converges these steps, find another case).
    CHECK(halvings > 0);
    CHECK(unconverged > 0);
  }
}

TEST_CASE("integrator Newton: a bristle whose strain limit runs out of halvings takes none of its step, and the others go on") {
  // The strain limit acts rod by rod (ImplicitEuler::limit_contact_step_by_strain): where
  // even 1/1024 of a bristle's Newton step strains one of its edges past the trust bound, that
  // bristle takes none of it (counted in strain_stalled_rods) and keeps its iterate, while the
  // other bristles take theirs and Newton goes on; only where no rod moves does the step end
  // at once, stalled. Either way the step ends finite, reported, neither split nor failed, at
  // each rod's best iterate (keep_best_contact_iterate).
  //
  // The case: 3 x 3 bristles of 80 segments (0.31 mm edges) pressed 10.5 mm in 0.2 s onto a
  // capsule lying across the stroke, then turned by 0.15 rad (30 steps each). Bristle tips
  // wrap around the capsule's side; vertices predicted deep in it take normals turned far from
  // the last iterate's, and Newton's step zigzags along the tip (adjacent vertices moved 5 to
  // 10 mm apart, tens of edge lengths). With the limit taken for the whole tuft (until
  // 2026-12-02) radii of 10 to 13 mm ran its halvings out for the whole tuft in some steps;
  // rod by rod, of radii 6 to 30 mm only 8 mm has a bristle run out (one step, traced
  // 2026-12-02), so it runs too.
  const nlohmann::json keys = {{{"time", 0.0}},
                               {{"time", 0.2}, {"translation", {0.0, -0.0105, 0.0}}},
                               {{"time", 0.5},
                                {"translation", {0.0, -0.0105, 0.0}},
                                {"rotation", {{"axis", {0, 0, 1}}, {"angle", -0.15}}}}};
  int stalled_steps = 0, steps = 0;
  for (const double radius : {0.008, 0.010, 0.012, 0.013}) {
    CAPTURE(radius);
    const nlohmann::json capsule = {{"type", "capsule"},
                                    {"a", {0.0, -radius, -0.05}},
                                    {"b", {0.0, -radius, 0.05}},
                                    {"radius", radius},
                                    {"friction", 0.4}};
    run_tuft(tuft_scene(3, 3, 80, capsule, keys), 30, [&](const StepReport& report, const State& state, const Model& model) {
      ++steps;
      CHECK(report.strain_stalled_rods <= 9 * report.newton_iterations);
      if (report.strain_stalled_rods == 0) return;
      ++stalled_steps;
      CHECK(report.line_search_halvings >= 10);  // the stalled bristle's ten halvings, all refused
      // The other bristles went on: the step did not end at the stalled iteration (a step in
      // collider contact ends unconverged only after 8 Newton iterations past its first solve),
      // and it was not failed and split (a stalled rod is no line search that found nothing).
      CHECK((report.converged || report.newton_iterations >= 9));
      CHECK(report.substeps == 1);
      CHECK(state.positions.allFinite());
      CHECK(state.velocities.allFinite());
      CHECK(report.contact.contact_count() > 0);
      CHECK(report.contact.max_penetration_fraction < 0.01);
      CHECK(largest_edge_strain(model, state.positions) < 0.1);
    });
  }
  MESSAGE(stalled_steps << " of " << steps << " steps had a bristle whose strain limit ran out of halvings");
  // If the solver one day takes none of these steps so, find another case.
  CHECK(stalled_steps > 0);
}

