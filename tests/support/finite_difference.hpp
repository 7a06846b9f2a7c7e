#pragma once
/// Central finite differences of a scalar function of one vector, and a comparison that
/// reports the worst entry. Every energy packs its stencil into one vector and is checked
/// with these.

#include <functional>
#include <sstream>
#include <string>

#include <Eigen/Core>

namespace bristle::test {

using ScalarFunction = std::function<double(const Eigen::VectorXd&)>;
using VectorFunction = std::function<Eigen::VectorXd(const Eigen::VectorXd&)>;

/// Central difference gradient, O(step^2) accurate.
inline Eigen::VectorXd fd_gradient(const ScalarFunction& f, const Eigen::VectorXd& x, double step) {
  Eigen::VectorXd g(x.size());
  Eigen::VectorXd xp = x, xm = x;
  for (int i = 0; i < x.size(); ++i) {
    xp[i] = x[i] + step;
    xm[i] = x[i] - step;
    g[i] = (f(xp) - f(xm)) / (2.0 * step);
    xp[i] = xm[i] = x[i];
  }
  return g;
}

/// Central difference Jacobian of a vector function (the Hessian, given the gradient).
inline Eigen::MatrixXd fd_jacobian(const VectorFunction& f, const Eigen::VectorXd& x, double step) {
  const Eigen::VectorXd f0 = f(x);
  Eigen::MatrixXd J(f0.size(), x.size());
  Eigen::VectorXd xp = x, xm = x;
  for (int i = 0; i < x.size(); ++i) {
    xp[i] = x[i] + step;
    xm[i] = x[i] - step;
    J.col(i) = (f(xp) - f(xm)) / (2.0 * step);
    xp[i] = xm[i] = x[i];
  }
  return J;
}

struct Comparison {
  bool ok = true;
  double worst_error = 0.0;  ///< |a - b| of the worst entry
  double scale = 0.0;        ///< the magnitude the error is relative to
  std::string message;
};

/// Passes when every entry satisfies |a - b| <= rtol * max(|b|_inf, floor): relative to the
/// largest entry of the reference, so tiny entries are not held to impossible precision.
inline Comparison compare_matrices(const Eigen::MatrixXd& analytic, const Eigen::MatrixXd& reference,
                                   double rtol, double floor = 0.0) {
  Comparison c;
  c.scale = std::max(reference.cwiseAbs().maxCoeff(), floor);
  Eigen::Index r = 0, col = 0;
  c.worst_error = (analytic - reference).cwiseAbs().maxCoeff(&r, &col);
  c.ok = std::isfinite(c.worst_error) && analytic.allFinite() && c.worst_error <= rtol * c.scale;
  std::ostringstream out;
  out << "worst entry (" << r << ", " << col << "): analytic " << analytic(r, col) << " vs reference "
      << reference(r, col) << ", error " << c.worst_error << " relative " << c.worst_error / c.scale;
  c.message = out.str();
  return c;
}

}  // namespace bristle::test
