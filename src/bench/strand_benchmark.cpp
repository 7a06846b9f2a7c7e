#include "bristle/bench/strand_benchmark.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

namespace bristle {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Tip positions of every strand (last vertex).
std::vector<Vec3> tips(const Model& model, const State& state) {
  std::vector<Vec3> out;
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r)
    out.push_back(vertex_position(model, state.positions, r, model.rods[r].vertex_count() - 1));
  return out;
}

/// Seconds per product y = A x with the assembler's current matrix, computed the way CG
/// computes it: A is symmetric in full storage, so Eigen's CG multiplies by its transpose, a
/// row-major product that runs on Eigen's threads. A few products back to back, averaged.
double seconds_per_spmv(const SparseMatrix& a, VecX& x, VecX& y) {
  constexpr int kRepeats = 3;
  const Clock::time_point start = Clock::now();
  for (int k = 0; k < kRepeats; ++k) {
    y.noalias() = a.transpose() * x;
    x[k % x.size()] += 1e-300 * y[0];  // keep the product observable
  }
  return seconds_since(start) / kRepeats;
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  const std::size_t m = samples.size();
  return m % 2 ? samples[m / 2] : 0.5 * (samples[m / 2 - 1] + samples[m / 2]);
}

// Every this many steps the run times a few matrix-vector products (outside the steps' time):
// the unit is measured while the steps run, so a machine whose speed drifts (shared hosts
// drift by tens of percent within seconds, memory-bound products most) scales both alike.
constexpr int kSpmvSampleEvery = 4;

struct RunOutcome {
  State state;
  std::vector<int> cg_iterations;
  long newton_iterations = 0;
  double assembly = 0.0, solve = 0.0, total = 0.0;
  bool ok = true;
  std::string failure;
  double energy_start = 0.0, energy_end = 0.0, max_energy_rise = 0.0;
  double spmv_seconds = 0.0;
};

RunOutcome simulate(const Model& model, const StrandBenchmarkSettings& settings, const SolverSettings& solver,
                    bool time_spmv) {
  RunOutcome out;
  out.state = initial_state(model);
  ImplicitEuler integrator(model, solver);
  out.energy_start = integrator.energies(out.state).total();
  const int steps = static_cast<int>(std::lround(settings.duration / settings.dt));
  double energy = out.energy_start;
  std::vector<double> spmv_samples;
  VecX spmv_x, spmv_y;
  for (int s = 0; s < steps; ++s) {
    const Clock::time_point step_start = Clock::now();
    const StepReport report = integrator.step(out.state, settings.dt);
    out.total += seconds_since(step_start);
    if (solver.step_energies) {
      out.max_energy_rise = std::max(out.max_energy_rise, report.energies.total() - energy);
      energy = report.energies.total();
    }
    out.cg_iterations.push_back(report.cg_iterations);
    out.newton_iterations += report.newton_iterations;
    out.assembly += report.assembly_seconds;
    out.solve += report.solve_seconds;
    if (!report.ok) {
      out.ok = false;
      out.failure = "step " + std::to_string(s) + ": " + report.failure;
      break;
    }
    if (time_spmv && (s % kSpmvSampleEvery == kSpmvSampleEvery - 1 || s + 1 == steps)) {
      // The system's pattern: a step that solves each rod in assembly need not write the
      // values (ImplicitEuler::set_keep_system_matrix), and a product's cost does not depend on them.
      const SparseMatrix& matrix = integrator.assembler().matrix();
      if (spmv_x.size() != matrix.cols()) spmv_x = VecX::Ones(matrix.cols());
      spmv_samples.push_back(seconds_per_spmv(matrix, spmv_x, spmv_y));
    }
  }
  out.energy_end = integrator.energies(out.state).total();
  out.spmv_seconds = median(spmv_samples);
  return out;
}

}  // namespace

SolverSettings strand_benchmark_solver() {
  // What a scene gets by default: the figures are what a user gets.
  SolverSettings solver;
  // The timed runs report no energies per step (the energy check runs separately, untimed).
  solver.step_energies = false;
  return solver;
}

