// Readers of the scene's global settings: `time`, `solver` and `damping`.

#include <cmath>
#include <string>

#include "bristle/scene/scene_blocks.hpp"

namespace bristle {
namespace {

// frame_dt may miss a whole multiple of dt by this much, relative (decimal inputs such as
// 0.01 / 0.001 are not exact in binary).
constexpr double kMultipleSlack = 1e-9;
// Step splits: past this a step is a hang, not a computation (docs/scene-format.md, "solver").
constexpr int kMaxStepSplits = 10;
// The converged solver's default tolerance under BDF2 (docs/scene-format.md, "solver").
constexpr double kBdf2Tolerance = 1e-5;

void check_frame_dt(const JsonValue& value, const TimeSettings& time) {
  const double steps = time.frame_dt / time.dt;
  const std::string multiple = "a whole multiple of dt = " + number_text(time.dt);
  if (steps > kMaxStepsPerFrame)
    value.fail("frame_dt / dt = " + number_text(steps) + " steps per frame; at most " +
               count_text(kMaxStepsPerFrame) + " are allowed");
  const double whole = std::round(steps);
  if (whole < 1.0) value.fail_expected(multiple + " (at least dt)");
  if (std::abs(time.frame_dt - whole * time.dt) > kMultipleSlack * time.frame_dt)
    value.fail("expected " + multiple + ", found " + number_text(time.frame_dt) + " (" +
               number_text(steps) + " steps)");
}

void check_frame_count(const JsonValue& duration, const TimeSettings& time) {
  const double frames = std::round(duration.json().get<double>() / time.frame_dt) + 1.0;
  if (frames > kMaxFrames)
    duration.fail("duration / frame_dt gives " + count_text(frames) + " frames; at most " +
                  count_text(kMaxFrames) + " are allowed (raise frame_dt or shorten the duration)");
  // Each bound alone still allows 1e16 steps: a run that would never end.
  const double steps = (frames - 1.0) * std::round(time.frame_dt / time.dt);
  if (steps > kMaxSteps)
    duration.fail("duration / dt gives " + count_text(steps) + " time steps; at most " + count_text(kMaxSteps) +
                  " are allowed (docs/limits.md)");
}

}  // namespace

ReadResult<TimeSettings> read_time(const JsonValue& value) {
  const ObjectReader reader = value.object({"dt", "frame_dt", "duration"});
  TimeSettings time;
  time.dt = reader.require("dt").positive_number();
  time.duration = reader.require("duration").positive_number();
  time.frame_dt = time.dt;
  if (const auto frame_dt = reader.find("frame_dt")) {
    time.frame_dt = frame_dt->positive_number();
    check_frame_dt(*frame_dt, time);
  }
  check_frame_count(reader.require("duration"), time);
  const nlohmann::json expanded = {
      {"dt", time.dt}, {"frame_dt", time.frame_dt}, {"duration", time.duration}};
  return {time, expanded};
}

ReadResult<SolverBlock> read_solver(const JsonValue& value) {
  const ObjectReader reader = value.object({"cg_tolerance", "cg_max_iterations", "newton_iterations", "mode",
                                            "linearization", "newton_tolerance", "line_search", "projection",
                                            "length_correction", "threads", "integrator", "tolerance",
                                            "max_newton_iterations", "max_step_splits", "energy_tolerance"});
  SolverBlock solver;
  SolverSettings& s = solver.settings;
  if (const auto tolerance = reader.find("cg_tolerance")) {
    s.cg_tolerance = tolerance->number();
    // A relative residual of 1 or more is met by the zero update: no solve at all.
    if (!(s.cg_tolerance > 0.0 && s.cg_tolerance < 1.0))
      tolerance->fail_expected("a relative tolerance in (0, 1)");
  }
  if (const auto iterations = reader.find("cg_max_iterations")) s.cg_max_iterations = iterations->int_in(1, kMaxCgIterations);
  // newton_iterations: "converged" (the default: Newton until `tolerance` is met) or a fixed
  // count n >= 1 (1: Baraff-Witkin's single linearised solve).
  if (const auto newton = reader.find("newton_iterations")) {
    if (newton->is_string())
      newton->choice({"converged"});
    else
      s.newton_iterations = newton->int_in(1, kMaxNewtonIterations);
  }
  std::string integrator = "backward_euler";
  if (const auto scheme = reader.find("integrator")) integrator = scheme->choice({"backward_euler", "bdf2"});
  s.scheme = integrator == "bdf2" ? TimeScheme::Bdf2 : TimeScheme::BackwardEuler;
  // BDF2 does not damp what a loose tolerance leaves behind the way backward Euler does: on
  // the benchmark hair its tip drifted 78% of L from the dt -> 0 motion over 1 s at 1e-3 and
  // 17% at 1e-5 (the same as at 1e-7). Its default is therefore tighter.
  if (s.scheme == TimeScheme::Bdf2) s.tolerance = kBdf2Tolerance;
  if (const auto tolerance = reader.find("tolerance")) {
    s.tolerance = tolerance->number();
    if (!(s.tolerance > 0.0 && s.tolerance <= 0.1)) tolerance->fail_expected("a relative tolerance in (0, 0.1]");
  }
  if (const auto tolerance = reader.find("energy_tolerance")) s.energy_tolerance = tolerance->positive_number();
  if (const auto cap = reader.find("max_newton_iterations")) s.max_newton_iterations = cap->int_in(1, kMaxNewtonIterations);
  if (const auto splits = reader.find("max_step_splits")) s.max_step_splits = splits->int_in(0, kMaxStepSplits);
  std::string mode = "dynamic";
  if (const auto m = reader.find("mode")) mode = m->choice({"dynamic", "static"});
  solver.mode = mode == "static" ? SolverMode::Static : SolverMode::Dynamic;
  // Extensions (docs/scene-format.md, "solver"): where the first Newton iteration is
  // linearised, early exit, the line search, the bending Hessian's projection, threads.
  std::string linearization = "start";
  if (const auto l = reader.find("linearization")) linearization = l->choice({"start", "predicted"});
  s.linearization = linearization == "predicted" ? Linearization::Predicted : Linearization::Start;
  if (const auto tolerance = reader.find("newton_tolerance")) s.newton_tolerance = tolerance->non_negative_number();
  if (const auto search = reader.find("line_search")) s.line_search = search->boolean();
  std::string projection = "bending_modes";
  if (const auto p = reader.find("projection")) projection = p->choice({"projected", "gauss_newton", "bending_modes"});
  s.projection = projection == "gauss_newton"    ? HessianProjection::GaussNewton
                 : projection == "bending_modes" ? HessianProjection::BendingModes
                                                 : HessianProjection::Projected;
  if (const auto correction = reader.find("length_correction")) s.length_correction = correction->boolean();
  if (const auto threads = reader.find("threads")) s.threads = threads->int_in(1, kMaxThreads);

  const nlohmann::json expanded = {{"cg_tolerance", s.cg_tolerance},
                                   {"cg_max_iterations", s.cg_max_iterations},
                                   {"newton_iterations", s.converged() ? nlohmann::json("converged")
                                                                       : nlohmann::json(s.newton_iterations)},
                                   {"integrator", integrator},
                                   {"tolerance", s.tolerance},
                                   {"energy_tolerance", s.energy_tolerance},
                                   {"max_newton_iterations", s.max_newton_iterations},
                                   {"max_step_splits", s.max_step_splits},
                                   {"mode", mode},
                                   {"linearization", linearization},
                                   {"newton_tolerance", s.newton_tolerance},
                                   {"line_search", s.line_search},
                                   {"projection", projection},
                                   {"length_correction", s.length_correction},
                                   {"threads", s.threads}};
  return {solver, expanded};
}

ReadResult<Damping> read_damping(const JsonValue& value) {
  const ObjectReader reader = value.object({"mass", "stiffness"});
  Damping damping;
  if (const auto mass = reader.find("mass")) damping.mass = mass->non_negative_number();
  if (const auto stiffness = reader.find("stiffness")) damping.stiffness = stiffness->non_negative_number();
  const nlohmann::json expanded = {{"mass", damping.mass}, {"stiffness", damping.stiffness}};
  return {damping, expanded};
}

}  // namespace bristle
