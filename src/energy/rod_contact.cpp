#include "bristle/energy/rod_contact.hpp"

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
    out.hessian.noalias() = (c.stiffness * (b.d2b - b.db / d)) * grad_d * grad_d.transpose();
    return out;
  }
  const Mat<N, N> hess_d = squared.hessian / (2.0 * d) - grad_d * grad_d.transpose() / d;
  out.hessian = c.stiffness * (b.d2b * grad_d * grad_d.transpose() + b.db * hess_d);
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