SolverSettings strand_reference_solver() {
  // Converged backward Euler, far tighter than the default.
  SolverSettings solver;
  solver.cg_tolerance = 1e-12;
  solver.tolerance = 1e-12;
  solver.max_newton_iterations = 200;
  return solver;
}

nlohmann::json StrandBenchmarkResult::to_json() const {
  nlohmann::json j;
  j["vertices"] = vertices;
  j["dt"] = dt;
  j["newton_iterations"] = newton_iterations;
  j["steps"] = steps;
  j["threads"] = threads;
  j["repeats"] = repeats;
  j["seconds_total"] = seconds_total;
  j["us_per_vertex_step"] = us_per_vertex_step;
  j["us_per_vertex_step_assembly"] = us_per_vertex_step_assembly;
  j["us_per_vertex_step_solve"] = us_per_vertex_step_solve;
  j["us_per_vertex_step_other"] = us_per_vertex_step_other;
  j["cg_iterations_median"] = cg_iterations_median;
  j["newton_iterations_mean"] = newton_iterations_mean;
  j["cg_iterations_max"] = cg_iterations_max;
  j["spmv_equivalents_per_step"] = spmv_equivalents_per_step;
  j["peak_rss_bytes"] = peak_rss_bytes;
  j["tip_error_relative"] = tip_error_relative;
  j["tip_error_continuum"] = tip_error_continuum;
  j["energy_start"] = energy_start;
  j["energy_end"] = energy_end;
  j["max_energy_rise"] = max_energy_rise;
  j["energy_rise_strands"] = energy_rise_strands;
  j["energy_scale"] = energy_scale;
  j["ok"] = ok;
  if (!ok) j["failure"] = failure;
  return j;
}

long peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<long>(usage.ru_maxrss) * 1024L;  // Linux reports kilobytes
}

Model make_strand_model(const StrandBenchmarkSettings& settings) {
  Model model;
  model.dimension = 3;
  model.gravity = Vec3(0.0, -9.81, 0.0);
  Material material;
  material.density = settings.density;
  material.radius = settings.radius;
  material.youngs_modulus = settings.youngs_modulus;
  const int n = settings.vertices_per_strand;
  const double h = settings.length / (n - 1);
  for (int s = 0; s < settings.strands; ++s) {
    std::vector<Vec3> positions;
    for (int i = 0; i < n; ++i) positions.emplace_back(i * h, 0.0, 0.01 * s);
    model.rods.push_back(make_rod("strand" + std::to_string(s), material, std::move(positions), {0, 1},
                                  RestShape::Initial, 3));
    model.rods.back().twist = settings.twist;
  }
  model.finalize();
  return model;
}

