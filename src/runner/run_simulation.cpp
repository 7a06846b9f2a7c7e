#include "bristle/runner/run_simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "bristle/io/frame_json.hpp"
#include "bristle/io/frame_writer.hpp"
#include "bristle/model/handle.hpp"
#include "bristle/runner/frame_stats.hpp"

namespace bristle {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string format_time(double t) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.6g", t);
  return buffer;
}

/// "" when `frame` can be written; otherwise why not. A frame never holds a non-finite number
/// (JSON would hold null, docs/output-format.md): an overflow ends the run as a failure.
std::string unwritable(const Frame& frame) {
  const std::string bad = first_non_finite(frame);
  return bad.empty() ? std::string() : "frame " + std::to_string(frame.index) + " would hold a non-finite number at " + bad;
}

RunResult failed_run(RunResult result, std::string message, FrameWriter& writer, Clock::time_point start) {
  result.outcome = RunOutcome::Failed;
  result.message = std::move(message);
  result.status = "failed: " + result.message;
  writer.finish(result.status);
  result.wall_seconds = seconds_since(start);
  return result;
}

bool stop_requested(const RunOptions& options) { return options.stop != nullptr && *options.stop != 0; }

RunResult interrupted_run(RunResult result, std::string where, FrameWriter& writer, Clock::time_point start) {
  result.outcome = RunOutcome::Interrupted;
  result.message = std::move(where);
  result.status = "interrupted";
  writer.finish(result.status);
  result.wall_seconds = seconds_since(start);
  return result;
}

RunResult run_static(const Scene& scene, FrameWriter& writer, const RunOptions& options,
                     const ProgressCallback& progress, Clock::time_point start) {
  RunResult result;
  const Model& model = scene.model;
  State state = initial_state(model);
  const ImplicitEuler energies(model, scene.solver);  // only for the frames' energies

  RunProgress report;
  report.frame_count = 2;
  report.duration = scene.time.duration;
  Frame initial = make_frame(model, state, 0);
  initial.stats = FrameStats().take(energies.energies(state));
  initial.stats["mode"] = "static";
  if (const std::string why = unwritable(initial); !why.empty())
    return failed_run(result, "static solve: " + why, writer, start);
  writer.write(initial);
  result.frames_written = 1;
  report.frame_written = true;
  report.elapsed_seconds = seconds_since(start);
  if (progress) progress(report);
  if (stop_requested(options)) return interrupted_run(result, "before the static solve", writer, start);

  result.static_result = solve_static(model, state, options.static_settings);
  if (!result.static_result.ok) {
    result.outcome = RunOutcome::Failed;
    result.message = result.static_result.message;
    result.status = "failed: " + result.message;
    writer.finish(result.status);
    result.wall_seconds = seconds_since(start);
    return result;
  }
  // The equilibrium stands for where the scene comes to rest: it is written at the end of
  // the scene's time span (the time has no other meaning; loads are applied in full).
  state.time = scene.time.duration;
  Frame equilibrium = make_frame(model, state, 1);
  equilibrium.stats = static_stats(result.static_result);
  // Energies under the loads the solve used (in full), kinetic zero.
  equilibrium.stats["energies"] = energies_to_json(result.static_result.energies);
  if (const std::string why = unwritable(equilibrium); !why.empty())
    return failed_run(result, "static solve: " + why, writer, start);
  writer.write(equilibrium);
  result.frames_written = 2;
  result.outcome = RunOutcome::Complete;
  result.status = "complete";
  writer.finish(result.status);
  result.wall_seconds = seconds_since(start);
  if (progress) {
    report.frame = 1;
    report.time = state.time;
    report.elapsed_seconds = result.wall_seconds;
    progress(report);
  }
  return result;
}

}  // namespace

StaticSettings static_run_settings() {
  StaticSettings settings;
  settings.saddle_escapes = 3;
  return settings;
}

nlohmann::json static_stats(const StaticResult& result) {
  nlohmann::json json;
  json["mode"] = "static";
  json["newton_iterations"] = result.iterations;
  json["residual"] = result.residual;
  json["tolerance"] = result.tolerance;
  json["force_scale"] = result.force_scale;
  json["relative_residual"] = result.force_scale > 0.0 ? result.residual / result.force_scale : 0.0;
  json["stable"] = result.stable;
  json["unstable_modes"] = result.unstable_modes;
  json["saddle_escapes"] = result.saddle_escapes;
  json["load_steps"] = result.load_steps;
  json["cg_iterations"] = result.cg_iterations;
  json["regularised_solves"] = result.regularised_solves;
  if (!result.contact_forces.empty()) {
    json["contacts"] = result.contacts;
    json["min_gap"] = result.min_gap;
    json["contact_forces"] = result.contact_forces;
  }
  return json;
}

