#pragma once
/// The strand benchmark: N clamped hair strands stepped under gravity, timed per stage.
///
/// Defaults are the strands the performance issue compares against (dismech-rods' hair
/// benchmark): 50 vertices, L = 0.2 m, radius 50 um, E = 3 GPa, density 1300 kg/m^3,
/// clamped horizontally at the root (two fixed vertices), gravity -9.81 m/s^2 along y.
/// Figures are printed, never asserted: speed is measured here, not in unit tests.

#include <string>

#include <nlohmann/json.hpp>

#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// The solver the benchmark times unless told otherwise: one Baraff-Witkin solve per step
/// (linearised at the step's start), the bending Hessian reduced to its bending modes, and the
/// length correction after the solve; no line search. With the correction one solve keeps
/// within 0.1% of the strand length of converged backward Euler on these strands (the tip
/// error the benchmark prints); without it a single solve lags by most of the strand's length.
SolverSettings strand_benchmark_solver();
/// The accuracy reference: converged backward Euler with tolerance 1e-12 and cg_tolerance 1e-12.
SolverSettings strand_reference_solver();

struct StrandBenchmarkSettings {
  int strands = 100;
  int vertices_per_strand = 50;
  double length = 0.2;            ///< [m]
  double radius = 50e-6;          ///< [m]
  double youngs_modulus = 3.0e9;  ///< [Pa]
  double density = 1300.0;        ///< [kg/m^3]
  double dt = 1.0 / 240.0;        ///< [s]
  double duration = 0.25;         ///< simulated time [s]
  int threads = 1;
  SolverSettings solver = strand_benchmark_solver();
  /// Also run a reference (cg_tolerance 1e-12, 10 Newton iterations, the scene defaults
  /// otherwise: projected Hessian, line search, no length correction) on a few strands and
  /// report the tip error relative to the strand length.
  bool measure_accuracy = true;
  /// Also compare with the continuous-time motion (dt -> 0): Richardson extrapolation of
  /// converged backward Euler at dt / 8 and dt / 16, 2 x(dt/16) - x(dt/8), on a few strands.
  bool continuum_reference = false;
  /// Strands with twist DOFs (discrete elastic rods, issue 15): the same strands, straight at
  /// rest, bent through their material curvatures and twisted.
  bool twist = false;
  /// Timed runs; the fastest is reported (a shared machine only ever slows a run down, so the
  /// fastest of a few is the best estimate of the code's own cost). Results are identical.
  int repeats = 1;
};

struct StrandBenchmarkResult {
  int vertices = 0;
  int steps = 0;
  double dt = 0.0;
  int newton_iterations = 0;
  int threads = 1;
  int repeats = 1;
  double seconds_total = 0.0;
  double us_per_vertex_step = 0.0;
  double us_per_vertex_step_assembly = 0.0;
  double us_per_vertex_step_solve = 0.0;
  double us_per_vertex_step_other = 0.0;
  double cg_iterations_median = 0.0;
  double newton_iterations_mean = 0.0;  ///< Newton iterations per step, on average
  int cg_iterations_max = 0;
  double spmv_equivalents_per_step = 0.0;  ///< step time / time of one product with the step's matrix
  long peak_rss_bytes = 0;
  double tip_error_relative = -1.0;        ///< -1 when not measured
  double tip_error_continuum = -1.0;       ///< against the dt -> 0 motion; -1 when not measured
  bool ok = true;
  std::string failure;
  double energy_start = 0.0, energy_end = 0.0;  ///< total energy before and after [J]
  double max_energy_rise = 0.0;  ///< largest increase of the total energy over one step [J]; -1: not measured
  /// The strands max_energy_rise was measured on: all of them when the timed run evaluated
  /// energies per step, else the accuracy run's few (untimed); 0 when not measured.
  int energy_rise_strands = 0;
  double energy_scale = 0.0;     ///< m g L of one strand, the scale of its sag energy [J]

  nlohmann::json to_json() const;
};

/// Builds the benchmark's model: strands side by side along z, 1 cm apart.
Model make_strand_model(const StrandBenchmarkSettings& settings);

StrandBenchmarkResult run_strand_benchmark(const StrandBenchmarkSettings& settings);

/// Peak resident set size of this process [bytes].
long peak_rss_bytes();

}  // namespace bristle
