#include "bristle/analysis/elastica.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <sstream>

namespace bristle {
namespace {

// State along the rod: theta, theta', x, y, and the sensitivities dtheta/dk, dtheta'/dk with
// respect to the shooting parameter k = theta'(0).
using ShootState = std::array<double, 6>;

struct Loads {
  double gamma = 0.0;
  double alpha = 0.0;
};

// theta'' = (Gamma (1 - s) + alpha) cos theta; its linearisation in theta gives the
// variational equation  u'' = -(Gamma (1 - s) + alpha) sin theta u.
ShootState derivative(double s, const ShootState& q, const Loads& loads) {
  const double q_load = loads.gamma * (1.0 - s) + loads.alpha;
  const double c = std::cos(q[0]), sn = std::sin(q[0]);
  return {q[1], q_load * c, c, sn, q[5], -q_load * sn * q[4]};
}

ShootState axpy(const ShootState& a, double h, const ShootState& b) {
  ShootState r;
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = a[i] + h * b[i];
  return r;
}

struct Curve {
  std::vector<double> s, x, y, theta;
};

// Integrates from s = 0 to 1 with classical RK4 and returns the state at s = 1.
ShootState shoot(double k, const Loads& loads, int steps, Curve* curve) {
  ShootState q{0.0, k, 0.0, 0.0, 0.0, 1.0};
  const double h = 1.0 / steps;
  if (curve) {
    curve->s.assign(1, 0.0);
    curve->x.assign(1, 0.0);
    curve->y.assign(1, 0.0);
    curve->theta.assign(1, 0.0);
  }
  for (int i = 0; i < steps; ++i) {
    const double s = i * h;
    const ShootState k1 = derivative(s, q, loads);
    const ShootState k2 = derivative(s + 0.5 * h, axpy(q, 0.5 * h, k1), loads);
    const ShootState k3 = derivative(s + 0.5 * h, axpy(q, 0.5 * h, k2), loads);
    const ShootState k4 = derivative(s + h, axpy(q, h, k3), loads);
    for (std::size_t j = 0; j < q.size(); ++j)
      q[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
    if (curve) {
      curve->s.push_back((i + 1) * h);
      curve->x.push_back(q[2]);
      curve->y.push_back(q[3]);
      curve->theta.push_back(q[0]);
    }
  }
  return q;
}

}  // namespace

ElasticaSolution solve_cantilever_elastica(double gamma, double alpha,
                                           const ElasticaSettings& settings) {
  assert(settings.steps > 0);
  ElasticaSolution out;
  if (!(gamma >= 0.0) || !(alpha >= 0.0) || !std::isfinite(gamma) || !std::isfinite(alpha)) {
    out.message = "elastica: Gamma and alpha must be finite and non-negative";
    return out;
  }

  // Continuation in the load factor f from 0 to 1, with an adaptive increment. The linear
  // (Euler-Bernoulli) solution theta'(0) = -(Gamma/2 + alpha) is exact at zero load; later
  // increments start from a linear extrapolation of the last two solutions. Each increment is
  // a damped Newton iteration (the step is halved until |theta'(1)| decreases): for a heavy
  // rod the residual is a steep function of theta'(0), since perturbations of the hanging part
  // grow like exp(int sqrt(Gamma (1 - s)) ds), and undamped Newton jumps between branches.
  const double total = gamma + alpha;
  const double max_df = total > 0.0 ? std::min(1.0, settings.max_load_increment / total) : 1.0;
  double f_done = 0.0, k_done = 0.0;       // last converged load factor and theta'(0)
  double f_prev = 0.0, k_prev = 0.0;       // the one before (for the predictor)
  bool have_prev = false;
  double df = max_df;
  ShootState end{};
  while (f_done < 1.0) {
    const double f = std::min(1.0, f_done + df);
    const Loads loads{f * gamma, f * alpha};
    double k = f_done == 0.0 ? -(0.5 * loads.gamma + loads.alpha)
                             : (have_prev ? k_done + (k_done - k_prev) * (f - f_done) / (f_done - f_prev)
                                          : k_done * f / f_done);
    bool converged = false;
    end = shoot(k, loads, settings.steps, nullptr);
    for (int it = 0; it < settings.max_newton_iterations; ++it) {
      ++out.newton_iterations;
      const double residual = end[1];
      if (std::abs(residual) <= settings.tolerance) {
        converged = true;
        break;
      }
      const double slope = end[5];
      if (!std::isfinite(residual) || !std::isfinite(slope) || slope == 0.0) break;
      double dk = -residual / slope;
      // theta'(0) known to machine precision: the residual is at its round-off floor (for a
      // heavy rod that floor, eps |k| |d theta'(1)/dk|, exceeds a fixed tolerance).
      if (std::abs(dk) <= 1e-14 * std::max(1.0, std::abs(k))) {
        converged = true;
        break;
      }
      ShootState trial{};
      bool decreased = false;
      for (int halving = 0; halving < 40; ++halving, dk *= 0.5) {
        trial = shoot(k + dk, loads, settings.steps, nullptr);
        if (std::isfinite(trial[1]) && std::abs(trial[1]) < std::abs(residual)) {
          decreased = true;
          break;
        }
      }
      if (!decreased) break;
      k += dk;
      end = trial;
    }
    if (converged) {
      f_prev = f_done;
      k_prev = k_done;
      have_prev = f_done > 0.0;
      f_done = f;
      k_done = k;
      df = std::min(max_df, 1.5 * df);
    } else {
      df *= 0.5;
      if (df < 1e-8) {
        std::ostringstream message;
        message << "elastica: shooting did not converge at Gamma = " << loads.gamma
                << ", alpha = " << loads.alpha << " (|theta'(1)| = " << std::abs(end[1]) << ")";
        out.message = message.str();
        return out;
      }
    }
  }
  const double k = k_done;

  Curve curve;
  end = shoot(k, {gamma, alpha}, settings.steps, settings.keep_curve ? &curve : nullptr);
  out.ok = true;
  out.root_curvature = k;
  out.tip_angle = end[0];
  out.tip_x = end[2];
  out.tip_y = end[3];
  if (settings.keep_curve) {
    out.s = std::move(curve.s);
    out.x = std::move(curve.x);
    out.y = std::move(curve.y);
    out.theta = std::move(curve.theta);
  }
  return out;
}

}  // namespace bristle