Manifest make_manifest(const Scene& scene) {
  Manifest manifest;
  manifest.name = scene.name;
  manifest.dimension = scene.model.dimension;
  manifest.dt = scene.time.dt;
  manifest.frame_dt = scene.time.frame_dt;
  for (const Rod& rod : scene.model.rods) {
    RodInfo info;
    info.name = rod.name;
    info.vertex_count = rod.vertex_count();
    info.radius = rod.material.radius;
    info.twist = rod.twist && scene.model.dimension == 3;
    manifest.rods.push_back(std::move(info));
  }
  manifest.status = "running";
  manifest.scene = scene.expanded;
  return manifest;
}

std::vector<Vec3> rod_material_directors(const Model& model, const State& state, int rod,
                                         const ElementTable<BendTwistTerm>* committed) {
  const Rod& r = model.rods[rod];
  const int n = r.vertex_count();
  const int edges = edge_count_of(n);
  if (!r.twist || model.dimension != 3 || edges == 0) return {};
  // Each edge's reference frame where it was committed: edge j is the first edge of the
  // element at vertex j + 1, and the last edge the second edge of the last element.
  std::vector<Vec3> tangent(edges), director(edges);
  const auto take = [&](const auto& frames_of_element, int first) {
    for (int j = 0; j < edges; ++j) {
      const StencilFrames& f = frames_of_element(first + std::min(j, n - 3));
      const int side = j < n - 2 ? 0 : 1;
      tangent[j] = f.tangent[side];
      director[j] = f.director[side];
    }
  };
  if (n >= 3 && committed != nullptr && committed->rod_elements(rod).second - committed->rod_elements(rod).first == n - 2) {
    take([&](int k) -> const StencilFrames& { return committed->constants(k).frames; }, committed->rod_elements(rod).first);
  } else if (n >= 3) {
    const std::vector<BendTwistRest> rest = bend_twist_rest(r, r.material_normal);
    take([&](int i) -> const StencilFrames& { return rest[i].frames; }, 1);
  } else {
    tangent[0] = (r.initial_positions[1] - r.initial_positions[0]).normalized();
    director[0] = first_reference_director(tangent[0], r.material_normal);
  }
  std::vector<Vec3> m1(edges);
  for (int j = 0; j < edges; ++j) {
    const Vec3 t = (vertex_position(model, state.positions, rod, j + 1) - vertex_position(model, state.positions, rod, j))
                       .normalized();
    const Vec3 d = parallel_transport(tangent[j], t, director[j]).normalized();
    const double theta = state.positions[model.layout.edge_dof(rod, j)];
    m1[j] = material_directors(t, d, theta).m1;
  }
  return m1;
}

Frame make_frame(const Model& model, const State& state, int index, const ElementTable<BendTwistTerm>* committed) {
  Frame frame;
  frame.index = index;
  frame.time = state.time;
  const int d = model.dimension;
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r) {
    RodFrame rod;
    rod.name = model.rods[r].name;
    const int n = model.rods[r].vertex_count();
    rod.positions.assign(n, Vec3::Zero());
    rod.velocities.assign(n, Vec3::Zero());
    for (int i = 0; i < n; ++i) {
      const int dof = model.layout.vertex_dof(r, i);
      rod.positions[i].head(d) = state.positions.segment(dof, d);
      rod.velocities[i].head(d) = state.velocities.segment(dof, d);
    }
    rod.directors = rod_material_directors(model, state, r, committed);
    frame.rods.push_back(std::move(rod));
  }
  return frame;
}

