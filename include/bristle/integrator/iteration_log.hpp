#pragma once
#include <functional>

namespace bristle {

/// One Newton iteration of the converged solver, as ImplicitEuler::set_iteration_log reports it
/// (`bristle bench --brush --iteration-log FILE`): where a step's iterations go, which the
/// step's totals (StepReport) sum away. Every attempt reports its own, a step given up and
/// split included (its halves then report theirs, with half of h).
struct IterationRecord {
  double time = 0.0;  ///< end time of the attempt [s]
  double h = 0.0;     ///< the attempt's step [s]
  int iteration = 0;  ///< 0: the attempt's first solve; then Newton's iterations after it
  bool partial = false;  ///< solved only the rods still moving (StepReport::partial_iterations)
  int rods_solved = 0;
  /// The iteration's correction, the measure the convergence test compares with `tolerance`
  /// (largest over the DOFs of |dv| h, as a fraction of the rod's length).
  double correction = 0.0;
  double tolerance = 0.0;
  bool ccd_limited = false;  ///< CCD shortened the Newton step for some rods (rod-rod contact)
  double step_length = 0.0;  ///< the line search's step along the searched direction (0 to 1)
  /// Rod contact: every pair's force estimate consistent with its barrier (one condition of
  /// convergence; RodContact::update_forces).
  bool forces_consistent = true;
  /// The deepest vertex in a collider after the iteration, in its radius (0: none inside).
  double deepest_in_collider = 0.0;
  /// Wall time of the iteration [s]: its assembly, solve, CCD and line search, as the step's
  /// stage times count it (SolverStageTimes). The one field that varies from run to run.
  double seconds = 0.0;
};

using IterationLog = std::function<void(const IterationRecord&)>;

}  // namespace bristle
