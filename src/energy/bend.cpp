#include "bristle/energy/bend.hpp"

#include <cassert>
#include <cmath>

namespace bristle {
namespace {

constexpr double kPi = 3.14159265358979323846;

/// First and second derivatives of theta with respect to the edge vectors (v1, v2).
template <int D>
struct EdgeDerivatives {
  double theta = 0.0;
  Vec<D> g1, g2;          // dtheta/dv1, dtheta/dv2
  Mat<D, D> h11, h12, h22;  // d2theta/dv1dv1, d2theta/dv1dv2, d2theta/dv2dv2
  bool degenerate = false;  // 3D only: v1 parallel to v2, the binormal is undefined
};

/// Jacobian of the edges (v1, v2) with respect to the nodes (x_{i-1}, x_i, x_{i+1}).
template <int D>
Mat<2 * D, 3 * D> edge_jacobian() {
  const Mat<D, D> I = Mat<D, D>::Identity();
  const Mat<D, D> Z = Mat<D, D>::Zero();
  Mat<2 * D, 3 * D> J;
  J << -I, I, Z,
        Z, -I, I;
  return J;
}

template <int D>
Vec<3 * D> to_nodes(const Vec<D>& g1, const Vec<D>& g2) {
  Vec<2 * D> g;
  g << g1, g2;
  return edge_jacobian<D>().transpose() * g;
}

template <int D>
Mat<3 * D, 3 * D> to_nodes(const Mat<D, D>& h11, const Mat<D, D>& h12, const Mat<D, D>& h22) {
  Mat<2 * D, 2 * D> h;
  h << h11, h12, h12.transpose(), h22;
  const Mat<2 * D, 3 * D> J = edge_jacobian<D>();
  return J.transpose() * h * J;
}

double cross_z(const Vec2& a, const Vec2& b) { return a.x() * b.y() - a.y() * b.x(); }

/// n = v x z for a vector in the xy-plane: v rotated clockwise by 90 degrees.
Vec2 cross_with_z(const Vec2& v) { return Vec2(v.y(), -v.x()); }

EdgeDerivatives<2> edge_derivatives(const Vec2& v1, const Vec2& v2, bool with_hessian) {
  EdgeDerivatives<2> d;
  d.theta = std::atan2(cross_z(v1, v2), v1.dot(v2));
  const double l1sq = v1.squaredNorm(), l2sq = v2.squaredNorm();
  const Vec2 n1 = cross_with_z(v1), n2 = cross_with_z(v2);
  d.g1 = n1 / l1sq;
  d.g2 = -n2 / l2sq;
  if (with_hessian) {
    d.h11 = -sym_outer<2>(v1, n1) / (l1sq * l1sq);
    d.h22 = sym_outer<2>(v2, n2) / (l2sq * l2sq);
    d.h12.setZero();
  }
  return d;
}

/// A unit vector perpendicular to v, chosen deterministically (used only at an exact fold,
/// where every binormal is as good as another).
Vec3 any_perpendicular(const Vec3& v) {
  const Vec3 axis = std::abs(v.x()) <= std::abs(v.y()) && std::abs(v.x()) <= std::abs(v.z())
                        ? Vec3::UnitX()
                        : (std::abs(v.y()) <= std::abs(v.z()) ? Vec3::UnitY() : Vec3::UnitZ());
  return v.cross(axis).normalized();
}

EdgeDerivatives<3> edge_derivatives(const Vec3& v1, const Vec3& v2, bool with_hessian) {
  EdgeDerivatives<3> d;
  const Vec3 c = v1.cross(v2);
  const double c_norm = c.norm();
  const double dot = v1.dot(v2);
  d.theta = std::atan2(c_norm, dot);
  Vec3 b;
  if (c_norm > 0.0) {
    b = c / c_norm;
  } else {
    d.degenerate = true;
    b = any_perpendicular(v1);
  }
  const double l1sq = v1.squaredNorm(), l2sq = v2.squaredNorm();
  const Vec3 n1 = v1.cross(b), n2 = v2.cross(b);
  d.g1 = n1 / l1sq;
  d.g2 = -n2 / l2sq;
  if (with_hessian && !d.degenerate) {
    const double sin_t = std::sin(d.theta), cos_t = std::cos(d.theta);
    const double cot_t = cos_t / sin_t;
    const Mat3 bb = b * b.transpose();
    d.h11 = -sym_outer<3>(v1, n1) / (l1sq * l1sq) + (cot_t / l1sq) * bb;
    d.h22 = sym_outer<3>(v2, n2) / (l2sq * l2sq) + (cot_t / l2sq) * bb;
    d.h12 = -bb / (std::sqrt(l1sq * l2sq) * sin_t);
  }
  return d;
}

template <int D>
EdgeDerivatives<D> stencil_derivatives(const BendStencil<D>& s, bool with_hessian) {
  const Vec<D> v1 = s.x1 - s.x0, v2 = s.x2 - s.x1;
  assert(v1.squaredNorm() > 0.0 && v2.squaredNorm() > 0.0 && "bend stencil with a zero-length edge");
  return edge_derivatives(v1, v2, with_hessian);
}

double wrap_angle(double a) {
  double w = std::remainder(a, 2.0 * kPi);  // in [-pi, pi]
  if (w <= -kPi) w += 2.0 * kPi;
  return w;
}

template <int D>
double deviation(double theta, double rest_angle) {
  return D == 2 ? wrap_angle(theta - rest_angle) : theta - rest_angle;
}

/// 3D, v1 parallel to v2 and pointing the same way: the limit of K (g g^T + d H) as theta
/// -> 0 with d -> 0 is K (w w^T) (x) (I - t t^T) (physics-notes.md). With a nonzero rest
/// angle the unsigned angle has a cone here and no Hessian exists; the same matrix is then
/// the Gauss-Newton part averaged over all bending directions, a PSD stand-in.
Mat9 straight_limit_hessian(const BendStencil<3>& s, double stiffness) {
  const Vec3 v1 = s.x1 - s.x0, v2 = s.x2 - s.x1;
  const double l1 = v1.norm(), l2 = v2.norm();
  const Vec3 t = v1 / l1;
  const Mat3 transverse = Mat3::Identity() - t * t.transpose();
  const Vec3 w(1.0 / l1, -1.0 / l1 - 1.0 / l2, 1.0 / l2);
  Mat9 h;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) h.block<3, 3>(3 * a, 3 * b) = stiffness * w(a) * w(b) * transverse;
  return h;
}

}  // namespace

