// Lagged friction between rods (docs/contact.md, "Friction between rods"; Li et al.,
// "Incremental Potential Contact", SIGGRAPH 2020, section 5).

#include "bristle/energy/rod_friction.hpp"

#include <cmath>

#include "bristle/contact/segment_distance_derivatives.hpp"

namespace bristle {
namespace {

template <int D>
using Tangent = Mat<D, D - 1>;

template <int D>
Tangent<D> tangent_of(const RodFrictionConstants& c) {
  return Eigen::Map<const Tangent<D>>(c.tangent.data());
}

/// w = [1-s, s, -(1-t), -t] and r = sum_k w_k (x_k - x_start_k).
template <int D>
Vec<D> relative_displacement(const Vec<4 * D>& x, const RodFrictionConstants& c, double (&w)[4]) {
  w[0] = 1.0 - c.s;
  w[1] = c.s;
  w[2] = -(1.0 - c.t);
  w[3] = -c.t;
  Vec<D> r = Vec<D>::Zero();
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < D; ++i) r[i] += w[k] * (x[k * D + i] - c.start[k * D + i]);
  return r;
}

/// f0(y) - f0(0) of IPC's smoothed Coulomb law, y >= 0.
double shifted_f0(double y, double e) {
  if (y < e) return y * y * (1.0 / e - y / (3.0 * e * e));
  return y - e / 3.0;
}

}  // namespace

template <int D>
std::optional<RodFrictionConstants> lag_rod_friction(const Vec<4 * D>& x0, const RodContactConstants& contact,
                                                     double mu, double slip) {
  const SegmentDistanceSquared<D> closest = segment_distance_squared<D>(x0, false);
  const double d = std::sqrt(closest.value);
  const BarrierValue b = barrier_function(d - contact.reach, contact.gap_hat);
  // No normal force (at or beyond g^), or none that is finite (touching: such pairs are not
  // barrier pairs, but nothing here assumes it).
  if (!(b.db < 0.0) || !std::isfinite(b.db) || !(d > 0.0)) return std::nullopt;
  RodFrictionConstants c;
  // The normal force: the pair's estimate where it has one (the barrier's force at x0 was
  // balanced with the last step's stiffness, which may differ from this step's), else the
  // barrier's own force at x0.
  c.force = mu * (contact.force >= 0.0 ? contact.force : -contact.stiffness * b.db);
  c.slip = slip;
  c.s = closest.s;
  c.t = closest.t;
  for (int k = 0; k < 4 * D; ++k) c.start[k] = x0[k];
  const Vec<D> p = x0.template segment<D>(0) + c.s * (x0.template segment<D>(D) - x0.template segment<D>(0));
  const Vec<D> q = x0.template segment<D>(2 * D) + c.t * (x0.template segment<D>(3 * D) - x0.template segment<D>(2 * D));
  const Vec<D> n = (p - q) / d;
  Tangent<D> T;
  if constexpr (D == 2) {
    T << -n[1], n[0];
  } else {
    // The axis least aligned with n, made orthogonal to it; then n x t1. Any orthonormal
    // basis of the tangent plane gives the same F (it depends on |u| only).
    int axis = 0;
    for (int k = 1; k < 3; ++k)
      if (std::abs(n[k]) < std::abs(n[axis])) axis = k;
    Vec3 a = Vec3::Zero();
    a[axis] = 1.0;
    const Vec3 t1 = (a - a.dot(n) * n).normalized();
    T.col(0) = t1;
    T.col(1) = n.cross(t1);
  }
  Eigen::Map<Tangent<D>>(c.tangent.data()) = T;
  return c;
}

template <int D>
double rod_friction_energy(const Vec<4 * D>& x, const RodFrictionConstants& c) {
  double w[4];
  const Vec<D> r = relative_displacement<D>(x, c, w);
  const Vec<D - 1> u = tangent_of<D>(c).transpose() * r;
  return c.force * shifted_f0(u.norm(), c.slip);
}

template <int D>
RodFrictionLocal<D> rod_friction_local(const Vec<4 * D>& x, const RodFrictionConstants& c, bool hessian) {
  RodFrictionLocal<D> out;
  double w[4];
  const Vec<D> r = relative_displacement<D>(x, c, w);
  const Tangent<D> T = tangent_of<D>(c);
  const Vec<D - 1> u = T.transpose() * r;
  const double y = u.norm(), e = c.slip;
  out.slip = y;
  out.energy = c.force * shifted_f0(y, e);
  // phi = f1(y) / y, and psi = phi'(y) / y (the u u^T coefficient of hess_u), both bounded
  // times what they multiply at y -> 0 (psi u u^T ~ y / e^2).
  const bool sticking = y < e;
  const double phi = sticking ? (2.0 / e - y / (e * e)) : 1.0 / y;
  const double psi = sticking ? (y > 0.0 ? -1.0 / (e * e * y) : 0.0) : -1.0 / (y * y * y);
  const Vec<D> force_r = T * (c.force * phi * u);  // gradient with respect to r
  for (int k = 0; k < 4; ++k) out.gradient.template segment<D>(k * D) = w[k] * force_r;
  if (!hessian) return out;
  Mat<D - 1, D - 1> hess_u = phi * Mat<D - 1, D - 1>::Identity() + psi * u * u.transpose();
  const Mat<D, D> hess_r = c.force * (T * hess_u * T.transpose());
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < 4; ++l) out.hessian.template block<D, D>(k * D, l * D) = (w[k] * w[l]) * hess_r;
  return out;
}

template std::optional<RodFrictionConstants> lag_rod_friction<2>(const Vec<8>&, const RodContactConstants&, double,
                                                                 double);
template std::optional<RodFrictionConstants> lag_rod_friction<3>(const Vec<12>&, const RodContactConstants&, double,
                                                                 double);
template double rod_friction_energy<2>(const Vec<8>&, const RodFrictionConstants&);
template double rod_friction_energy<3>(const Vec<12>&, const RodFrictionConstants&);
template RodFrictionLocal<2> rod_friction_local<2>(const Vec<8>&, const RodFrictionConstants&, bool);
template RodFrictionLocal<3> rod_friction_local<3>(const Vec<12>&, const RodFrictionConstants&, bool);

}  // namespace bristle
