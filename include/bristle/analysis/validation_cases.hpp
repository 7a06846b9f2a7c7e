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
///
/// Rods with twist (cases 6 to 9; discrete elastic rods, `"twist": true`) build their rods in
/// code, at each resolution of a refinement series, with the clamp at a first edge's midpoint:
///
///   torsional frequencies (6): modal_analysis of a straight clamped-free rod, the modes whose
///     mass norm lies on the twist DOFs, against f_k = (2k - 1) / (4 L) sqrt(G / rho);
///   Greenhill's twist buckling (7): the end turn Phi of a rod clamped at both end edges at
///     which the lowest eigenvalue of the uniformly twisted straight rod crosses zero, as
///     M L / (E I) with M = G J Phi / L, against 2.861 pi (Timoshenko and Gere, "Theory of
///     Elastic Stability", section 2.19);
///   coil spring (8): the static extension of a close-coiled helical spring pulled on its axis,
///     as a stiffness, against k = G d^4 / (8 D^3 n) (Wahl, "Mechanical Springs");
///   curved cantilever (9): the static out-of-plane tip deflection of a quarter circle under a
///     small tip load, against w = P R^3 [pi / (4 E I) + (3 pi / 4 - 2) / (G J)] (bending and
///     torsion by Castigliano, docs/physics.md "Validation of rods with twist").

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

/// Greenhill's critical twisting moment of a straight rod clamped at both ends, M L / (E I) in
/// units of pi (Timoshenko and Gere, "Theory of Elastic Stability", 2nd ed., section 2.19).
inline constexpr double kGreenhillTwist = 2.861;

/// Cases 6 to 9: one refinement series of a rod with twist. The resolution is the number of
/// edges (cases 6, 7, 9) or of edges per coil turn (case 8).
struct TwistStudy {
  bool ok = false;
  std::string message;                      ///< why a solver failed; empty when ok
  std::string setup;                        ///< the rod, its material and load, in words
  std::vector<int> segments;                ///< the resolution of each run
  std::vector<std::vector<double>> values;  ///< Bristle's compared quantities at each run
  std::vector<double> references;           ///< each quantity's reference value
  /// The error measure at each resolution and its observed order. Cases 6, 7, 9: the largest
  /// |value / reference - 1| over the quantities. Case 8, whose reference is itself a
  /// close-coil approximation (not the continuum limit of any discretisation): the relative
  /// change from the previous resolution, |k_N / k_{N/2} - 1|, from the second run on.
  ConvergenceStudy convergence;

  /// Relative error value / reference - 1 of quantity q at run i.
  double relative_error(std::size_t run, std::size_t q) const { return values[run][q] / references[q] - 1.0; }
};

/// Case 6: the first three torsional frequencies [Hz] of a steel rod (L = 1 m, r = 5 cm,
/// nu = 0.3) clamped at the midpoint of its first edge, at each number of edges.
TwistStudy torsional_frequency_study(const std::vector<int>& segments);

/// Case 7: M L / (pi E I) at the twist buckling threshold of a rod (L = 0.5 m, r = 1 mm)
/// clamped at the midpoints of both end edges, at each number of edges; the threshold found by
/// regula falsi (Illinois) on the lowest eigenvalue to `tolerance` (relative).
TwistStudy twist_buckling_study(const std::vector<int>& segments, double tolerance = 1e-6);

/// Case 8: the axial stiffness [N/m] of a steel coil spring (wire d = 0.5 mm, coil D = 10 mm,
/// pitch 4 mm, n = 10 turns from the clamp) hanging from its clamped top, pulled by 0.05 N on
/// its axis through a radial hook, at each number of edges per turn.
TwistStudy coil_spring_study(const std::vector<int>& edges_per_turn);

/// Case 9: the tip deflection [m] of a quarter circle (R = 0.1 m, wire r = 1 mm, nu = 0.3) in
/// the xy plane, clamped at one end, under a tip load P along z with P R^2 / (E I) = 1e-3.
TwistStudy curved_cantilever_study(const std::vector<int>& segments);

}  // namespace bristle
