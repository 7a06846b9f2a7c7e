#pragma once
/// Stability threshold of a loaded rod system as a function of one load parameter p (for
/// Greenhill's self-weight column, p = Gamma = rho A g L^3 / (E I)).
///
/// For each p the model's initial state is relaxed to its static equilibrium (solve_static;
/// a straight column stays straight, only shortening under its weight) and the lowest
/// eigenvalue lambda1(p) of M^-1/2 K M^-1/2, K the exact Hessian there (modal_analysis), is
/// computed. Its sign is the sign of K's lowest eigenvalue (Sylvester), i.e. whether the
/// equilibrium is a minimum: lambda1 > 0 stable, < 0 unstable. The threshold is the root of
/// lambda1(p), found by the Illinois variant of regula falsi inside a bracket [low, high]
/// with lambda1(low) > 0 > lambda1(high) (Dowell and Jarratt, BIT 11, 1971): lambda1 is smooth
/// and nearly linear in p near the threshold, so it converges superlinearly, and it never
/// leaves the bracket.
///
/// Greenhill (1881): a vertical clamped-free column under its own weight buckles at
/// rho A g L^3 / (E I) = 7.8373 (the first zero of the Bessel function J_{-1/3}:
/// Gamma_c = (9/4) j^2 with j = 1.86635; Timoshenko and Gere, "Theory of Elastic Stability",
/// 2nd ed., section 2.13: q L^3 = 7.837 E I).

#include <functional>
#include <string>
#include <vector>

#include "bristle/analysis/static_solver.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// Builds the (finalized) model at load parameter p; its initial positions are the
/// unperturbed configuration whose stability is in question.
using LoadedModelFactory = std::function<Model(double parameter)>;

struct StabilitySettings {
  double low = 0.0;           ///< a parameter where the system is stable
  double high = 1.0;          ///< a parameter where it is unstable
  double tolerance = 1e-7;    ///< stop when the bracket is below tolerance * |p|
  int max_evaluations = 60;
  StaticSettings static_settings;
};

struct StabilitySample {
  double parameter = 0.0;
  double lowest_eigenvalue = 0.0;  ///< lambda1 = omega1^2 [1/s^2] (negative: unstable)
};

struct StabilityResult {
  bool ok = false;
  std::string message;    ///< empty when ok
  double critical = 0.0;  ///< the threshold parameter
  std::vector<StabilitySample> samples;  ///< every evaluation, in order
};

/// lambda1 at one parameter (static solve, then the lowest mode); NaN and a message on failure.
double lowest_eigenvalue_at_equilibrium(const Model& model, const StaticSettings& settings,
                                        std::string* message = nullptr);

StabilityResult find_stability_threshold(const LoadedModelFactory& make_model,
                                         const StabilitySettings& settings);

}  // namespace bristle
