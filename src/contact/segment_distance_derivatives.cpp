#include "bristle/contact/segment_distance_derivatives.hpp"

#include "bristle/contact/segment_distance.hpp"

namespace bristle {
namespace {

template <int D>
Vec3 padded(const Vec<D>& v) {
  Vec3 out = Vec3::Zero();
  out.template head<D>() = v;
  return out;
}

}  // namespace

template <int D>
SegmentDistanceSquared<D> segment_distance_squared(const Vec<4 * D>& x, bool with_hessian) {
  constexpr int N = 4 * D;
  const Vec<D> p0 = x.template segment<D>(0), p1 = x.template segment<D>(D);
  const Vec<D> q0 = x.template segment<D>(2 * D), q1 = x.template segment<D>(3 * D);
  const SegmentDistance closest = segment_distance(padded<D>(p0), padded<D>(p1), padded<D>(q0), padded<D>(q1));
  SegmentDistanceSquared<D> out;
  const double s = closest.s, t = closest.t;
  out.s = s;
  out.t = t;
  const Vec<D> ep = p1 - p0, eq = q1 - q0;
  const Vec<D> r = (p0 + s * ep) - (q0 + t * eq);
  out.value = r.squaredNorm();
  const double weight[4] = {1.0 - s, s, -(1.0 - t), -t};
  for (int k = 0; k < 4; ++k) out.gradient.template segment<D>(k * D) = 2.0 * weight[k] * r;
  if (!with_hessian) return out;

  // f_xx = 2 R^T R: block (k, l) is 2 w_k w_l I.
  out.hessian.setZero();
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < 4; ++l) out.hessian.template block<D, D>(k * D, l * D).diagonal().setConstant(2.0 * weight[k] * weight[l]);

  // The free parameters: strictly inside their segment.
  const double pp = ep.squaredNorm(), qq = eq.squaredNorm(), pq = ep.dot(eq);
  bool free_s = s > 0.0 && s < 1.0 && pp > 0.0;
  const bool free_t = t > 0.0 && t < 1.0 && qq > 0.0;
  // Parallel (or nearly: f_yy's determinant lost to rounding): the minimiser is not unique.
  if (free_s && free_t && !(pp * qq - pq * pq > 1e-12 * pp * qq)) free_s = false;
  if (!free_s && !free_t) return out;

  // f_xs = 2 (dR/ds^T r + R^T e_p), dR/ds = [-I, I, 0, 0]; f_xt = 2 (dR/dt^T r - R^T e_q),
  // dR/dt = [0, 0, I, -I].
  Vec<N> f_xs, f_xt;
  f_xs.template segment<D>(0) = 2.0 * (-r + weight[0] * ep);
  f_xs.template segment<D>(D) = 2.0 * (r + weight[1] * ep);
  f_xs.template segment<D>(2 * D) = 2.0 * weight[2] * ep;
  f_xs.template segment<D>(3 * D) = 2.0 * weight[3] * ep;
  f_xt.template segment<D>(0) = -2.0 * weight[0] * eq;
  f_xt.template segment<D>(D) = -2.0 * weight[1] * eq;
  f_xt.template segment<D>(2 * D) = 2.0 * (r - weight[2] * eq);
  f_xt.template segment<D>(3 * D) = 2.0 * (-r - weight[3] * eq);
  if (free_s && free_t) {
    // f_yy = 2 [[pp, -pq], [-pq, qq]]; its inverse is [[qq, pq], [pq, pp]] / (2 det).
    const double det = pp * qq - pq * pq;
    const double a = qq / (2.0 * det), b = pq / (2.0 * det), c = pp / (2.0 * det);
    out.hessian.noalias() -= a * f_xs * f_xs.transpose() + c * f_xt * f_xt.transpose() +
                             b * (f_xs * f_xt.transpose() + f_xt * f_xs.transpose());
  } else if (free_s) {
    out.hessian.noalias() -= (1.0 / (2.0 * pp)) * f_xs * f_xs.transpose();
  } else {
    out.hessian.noalias() -= (1.0 / (2.0 * qq)) * f_xt * f_xt.transpose();
  }
  return out;
}

template SegmentDistanceSquared<2> segment_distance_squared<2>(const Vec<8>&, bool);
template SegmentDistanceSquared<3> segment_distance_squared<3>(const Vec<12>&, bool);

}  // namespace bristle
