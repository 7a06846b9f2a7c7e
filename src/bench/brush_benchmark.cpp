#include "bristle/bench/brush_benchmark.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "bristle/bench/strand_benchmark.hpp"
#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/io/crc32.hpp"
#include "bristle/model/handle.hpp"
#include "bristle/scene/load_scene.hpp"

namespace bristle {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The painter's stroke's handle keys for a tuft whose lowest vertex starts at height `lowest`
/// [m] with its axis `tilt` [rad] from the vertical: down to 0.3 mm above the paper by 0.2 s
/// (the tips land at the smooth interpolation's slow start of the press), 4 cos(tilt) mm lower
/// (the height of 4 mm along the axis) by 0.4 s, 4 cm along +x by 0.9 s, 14 mm up by 1.15 s.
nlohmann::json painter_keys(double lowest, double tilt) {
  const double touch = -(lowest - 0.0003);
  const double pressed = -(lowest + 0.004 * std::cos(tilt));
  return {{{"time", 0.0}},
          {{"time", 0.2}, {"translation", {0, touch, 0}}},
          {{"time", 0.4}, {"translation", {0, pressed, 0}}},
          {{"time", 0.9}, {"translation", {0.04, pressed, 0}}},
          {{"time", 1.15}, {"translation", {0.045, pressed + 0.014, 0}}}};
}

}  // namespace

std::string brush_benchmark_scene(const BrushBenchmarkSettings& settings) {
  // brush_stroke.json's bristles and paper, with rows x columns bristles of `segments` edges, held
  // vertical with tests/contact/scenes/vertical_brush.json's stroke or tilted with the painter's
  // stroke; no solver keys (the defaults).
  const double tilt = settings.tilt;
  nlohmann::json scene = {
      {"format", "bristle-scene/1"},
      {"name", "brush_benchmark"},
      {"dimension", 3},
      {"time", {{"dt", settings.dt}, {"frame_dt", settings.dt}, {"duration", settings.duration}}},
      {"gravity", {0, -9.81, 0}},
      {"damping", {{"mass", 2.0}, {"stiffness", 0.0}}},
      {"materials", {{"nylon", {{"density", 1140}, {"radius", 0.0001}, {"youngs_modulus", 3.0e9}}}}},
      {"rods",
       {{{"name", "tuft"},
         {"material", "nylon"},
         {"generator",
          {{"type", "brush"},
           {"layout", {{"type", "grid"}, {"rows", settings.rows}, {"columns", settings.columns}, {"spacing", 0.0005}}},
           {"root", {0, 0.028, 0}},
           {"direction", tilt > 0.0 ? nlohmann::json{-std::sin(tilt), -std::cos(tilt), 0} : nlohmann::json{0, -1, 0}},
           {"length", 0.025},
           {"segments", settings.segments},
           {"jitter", {{"length", 0.05}, {"direction", 0.12}, {"seed", 3}}}}},
         {"fixed", {0, 1}}}}},
      {"colliders", {{{"type", "plane"}, {"point", {0, 0, 0}}, {"normal", {0, 1, 0}}, {"friction", 0.4}}}},
      {"rod_contact", {{"enabled", settings.rod_contact}}},
      {"handles",
       {{{"name", "ferrule"},
         {"rods", {"tuft"}},
         {"pivot", {0, 0.028, 0}},
         {"interpolation", "smooth"},
         {"keys",
          {{{"time", 0.0}},
           {{"time", 0.4}, {"translation", {0, -0.008, 0}}},
           {{"time", 0.9},
            {"translation", {0.04, -0.008, 0}},
            {"rotation", {{"axis", {0, 0, 1}}, {"angle", -0.15}}}},
           {{"time", 1.15},
            {"translation", {0.045, 0.006, 0}},
            {"rotation", {{"axis", {0, 0, 1}}, {"angle", 0.0}}}}}}}}}};
  if (tilt > 0.0) {
    // The keys depend on where the jittered tips start: the scene is planted once to find the
    // lowest vertex, as a user would read it off frame 0.
    const Scene planted = load_scene_from_string(scene.dump(), "brush benchmark");
    const State start = initial_state(planted.model);
    double lowest = std::numeric_limits<double>::infinity();
    for (int r = 0; r < static_cast<int>(planted.model.rods.size()); ++r)
      for (int i = 0; i < planted.model.rods[r].vertex_count(); ++i)
        lowest = std::min(lowest, vertex_position(planted.model, start.positions, r, i).y());
    scene["name"] = "brush_benchmark_painter";
    scene["handles"][0]["keys"] = painter_keys(lowest, tilt);
  }
  return scene.dump(1);
}

nlohmann::json iteration_record_json(const IterationRecord& record) {
  return {{"t", record.time},
          {"h", record.h},
          {"iteration", record.iteration},
          {"partial", record.partial},
          {"rods_solved", record.rods_solved},
          {"correction", record.correction},
          {"tolerance", record.tolerance},
          {"ccd_limited", record.ccd_limited},
          {"step", record.step_length},
          {"forces_consistent", record.forces_consistent},
          {"deepest_in_collider", record.deepest_in_collider},
          {"seconds", record.seconds}};
}

