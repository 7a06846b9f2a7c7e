#pragma once

namespace bristle {

/// Wall time [s] by stage of the converged solver: each attempt's first solve (its assembly,
/// linear solve and search), the later Newton iterations over every rod and those over the rods
/// still moving (StepReport::partial_iterations), the check of the step's straight motion with
/// rod contact (clear_path, and where it is not clear the end it picks instead), and the commit
/// with the pairs' measurement at the end. What they leave of a step's time is the prediction,
/// the start's checks and the report. Summed over substeps and runs with +=.
struct SolverStageTimes {
  int first_solves = 0;  ///< attempts that made their first solve
  double first_solve_seconds = 0.0;
  double full_iteration_seconds = 0.0;
  double partial_iteration_seconds = 0.0;
  double path_check_seconds = 0.0;
  double commit_seconds = 0.0;
  SolverStageTimes& operator+=(const SolverStageTimes& other) {
    first_solves += other.first_solves;
    first_solve_seconds += other.first_solve_seconds;
    full_iteration_seconds += other.full_iteration_seconds;
    partial_iteration_seconds += other.partial_iteration_seconds;
    path_check_seconds += other.path_check_seconds;
    commit_seconds += other.commit_seconds;
    return *this;
  }
};

}  // namespace bristle
