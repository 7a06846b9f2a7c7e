#include "bristle/energy/rod_contact.hpp"

#include <algorithm>
#include <limits>

#include <Eigen/Eigenvalues>

#include "bristle/contact/segment_distance_derivatives.hpp"

namespace bristle {

BarrierValue barrier_function(double d, double dhat) {
  BarrierValue v;
  if (!(d < dhat)) return v;
  if (!(d > 0.0)) {
    constexpr double kInfinity = std::numeric_limits<double>::infinity();
    return {kInfinity, -kInfinity, kInfinity};
  }
  const double e = d - dhat, log_ratio = std::log(d / dhat);
  v.b = -e * e * log_ratio;
  v.db = -2.0 * e * log_ratio - e * e / d;
  v.d2b = -2.0 * log_ratio - 4.0 * e / d + e * e / (d * d);
  return v;
}

double barrier_force_slope(double gap, double gap_hat, double stiffness) {
  // psi = d(g phi)/dg, phi = -kappa b'(g): -kappa (b' + g b''), where the e^2 / g terms of b'
  // and g b'' cancel (e = g - g^): b' + g b'' = -2 (2 g - g^) ln(g / g^) - 4 (g - g^).
  if (!(gap > 0.0) || !(gap < gap_hat)) return 0.0;
  return 2.0 * stiffness * ((2.0 * gap - gap_hat) * std::log(gap / gap_hat) + 2.0 * (gap - gap_hat));
}

double normal_stiffness(double gap, const BarrierValue& b, const RodContactConstants& c) {
  const double primal = c.stiffness * b.d2b;
  if (!(c.force >= 0.0)) return primal;
  const double barrier_force = -c.stiffness * b.db;
  // kappa b'' + (lambda - phi) / g = (lambda - psi) / g, which does not cancel where phi and
  // kappa b'' are both huge (a pair far inside g^).
  const double primal_dual = (c.force - barrier_force_slope(gap, c.gap_hat, c.stiffness)) / gap;
  const double scaled = barrier_force > 0.0 ? primal * (c.force / barrier_force) : primal;
  return std::max({primal_dual, scaled, 0.0});
}

template <int D>
double rod_contact_energy(const Vec<4 * D>& x, const RodContactConstants& c) {
  const double d = std::sqrt(segment_distance_squared<D>(x, false).value);
  return c.stiffness * barrier_function(d - c.reach, c.gap_hat).b;
}

template <int D>
RodContactLocal<D> rod_contact_local(const Vec<4 * D>& x, const RodContactConstants& c, bool hessian,
                                     HessianProjection projection) {
  constexpr int N = 4 * D;
  RodContactLocal<D> out;
  const bool rank_one = projection == HessianProjection::GaussNewton || projection == HessianProjection::BendingModes;
  const SegmentDistanceSquared<D> squared = segment_distance_squared<D>(x, hessian && !rank_one);
  const double d = std::sqrt(squared.value);
  out.gap = d - c.reach;
  const BarrierValue b = barrier_function(out.gap, c.gap_hat);
  out.energy = c.stiffness * b.b;
  if (b.db == 0.0) {
    out.gradient.setZero();
    if (hessian) out.hessian.setZero();
    return out;
  }
  // d >= R > 0 here (the gap is positive), so grad d is defined.
  const Vec<N> grad_d = squared.gradient / (2.0 * d);
  out.gradient = (c.stiffness * b.db) * grad_d;
  if (!hessian) return out;
  if (rank_one) {
    // hess d = hess D / (2 d) - grad d grad d^T / d contributes -b' / d along grad d (b' < 0).
    out.hessian.noalias() = (normal_stiffness(out.gap, b, c) - c.stiffness * b.db / d) * grad_d * grad_d.transpose();
    return out;
  }
  const Mat<N, N> hess_d = squared.hessian / (2.0 * d) - grad_d * grad_d.transpose() / d;
  out.hessian = normal_stiffness(out.gap, b, c) * grad_d * grad_d.transpose() + (c.stiffness * b.db) * hess_d;
  if (projection == HessianProjection::Projected) {
    Eigen::SelfAdjointEigenSolver<Mat<N, N>> eigen(out.hessian);
    const Vec<N> clamped = eigen.eigenvalues().cwiseMax(0.0);
    out.hessian.noalias() = eigen.eigenvectors() * clamped.asDiagonal() * eigen.eigenvectors().transpose();
  }
  return out;
}

template double rod_contact_energy<2>(const Vec<8>&, const RodContactConstants&);
template double rod_contact_energy<3>(const Vec<12>&, const RodContactConstants&);
template RodContactLocal<2> rod_contact_local<2>(const Vec<8>&, const RodContactConstants&, bool, HessianProjection);
template RodContactLocal<3> rod_contact_local<3>(const Vec<12>&, const RodContactConstants&, bool, HessianProjection);

}  // namespace bristle