namespace {

RunResult run_dynamic(const Scene& scene, FrameWriter& writer, const RunOptions& options,
                      const ProgressCallback& progress, Clock::time_point start) {
  RunResult result;
  // Handles (model/handle.hpp) script rods' fixed vertices and move colliders, so the run
  // steps its own copy of the model: handles.prepare_step() before every step.
  Model model = scene.model;
  const HandleDriver handles(model, scene.handles);
  const double dt = scene.time.dt;
  const int frame_count = scene.time.frame_count();
  const int steps_per_frame = scene.time.steps_per_frame();

  RunProgress report;
  report.frame_count = frame_count;
  report.step_count = static_cast<long long>(frame_count - 1) * steps_per_frame;
  report.duration = report.step_count * dt;

  State state = initial_state(model);
  handles.place(model, state);
  // Frames hold the energies of their own state only: evaluated here, not after every step.
  SolverSettings solver = scene.solver;
  solver.step_energies = false;
  ImplicitEuler integrator(model, solver);
  integrator.set_stop(options.stop);
  FrameStats stats;

  // Twist angles are measured from the reference frames the integrator commits step by step.
  const ElementTable<BendTwistTerm>* frames = &integrator.assembler().table<BendTwistTerm>();
  Frame initial = make_frame(model, state, 0, frames);
  initial.stats = stats.take(integrator.energies(state));
  if (const std::string why = unwritable(initial); !why.empty()) return failed_run(result, why, writer, start);
  writer.write(initial);
  result.frames_written = 1;
  report.frame_written = true;
  report.elapsed_seconds = seconds_since(start);
  if (progress) progress(report);

  // Where a stop leaves the run: at the last step that finished (one under way is abandoned,
  // ImplicitEuler::set_stop); the steps since the last frame are dropped (frames are only
  // written at frame times).
  const auto stopped_here = [&]() {
    return "at t = " + format_time(state.time) + " s (step " + std::to_string(result.steps_taken) + " of " +
           std::to_string(report.step_count) + ")";
  };
  for (int k = 1; k < frame_count; ++k) {
    for (int s = 0; s < steps_per_frame; ++s) {
      if (stop_requested(options)) return interrupted_run(result, stopped_here(), writer, start);
      const double t0 = state.time;
      handles.prepare_step(model, state, dt);  // fixed-vertex velocities, collider poses at t0 + dt
      StepReport step = integrator.step(state, dt);
      // A stop raised during the step abandoned it: the run ends where the last step did.
      if (step.interrupted) return interrupted_run(result, stopped_here(), writer, start);
      if (!step.ok) {
        result.outcome = RunOutcome::Failed;
        result.message = "step " + std::to_string(result.steps_taken + 1) + " (t = " + format_time(t0) +
                         " s): " + step.failure;
        result.status = "failed: " + result.message;
        result.failed_step = std::move(step);
        writer.finish(result.status);
        result.wall_seconds = seconds_since(start);
        return result;
      }
      ++result.steps_taken;
      // The clock counts steps: no drift from adding dt thousands of times.
      state.time = static_cast<double>(result.steps_taken) * dt;
      stats.add(step);
      RunQuality& quality = result.quality;
      if (!step.converged) {
        if (quality.unconverged_steps == 0) quality.first_unconverged_time = state.time;
        ++quality.unconverged_steps;
      }
      quality.unconverged_rod_steps += step.unconverged_rods;
      if (step.contact.max_penetration_fraction > quality.deepest_in_collider) {
        quality.deepest_in_collider = step.contact.max_penetration_fraction;
        quality.deepest_time = state.time;
      }
      if (step.rod_crossings > 0) {
        if (quality.crossings == 0) quality.first_crossing_time = state.time;
        quality.crossings += step.rod_crossings;
      }
      if (-step.rod_contact.min_gap_fraction > quality.deepest_overlap) {
        quality.deepest_overlap = -step.rod_contact.min_gap_fraction;
        quality.overlap_time = state.time;
      }
      if (progress) {
        report.step = result.steps_taken;
        report.time = state.time;
        report.cg_iterations = step.cg_iterations;
        report.frame_written = false;
        report.elapsed_seconds = seconds_since(start);
        progress(report);
      }
    }
    Frame frame = make_frame(model, state, k, frames);
    frame.stats = stats.take(integrator.energies(state));
    if (const std::string why = unwritable(frame); !why.empty())
      return failed_run(result, "step " + std::to_string(result.steps_taken) + " (t = " + format_time(state.time) +
                                    " s): " + why, writer, start);
    writer.write(frame);
    result.frames_written = k + 1;
    if (progress) {
      report.frame = k;
      report.frame_written = true;
      report.elapsed_seconds = seconds_since(start);
      progress(report);
    }
  }
  result.outcome = RunOutcome::Complete;
  result.status = "complete";
  writer.finish(result.status);
  result.wall_seconds = seconds_since(start);
  return result;
}

}  // namespace

RunResult run_simulation(const Scene& scene, const std::string& out_dir, const RunOptions& options,
                         const ProgressCallback& progress) {
  const Clock::time_point start = Clock::now();
  FrameWriterOptions writer_options;
  writer_options.manifest_interval_seconds = options.manifest_interval_seconds;
  writer_options.npz_compression = options.npz_compression;
  Manifest manifest = make_manifest(scene);
  manifest.frame_layout = options.frame_layout;
  FrameWriter writer(out_dir, std::move(manifest), writer_options);
  RunResult result = scene.mode == SolverMode::Static ? run_static(scene, writer, options, progress, start)
                                                      : run_dynamic(scene, writer, options, progress, start);
  result.frame_write_seconds = writer.write_seconds();
  return result;
}

}  // namespace bristle