template <int D>
double turning_angle(const BendStencil<D>& s) {
  return stencil_derivatives<D>(s, false).theta;
}

template <int D>
double angle_deviation(const BendStencil<D>& s, double rest_angle) {
  return deviation<D>(turning_angle<D>(s), rest_angle);
}

template <int D>
Vec<3 * D> turning_angle_gradient(const BendStencil<D>& s) {
  const EdgeDerivatives<D> d = stencil_derivatives<D>(s, false);
  return to_nodes<D>(d.g1, d.g2);
}

template <int D>
double bend_energy(const BendStencil<D>& s, double rest_angle, double stiffness) {
  const double dev = angle_deviation<D>(s, rest_angle);
  return 0.5 * stiffness * dev * dev;
}

template <int D>
Vec<3 * D> bend_gradient(const BendStencil<D>& s, double rest_angle, double stiffness) {
  const EdgeDerivatives<D> d = stencil_derivatives<D>(s, false);
  // At theta = 0 in 3D the direction g is undefined but K d g -> 0 when the rest angle is 0;
  // with a rest angle it is a cone tip, where 0 is the symmetric subgradient.
  if (d.degenerate && d.theta < 1.0) return Vec<3 * D>::Zero();
  const double dev = deviation<D>(d.theta, rest_angle);
  return stiffness * dev * to_nodes<D>(d.g1, d.g2);
}

template <int D>
Mat<3 * D, 3 * D> bend_hessian_gauss_newton(const BendStencil<D>& s, double rest_angle,
                                            double stiffness) {
  (void)rest_angle;
  const EdgeDerivatives<D> d = stencil_derivatives<D>(s, false);
  if constexpr (D == 3) {
    if (d.degenerate && d.theta < 1.0) return straight_limit_hessian(s, stiffness);
  }
  const Vec<3 * D> g = to_nodes<D>(d.g1, d.g2);
  return stiffness * g * g.transpose();
}

template <int D>
Mat<3 * D, 3 * D> bend_hessian(const BendStencil<D>& s, double rest_angle, double stiffness) {
  const EdgeDerivatives<D> d = stencil_derivatives<D>(s, true);
  if constexpr (D == 3) {
    if (d.degenerate) {
      if (d.theta < 1.0) return straight_limit_hessian(s, stiffness);
      // Exact fold (theta = pi): cot and 1/sin are infinite and the Hessian does not exist;
      // the Gauss-Newton part is the finite PSD stand-in.
      return bend_hessian_gauss_newton<D>(s, rest_angle, stiffness);
    }
  }
  const double dev = deviation<D>(d.theta, rest_angle);
  const Vec<3 * D> g = to_nodes<D>(d.g1, d.g2);
  return stiffness * (g * g.transpose() + dev * to_nodes<D>(d.h11, d.h12, d.h22));
}

#define BRISTLE_INSTANTIATE_BEND(D)                                                           \
  template double turning_angle<D>(const BendStencil<D>&);                                   \
  template double angle_deviation<D>(const BendStencil<D>&, double);                         \
  template Vec<3 * D> turning_angle_gradient<D>(const BendStencil<D>&);                      \
  template double bend_energy<D>(const BendStencil<D>&, double, double);                     \
  template Vec<3 * D> bend_gradient<D>(const BendStencil<D>&, double, double);               \
  template Mat<3 * D, 3 * D> bend_hessian<D>(const BendStencil<D>&, double, double);         \
  template Mat<3 * D, 3 * D> bend_hessian_gauss_newton<D>(const BendStencil<D>&, double, double);

BRISTLE_INSTANTIATE_BEND(2)
BRISTLE_INSTANTIATE_BEND(3)

}  // namespace bristle
