#pragma once
/// The squared distance between two segments as a function of their four end points, with
/// its exact gradient and Hessian: the geometry of rod-rod contact (energy/rod_contact.hpp).
///
/// Stencil x = [p0, p1, q0, q1] (D entries each); P(s) = p0 + s (p1 - p0), Q(t) = q0 + t (q1 - q0),
///
///   D(x) = min over (s, t) in [0, 1]^2 of f(x, s, t),   f = |P(s) - Q(t)|^2.
///
/// The minimiser (contact/segment_distance.hpp) has each parameter either on a bound (0 or 1:
/// a vertex of that segment is the closest point) or free inside. With y the free parameters
/// (none, s, t or both), D(x) = f(x, y*(x)) and f_y = 0 there, so (docs/contact.md,
/// "Distance between segments"):
///
///   grad D = f_x,     hess D = f_xx - f_xy f_yy^-1 f_yx,
///
/// the second by differentiating f_y(x, y*(x)) = 0 (the implicit function theorem). f is
/// quadratic in x for fixed (s, t): with r = P(s) - Q(t) and R = dr/dx = [(1-s) I, s I,
/// -(1-t) I, -t I], f_x = 2 R^T r and f_xx = 2 R^T R; f_yy is 2 [[|e_p|^2, -e_p.e_q],
/// [-e_p.e_q, |e_q|^2]] (e_p = p1 - p0, e_q = q1 - q0). The formula holds wherever the type of
/// minimiser does not change, which is everywhere but a set of measure zero; there D is C^1.
/// Parallel segments whose closest points are both inside (f_yy singular, the minimiser not
/// unique) keep s where segment_distance put it and free t only.

#include "bristle/math/types.hpp"

namespace bristle {

template <int D>
struct SegmentDistanceSquared {
  double value = 0.0;  ///< D(x) = |P(s) - Q(t)|^2 [m^2]
  double s = 0.0, t = 0.0;
  Vec<4 * D> gradient;
  Mat<4 * D, 4 * D> hessian;  ///< only when asked for
};

/// D(x) for the stencil [p0, p1, q0, q1]; the Hessian when `with_hessian`.
template <int D>
SegmentDistanceSquared<D> segment_distance_squared(const Vec<4 * D>& x, bool with_hessian);

}  // namespace bristle