BrushBenchmarkResult run_brush_benchmark(const BrushBenchmarkSettings& settings) {
  const Scene scene = load_scene_from_string(brush_benchmark_scene(settings), "brush benchmark");
  Model model = scene.model;
  const HandleDriver handles(model, scene.handles);
  State state = initial_state(model);
  handles.place(model, state);
  SolverSettings solver = scene.solver;
  solver.step_energies = false;
  solver.threads = settings.threads;
  solver.active_rods = settings.active_rods;
  ImplicitEuler integrator(model, solver);
  if (settings.iteration_log) integrator.set_iteration_log(settings.iteration_log);

  BrushBenchmarkResult result;
  result.bristles = static_cast<int>(model.rods.size());
  for (const Rod& rod : model.rods) result.vertices += rod.vertex_count();
  result.threads = settings.threads;
  result.steps = static_cast<int>(std::lround(settings.duration / settings.dt));
  result.min_gap_fraction = std::numeric_limits<double>::infinity();
  double assembly = 0.0, solve = 0.0;
  for (int s = 0; s < result.steps; ++s) {
    const Clock::time_point start = Clock::now();
    handles.prepare_step(model, state, settings.dt);
    const StepReport report = integrator.step(state, settings.dt);
    const double step_seconds = seconds_since(start);
    result.seconds += step_seconds;
    result.failed_attempts += report.failed_attempts;
    result.failed_attempt_newton_iterations += report.failed_attempt_newton_iterations;
    result.failed_attempt_seconds += report.failed_attempt_seconds;
    result.stages += report.stages;
    assembly += report.assembly_seconds;
    solve += report.solve_seconds;
    result.cg_iterations += report.cg_iterations;
    result.cg_iterations_max = std::max(result.cg_iterations_max, report.cg_iterations);
    result.newton_iterations += report.newton_iterations;
    result.partial_iterations += report.partial_iterations;
    result.contact_solves += report.contact.solves;
    result.contact_rod_solves += report.contact.rod_solves;
    if (!report.ok) {
      result.ok = false;
      result.failure = "step " + std::to_string(s + 1) + " (t = " + std::to_string(state.time) + " s): " + report.failure;
      break;
    }
    ++result.steps_taken;
    // As the runner keeps time: counted in steps, no drift.
    state.time = static_cast<double>(result.steps_taken) * settings.dt;
    if (!report.converged) ++result.unconverged_steps;
    (report.converged ? result.converged_seconds : result.unconverged_seconds) += step_seconds;
    (report.converged ? result.converged_newton_iterations : result.unconverged_newton_iterations) +=
        report.newton_iterations;
    result.unconverged_rod_steps += report.unconverged_rods;
    result.rod_contact_pairs_max = std::max(result.rod_contact_pairs_max, report.rod_contact.pairs);
    result.min_gap_fraction = std::min(result.min_gap_fraction, report.rod_contact.min_gap_fraction);
    result.crossings += report.rod_crossings;
    result.collider_contacts_max = std::max(result.collider_contacts_max, report.contact.contact_count());
    result.max_depth_fraction = std::max(result.max_depth_fraction, report.contact.max_penetration_fraction);
    result.max_edge_strain = std::max(result.max_edge_strain, largest_edge_strain(model, state.positions));
  }
  const double vertex_steps = static_cast<double>(result.vertices) * std::max(1, result.steps_taken);
  result.us_per_vertex_step = 1e6 * result.seconds / vertex_steps;
  result.us_per_vertex_step_assembly = 1e6 * assembly / vertex_steps;
  result.us_per_vertex_step_solve = 1e6 * solve / vertex_steps;
  result.positions_crc = crc32(state.positions.data(), sizeof(double) * static_cast<std::size_t>(state.positions.size()));
  result.peak_rss_bytes = peak_rss_bytes();
  return result;
}

nlohmann::json BrushBenchmarkResult::to_json() const {
  nlohmann::json j;
  j["bristles"] = bristles;
  j["vertices"] = vertices;
  j["steps"] = steps;
  j["steps_taken"] = steps_taken;
  j["threads"] = threads;
  j["seconds"] = seconds;
  j["us_per_vertex_step"] = us_per_vertex_step;
  j["us_per_vertex_step_assembly"] = us_per_vertex_step_assembly;
  j["us_per_vertex_step_solve"] = us_per_vertex_step_solve;
  j["cg_iterations"] = cg_iterations;
  j["cg_iterations_max"] = cg_iterations_max;
  j["newton_iterations"] = newton_iterations;
  j["partial_iterations"] = partial_iterations;
  j["contact_solves"] = contact_solves;
  j["contact_rod_solves"] = contact_rod_solves;
  j["unconverged_steps"] = unconverged_steps;
  j["unconverged_rod_steps"] = unconverged_rod_steps;
  j["converged_seconds"] = converged_seconds;
  j["converged_newton_iterations"] = converged_newton_iterations;
  j["unconverged_seconds"] = unconverged_seconds;
  j["unconverged_newton_iterations"] = unconverged_newton_iterations;
  j["failed_attempts"] = failed_attempts;
  j["failed_attempt_newton_iterations"] = failed_attempt_newton_iterations;
  j["failed_attempt_seconds"] = failed_attempt_seconds;
  j["first_solves"] = stages.first_solves;
  j["first_solve_seconds"] = stages.first_solve_seconds;
  j["full_iteration_seconds"] = stages.full_iteration_seconds;
  j["partial_iteration_seconds"] = stages.partial_iteration_seconds;
  j["path_check_seconds"] = stages.path_check_seconds;
  j["commit_seconds"] = stages.commit_seconds;
  j["rod_contact_pairs_max"] = rod_contact_pairs_max;
  // JSON has no infinity: no pair came near, null.
  j["min_gap_fraction"] = std::isfinite(min_gap_fraction) ? nlohmann::json(min_gap_fraction) : nlohmann::json();
  j["crossings"] = crossings;
  j["collider_contacts_max"] = collider_contacts_max;
  j["max_edge_strain"] = max_edge_strain;
  j["max_depth_fraction"] = max_depth_fraction;
  j["positions_crc32"] = positions_crc;
  j["peak_rss_bytes"] = peak_rss_bytes;
  j["ok"] = ok;
  if (!ok) j["failure"] = failure;
  return j;
}

}  // namespace bristle