StrandBenchmarkResult run_strand_benchmark(const StrandBenchmarkSettings& settings) {
  StrandBenchmarkResult result;
  const Model model = make_strand_model(settings);
  result.vertices = model.layout.vertex_count();
  result.threads = settings.threads;
  result.newton_iterations = settings.solver.newton_iterations;
  result.dt = settings.dt;
  SolverSettings solver = settings.solver;
  solver.threads = settings.threads;

  RunOutcome run = simulate(model, settings, solver, true);
  // The peak resident set of one run: later runs would add the kept state of the fastest.
  result.peak_rss_bytes = peak_rss_bytes();
  result.repeats = std::max(1, settings.repeats);
  for (int r = 1; r < result.repeats && run.ok; ++r) {
    // The fastest run, with the matrix-vector products timed during it.
    RunOutcome again = simulate(model, settings, solver, true);
    if (again.total < run.total) run = std::move(again);
  }
  result.ok = run.ok;
  result.failure = run.failure;
  result.steps = static_cast<int>(run.cg_iterations.size());
  result.newton_iterations_mean = result.steps > 0 ? double(run.newton_iterations) / result.steps : 0.0;
  result.seconds_total = run.total;
  const double vertex_steps = static_cast<double>(result.vertices) * std::max(1, result.steps);
  result.us_per_vertex_step = 1e6 * run.total / vertex_steps;
  result.us_per_vertex_step_assembly = 1e6 * run.assembly / vertex_steps;
  result.us_per_vertex_step_solve = 1e6 * run.solve / vertex_steps;
  result.us_per_vertex_step_other = result.us_per_vertex_step - result.us_per_vertex_step_assembly -
                                    result.us_per_vertex_step_solve;
  std::vector<int> iterations = run.cg_iterations;
  if (!iterations.empty()) {
    std::sort(iterations.begin(), iterations.end());
    const std::size_t m = iterations.size();
    result.cg_iterations_median =
        m % 2 ? iterations[m / 2] : 0.5 * (iterations[m / 2 - 1] + iterations[m / 2]);
    result.cg_iterations_max = iterations.back();
  }
  if (run.spmv_seconds > 0.0 && result.steps > 0)
    result.spmv_equivalents_per_step = (run.total / result.steps) / run.spmv_seconds;
  result.energy_start = run.energy_start;
  result.energy_end = run.energy_end;
  result.max_energy_rise = solver.step_energies ? run.max_energy_rise : -1.0;
  result.energy_rise_strands = solver.step_energies ? settings.strands : 0;
  const Rod& strand = model.rods.front();
  double strand_mass = 0.0;
  for (int i = 0; i < strand.vertex_count(); ++i) strand_mass += strand.vertex_mass(i);
  result.energy_scale = strand_mass * model.gravity.norm() * strand.rest_length();

  if (settings.measure_accuracy && run.ok) {
    // The strands are identical, so a reference on a few of them stands for all.
    StrandBenchmarkSettings reference_settings = settings;
    reference_settings.strands = std::min(settings.strands, 4);
    const Model reference_model = make_strand_model(reference_settings);
    // Converged backward Euler, independent of the timed solver's approximations: the scene
    // defaults (projected Hessian, line search, no length correction) with 10 iterations.
    SolverSettings reference_solver = strand_reference_solver();
    reference_solver.threads = solver.threads;
    const RunOutcome reference = simulate(reference_model, reference_settings, reference_solver, false);
    if (!solver.step_energies) {
      // The energy check, untimed: the same solver on the reference's strands, with the
      // energies of every step.
      SolverSettings checked = solver;
      checked.step_energies = true;
      const RunOutcome energy_run = simulate(reference_model, reference_settings, checked, false);
      result.max_energy_rise = energy_run.max_energy_rise;
      result.energy_rise_strands = reference_settings.strands;
    }
    const std::vector<Vec3> tip = tips(model, run.state), tip_ref = tips(reference_model, reference.state);
    double worst = 0.0;
    for (std::size_t k = 0; k < tip_ref.size(); ++k) worst = std::max(worst, (tip[k] - tip_ref[k]).norm());
    result.tip_error_relative = reference.ok ? worst / settings.length : -1.0;
    if (settings.continuum_reference) {
      // Backward Euler's error is first order in dt: 2 x(dt/16) - x(dt/8) cancels it.
      StrandBenchmarkSettings fine = reference_settings;
      SolverSettings fine_solver = strand_reference_solver();
      fine_solver.tolerance = 1e-9;
      fine_solver.threads = solver.threads;
      fine.dt = settings.dt / 8.0;
      const RunOutcome eighth = simulate(reference_model, fine, fine_solver, false);
      fine.dt = settings.dt / 16.0;
      const RunOutcome sixteenth = simulate(reference_model, fine, fine_solver, false);
      const std::vector<Vec3> a = tips(reference_model, eighth.state), b = tips(reference_model, sixteenth.state);
      double continuum = 0.0;
      for (std::size_t k = 0; k < b.size(); ++k)
        continuum = std::max(continuum, (tip[k] - (2.0 * b[k] - a[k])).norm());
      result.tip_error_continuum = eighth.ok && sixteenth.ok ? continuum / settings.length : -1.0;
    }
  }
  return result;
}

}  // namespace bristle
