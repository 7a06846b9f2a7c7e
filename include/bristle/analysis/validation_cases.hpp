#pragma once
/// The physical validation cases (issue 4; in the spirit of Romero et al., "Physical validation
/// of simulators in computer graphics: a new framework dedicated to slender elastic structures
/// and frictional contact", SIGGRAPH 2021): each runs Bristle's own solvers on a clamped rod
/// and compares with a result that does not come from Bristle's discretisation.
///
///   cantilever (cases 1, 2, 5): static equilibrium (solve_static) against the planar elastica
///     solved by shooting (analysis/elastica.hpp), tip position in units of L;
///   modes (case 3): modal_analysis against the Euler-Bernoulli clamped-free beam,
///     f_n = (beta_n L)^2 / (2 pi L^2) sqrt(E I / (rho A)), beta_n L the roots of
///     1 + cos(beta L) cosh(beta L) = 0 (e.g. Blevins, "Formulas for natural frequency and mode
///     shape", table 8-1);
///   Greenhill (case 4): the Gamma at which the lowest eigenvalue of the straight column,
///     prestressed by its weight, crosses zero (find_stability_threshold), against 7.8373.
///
/// L is always measured from the effective clamp, the first edge's midpoint
/// (validation_clamped_rod.hpp).

#include <string>
#include <vector>

#include "bristle/analysis/elastica.hpp"
#include "bristle/analysis/static_solver.hpp"
#include "bristle/analysis/validation_clamped_rod.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// Roots of 1 + cos(x) cosh(x) = 0: beta_n L of the first clamped-free bending modes.
inline constexpr double kClampedFreeBetaL[] = {1.87510407, 4.69409113, 7.85475744};
/// Greenhill's critical gravito-bending number of a self-weight column clamped at its base
/// (Greenhill 1881; Timoshenko and Gere, "Theory of Elastic Stability", section 2.13).
inline constexpr double kGreenhillGamma = 7.8373;

/// Case 1/2: a cantilever's static equilibrium against the elastica.
struct CantileverComparison {
  bool ok = false;
  std::string message;          ///< why a solver failed; empty when ok
  ClampedRod rod;
  StaticResult equilibrium;
  ElasticaSolution reference;   ///< with the sampled curve
  Vec2 reference_tip = Vec2::Zero();  ///< (x, y) / L, x along the axis, y against the load
  Vec3 bristle_tip = Vec3::Zero();    ///< the same frame, third component out of plane
  double tip_error = 0.0;       ///< |bristle - reference| / L
  /// Every vertex, in the frame of reference_tip, units of L (x, y; out-of-plane dropped).
  std::vector<Vec2> centreline;
};

/// Solves the model's static equilibrium and compares it with the elastica of the same
/// Gamma and alpha. Throws ValidationError when the model is not a horizontal cantilever
/// (gravity and load must be perpendicular to the rod, and parallel to each other); a solver
/// that fails gives ok = false and a message.
CantileverComparison compare_cantilever(const Model& model, const StaticSettings& settings = {});

/// Case 5: the tip error of the same cantilever at several resolutions.
struct ConvergenceStudy {
  bool ok = false;
  std::string message;
  std::vector<int> segments;
  std::vector<double> errors;   ///< tip error / L at each resolution
  /// Order p of error ~ C N^-p: the least-squares slope of log(error) against log(N).
  double order = 0.0;
};
ConvergenceStudy cantilever_convergence(const Model& model, const std::vector<int>& segments);

/// Least-squares slope of -log(error) against log(N) (the observed order of convergence).
double observed_order(const std::vector<int>& segments, const std::vector<double>& errors);

/// Case 3: the lowest bending frequencies against the Euler-Bernoulli beam.
struct ModesComparison {
  bool ok = false;
  std::string message;
  ClampedRod rod;
  std::vector<double> bristle_hz;    ///< the `count` lowest frequencies
  std::vector<double> reference_hz;  ///< the beam's, each listed twice in 3D
  std::vector<int> mode_number;      ///< n (1-based) of the beam mode each one is compared with
  std::vector<double> relative_errors;
};
/// `bending_modes` beam modes (at most 3), so 2 x that many frequencies in 3D. The model must
/// have no gravity or load (the linearisation point is the straight, unstressed rod).
ModesComparison compare_modes(const Model& model, int bending_modes = 3);

/// Case 4: Greenhill's threshold.
struct GreenhillResult {
  bool ok = false;
  std::string message;
  ClampedRod rod;
  double critical_gamma = 0.0;
  double relative_error = 0.0;  ///< critical / 7.8373 - 1
  int evaluations = 0;          ///< static solves + lowest-mode computations
};
/// The model must be a column standing up (axis against gravity). Gravity is rescaled to
/// search Gamma in [low, high] to `tolerance` (relative).
GreenhillResult find_greenhill_threshold(const Model& model, double low = 2.0, double high = 20.0,
                                         double tolerance = 1e-6);

/// The same threshold by a second, eigenvalue-free method: bisection on Gamma, each trial a
/// static solve started from the column bent sideways by `imperfection` L at the tip (a
/// parabola in s, in the plane of the rod's first perpendicular). Only the starting point is
/// perturbed, the rest shape stays straight: below the threshold the column straightens, above
/// it it falls to its post-buckled shape (tip deflection about 0.9 sqrt(Gamma / Gamma_c - 1) L).
/// It counts as buckled when its tip ends more than 2 `imperfection` L sideways.
///
/// Resolution. Within delta = |Gamma / Gamma_c - 1| of the threshold the force at the starting
/// point is about delta imperfection E I / L^2, and once that is below the static solver's
/// tolerance (1e-9 of the force scale plus round-off) the solve stops where it started. A
/// larger imperfection sharpens the bisection: 1e-2 resolves the threshold to about 1e-3
/// relative for the validation column. `evaluations` counts the static solves.
GreenhillResult find_greenhill_by_imperfection(const Model& model, double low = 2.0, double high = 20.0,
                                               double tolerance = 1e-3, double imperfection = 1e-2);

}  // namespace bristle
