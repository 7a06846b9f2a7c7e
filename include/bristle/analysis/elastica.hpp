#pragma once
/// An independent reference for the planar, inextensible, unshearable elastica of a
/// clamped-free rod (Euler 1744; Kirchhoff rod theory, e.g. Audoly and Pomeau, "Elasticity and
/// Geometry", 2010, ch. 3). It does not use Bristle's discretisation: it integrates the
/// continuum boundary-value problem with a shooting method, to serve as the ground truth the
/// discrete rod must converge to.
///
/// Set-up, lengths scaled by L (s in [0, 1] is arc length from the clamp):
///
///   the rod leaves the clamp horizontally along +x, gravity and the tip load point along -y;
///   theta(s) is the tangent's angle from +x, counter-clockwise (so a sagging rod has
///   theta < 0), x' = cos theta, y' = sin theta.
///
/// Moment balance of the part [s, 1] about the point r(s) with the constitutive law
/// m = E I theta' gives E I theta'(s) = -w int_s^L (x(t) - x(s)) dt - P (x(L) - x(s)) for a
/// weight w per length and a downward tip force P; differentiating once,
///
///   theta'' = (Gamma (1 - s) + alpha) cos theta,     theta(0) = 0,  theta'(1) = 0,
///   Gamma = rho A g L^3 / (E I)   (gravito-bending number, self-weight),
///   alpha = P L^2 / (E I)         (tip-load parameter).
///
/// (Written with theta measured clockwise the sign of the right-hand side flips; that is the
/// form theta'' = -Gamma (1 - s) cos theta often quoted.) Small loads give the Euler-Bernoulli
/// tip deflections y(1) = -Gamma/8 and y(1) = -alpha/3. Reference values this solver
/// reproduces (tests/analysis/test_elastica.cpp): Gamma = 1: y(1) = -0.123471, Gamma = 10:
/// y(1) = -0.700200; alpha = 1: y(1) = -0.30172 (Bisshopp and Drucker, "Large deflection of
/// cantilever beams", Q. Appl. Math. 3, 1945, the tip load case).
///
/// Method: shooting on kappa0 = theta'(0). Each trial integrates (theta, theta', x, y) and the
/// variational equations (dtheta/dkappa0, dtheta'/dkappa0) with classical fourth-order
/// Runge-Kutta at fixed step 1/steps, and Newton's method drives theta'(1) to zero using the
/// exact derivative d theta'(1)/d kappa0. The load is continued from zero in increments
/// (Gamma + alpha <= 2 per increment) so that Newton always starts next to the solution on
/// the branch connected to the straight rod. With the default 4000 steps the tip position is
/// accurate to about 1e-12 for Gamma <= 100 (RK4's error is O(step^4); the test compares
/// with a run at twice the steps).

#include <string>
#include <vector>

namespace bristle {

struct ElasticaSettings {
  int steps = 4000;             ///< RK4 steps over s in [0, 1]
  /// Converged when |theta'(1)| <= tolerance (dimensionless curvature), or when the Newton
  /// correction to theta'(0) is below 1e-14 |theta'(0)| (the residual's round-off floor).
  double tolerance = 1e-13;
  int max_newton_iterations = 50;  ///< per continuation increment
  double max_load_increment = 2.0; ///< largest increase of Gamma + alpha per continuation step
  bool keep_curve = false;      ///< fill the sampled curve (steps + 1 points)
};

struct ElasticaSolution {
  bool ok = false;
  std::string message;          ///< empty when ok
  double root_curvature = 0.0;  ///< theta'(0); the clamp moment is E I theta'(0) / L
  double tip_x = 0.0;           ///< x(1), in units of L
  double tip_y = 0.0;           ///< y(1), in units of L (negative: below the clamp)
  double tip_angle = 0.0;       ///< theta(1) [rad]
  int newton_iterations = 0;    ///< all continuation increments together
  /// The curve at s = i / steps (only with keep_curve): positions in units of L, angle [rad].
  std::vector<double> s, x, y, theta;
};

/// Clamped-free elastica under self-weight (Gamma >= 0) and a downward tip load (alpha >= 0).
ElasticaSolution solve_cantilever_elastica(double gamma, double alpha,
                                           const ElasticaSettings& settings = {});

}  // namespace bristle
