#include "bristle/energy/bend.hpp"

#include <cassert>
#include <cmath>
#include <limits>

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

/// b = c / |c|, c = v1 x v2, made exactly perpendicular to the first edge's unit tangent t1
/// first. When the edges are straight up to rounding, c is rounding noise and may point partly
/// along the rod; a binormal with a tangential part would mix stretching into the bending
/// Hessian (up to 80% off the straight limit). In exact arithmetic c . t1 = 0 and this changes
/// nothing.
Vec3 binormal_from_cross(const Vec3& c, const Vec3& t1) {
  const Vec3 perpendicular = c - c.dot(t1) * t1;
  const double n = perpendicular.norm();
  return n > 0.0 ? Vec3(perpendicular * (1.0 / n)) : any_perpendicular(t1);
}

EdgeDerivatives<3> edge_derivatives(const Vec3& v1, const Vec3& v2, bool with_hessian) {
  EdgeDerivatives<3> d;
  const Vec3 c = v1.cross(v2);
  const double c_norm = c.norm();
  const double dot = v1.dot(v2);
  d.theta = std::atan2(c_norm, dot);
  Vec3 b;
  if (c_norm > 0.0) {
    b = binormal_from_cross(c, v1.normalized());
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
/// the sum of the Gauss-Newton parts of two perpendicular bending directions, a PSD stand-in.
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

/// The turning angle with each edge's orthonormal frame (t_a, m_a = t_a x b, b) and length:
/// what the closed-form spectrum needs. b = z in 2D.
template <int D>
struct EdgeFrames {
  double theta = 0.0;
  double l1 = 0.0, l2 = 0.0;
  double inverse_l1 = 0.0, inverse_l2 = 0.0;  // the kernels multiply: a division costs several products
  Vec<D> t1, m1, t2, m2;
  Vec3 b = Vec3::UnitZ();
  bool degenerate = false;  // 3D, v1 parallel to v2: b is any perpendicular
  double tan_half = 0.0;    // 3D: tan(theta / 2), from the same products as theta (no std::tan)
};

/// The edges' lengths, their inverses and unit tangents: one division per edge.
template <int D>
void set_lengths_and_tangents(EdgeFrames<D>& f, const Vec<D>& v1, const Vec<D>& v2) {
  f.l1 = v1.norm();
  f.l2 = v2.norm();
  f.inverse_l1 = 1.0 / f.l1;
  f.inverse_l2 = 1.0 / f.l2;
  f.t1 = v1 * f.inverse_l1;
  f.t2 = v2 * f.inverse_l2;
}

EdgeFrames<2> edge_frames(const Vec2& v1, const Vec2& v2) {
  EdgeFrames<2> f;
  f.theta = std::atan2(cross_z(v1, v2), v1.dot(v2));
  set_lengths_and_tangents(f, v1, v2);
  f.m1 = cross_with_z(f.t1);
  f.m2 = cross_with_z(f.t2);
  return f;
}

EdgeFrames<3> edge_frames(const Vec3& v1, const Vec3& v2) {
  EdgeFrames<3> f;
  const Vec3 c = v1.cross(v2);
  const double c_norm = c.norm();
  const double dot = v1.dot(v2);
  f.theta = std::atan2(c_norm, dot);
  set_lengths_and_tangents(f, v1, v2);
  // tan(theta/2) = sin / (1 + cos) = (1 - cos) / sin, in whichever form subtracts nothing:
  // with |v1 x v2| = l1 l2 sin and v1 . v2 = l1 l2 cos.
  const double l1_l2 = f.l1 * f.l2;
  if (dot >= 0.0)
    f.tan_half = c_norm / (l1_l2 + dot);
  else
    f.tan_half = c_norm > 0.0 ? (l1_l2 - dot) / c_norm : std::tan(0.5 * f.theta);
  if (c_norm > 0.0) {
    f.b = binormal_from_cross(c, f.t1);
  } else {
    f.degenerate = true;
    f.b = any_perpendicular(v1);
  }
  f.m1 = f.t1.cross(f.b);
  f.m2 = f.t2.cross(f.b);
  return f;
}

/// Node-space image J^T S^-1 R u of an eigenvector u given by its in-plane components
/// (alpha1, beta1, alpha2, beta2) and out-of-plane ones (gamma1, gamma2).
template <int D>
Vec<3 * D> node_vector(const EdgeFrames<D>& f, double alpha1, double beta1, double alpha2, double beta2,
                       double gamma1, double gamma2) {
  Vec<D> w1 = (alpha1 * f.t1 + beta1 * f.m1) * f.inverse_l1;
  Vec<D> w2 = (alpha2 * f.t2 + beta2 * f.m2) * f.inverse_l2;
  if constexpr (D == 3) {
    w1 += (gamma1 * f.inverse_l1) * f.b;
    w2 += (gamma2 * f.inverse_l2) * f.b;
  }
  Vec<3 * D> g;
  g << -w1, w1 - w2, w2;
  return g;
}

/// The eigenvalues of O (3D, out of plane): -d tan(theta/2) and d cot(theta/2). With a zero
/// rest angle d = theta and the second tends to 2 at straight; otherwise it has no limit
/// there (the cone of the unsigned angle) and is -infinity. 0 * infinity is taken as 0 (a
/// rest shape folded exactly onto itself).
void out_of_plane_eigenvalues(double theta, double tan_half, double rest_angle, double d, double& symmetric,
                              double& antisymmetric) {
  symmetric = d == 0.0 ? 0.0 : -d * tan_half;
  if (rest_angle == 0.0) {
    antisymmetric = theta > 0.0 ? theta / tan_half : 2.0;  // theta cot(theta/2) -> 2
  } else {
    antisymmetric = d == 0.0 ? 0.0 : (tan_half > 0.0 ? d / tan_half : -std::numeric_limits<double>::infinity());
  }
}

/// With `positive_only`, eigenvectors are formed only for positive eigenvalues (all the
/// projection needs); the others are left zero.
template <int D>
BendHessianSpectrum<D> spectrum_from_frames(const EdgeFrames<D>& f, double rest_angle, double stiffness,
                                            bool positive_only = false) {
  BendHessianSpectrum<D> out;
  if constexpr (D == 3) {
    if (f.degenerate && f.theta < 1.0) {
      // Exactly straight: no binormal, so no bending plane. The limit with a zero rest angle,
      // K (w w^T) (x) (I - t t^T), is 2K on the antisymmetric rotation across the tangent in
      // both transverse directions (beta and gamma), whatever perpendicular the frames use. With
      // a rest angle the unsigned angle has a cone here and no Hessian; the same PSD matrix
      // stands in (as bend_hessian does), so the result does not depend on the frames' axes.
      const double h = 1.0 / std::sqrt(2.0);
      for (int i = 0; i < 6; ++i) {
        out.value[i] = 0.0;
        out.vector[i].setZero();
      }
      out.value[2] = 2.0 * stiffness;
      out.vector[2] = node_vector<D>(f, 0.0, -h, 0.0, h, 0.0, 0.0);
      out.value[5] = 2.0 * stiffness;
      out.vector[5] = node_vector<D>(f, 0.0, 0.0, 0.0, 0.0, h, -h);
      return out;
    }
  }
  const double d = deviation<D>(f.theta, rest_angle);
  const double r = std::sqrt(1.0 + d * d);
  const double k = d / (1.0 + r);
  const double norm = 1.0 / std::sqrt(2.0 + 2.0 * k * k);
  out.value[0] = -stiffness * d;
  out.value[1] = stiffness * d;
  out.value[2] = stiffness * (1.0 + r);
  out.value[3] = -stiffness * d * d / (1.0 + r);  // 1 - r without cancellation
  if constexpr (D == 3) {
    double symmetric = 0.0, antisymmetric = 0.0;
    out_of_plane_eigenvalues(f.theta, f.tan_half, rest_angle, d, symmetric, antisymmetric);
    out.value[4] = stiffness * symmetric;
    out.value[5] = stiffness * antisymmetric;
  }
  auto wanted = [&](int i) {
    if (!positive_only || out.value[i] > 0.0) return true;
    out.vector[i].setZero();
    return false;
  };
  if (wanted(0)) out.vector[0] = node_vector<D>(f, 0.5, 0.5, -0.5, 0.5, 0.0, 0.0);
  if (wanted(1)) out.vector[1] = node_vector<D>(f, -0.5, 0.5, 0.5, 0.5, 0.0, 0.0);
  if (wanted(2)) out.vector[2] = node_vector<D>(f, k * norm, -norm, k * norm, norm, 0.0, 0.0);
  if (wanted(3)) out.vector[3] = node_vector<D>(f, norm, k * norm, norm, -k * norm, 0.0, 0.0);
  if constexpr (D == 3) {
    const double h = 1.0 / std::sqrt(2.0);
    if (wanted(4)) out.vector[4] = node_vector<D>(f, 0.0, 0.0, 0.0, 0.0, h, h);
    if (wanted(5)) out.vector[5] = node_vector<D>(f, 0.0, 0.0, 0.0, 0.0, h, -h);
  }
  return out;
}

/// sum value[k] vector[k] vector[k]^T over the positive terms: the PSD matrix of a spectrum.
template <int D>
Mat<3 * D, 3 * D> positive_part(const BendHessianSpectrum<D>& spectrum) {
  Mat<3 * D, 3 * D> h = Mat<3 * D, 3 * D>::Zero();
  for (int k = 0; k < BendHessianSpectrum<D>::kCount; ++k)
    if (spectrum.value[k] > 0.0) h.noalias() += spectrum.value[k] * spectrum.vector[k] * spectrum.vector[k].transpose();
  return h;
}

template <int D>
EdgeFrames<D> stencil_frames(const BendStencil<D>& s) {
  const Vec<D> v1 = s.x1 - s.x0, v2 = s.x2 - s.x1;
  assert(v1.squaredNorm() > 0.0 && v2.squaredNorm() > 0.0 && "bend stencil with a zero-length edge");
  return edge_frames(v1, v2);
}

}  // namespace

template <int D>
double turning_angle(const BendStencil<D>& s) {
  // The angle alone (energies are evaluated in every line-search trial): no frames.
  const Vec<D> v1 = s.x1 - s.x0, v2 = s.x2 - s.x1;
  if constexpr (D == 2) {
    return std::atan2(cross_z(v1, v2), v1.dot(v2));
  } else {
    return std::atan2(v1.cross(v2).norm(), v1.dot(v2));
  }
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

template <int D>
BendHessianSpectrum<D> bend_hessian_spectrum(const BendStencil<D>& s, double rest_angle, double stiffness) {
  return spectrum_from_frames<D>(stencil_frames<D>(s), rest_angle, stiffness);
}

template <int D>
BendLocal<D> bend_local(const BendStencil<D>& s, double rest_angle, double stiffness, bool positive_only) {
  const EdgeFrames<D> f = stencil_frames<D>(s);
  const double d = deviation<D>(f.theta, rest_angle);
  BendLocal<D> out;
  out.energy = 0.5 * stiffness * d * d;
  // dtheta/dx: the in-plane direction (beta1, beta2) = (1, -1) of the frames. At exactly
  // straight in 3D it has no direction; 0 is the limit (zero rest angle) or the symmetric
  // subgradient at the cone's tip (see bend_gradient).
  if (f.degenerate && f.theta < 1.0) {
    out.gradient.setZero();
  } else {
    out.gradient = (stiffness * d) * node_vector<D>(f, 0.0, 1.0, 0.0, -1.0, 0.0, 0.0);
  }
  out.spectrum = spectrum_from_frames<D>(f, rest_angle, stiffness, positive_only);
  return out;
}

template <int D>
BendLocal<D> bend_local_bending_modes(const BendStencil<D>& s, double rest_angle, double stiffness) {
  const EdgeFrames<D> f = stencil_frames<D>(s);
  const double d = deviation<D>(f.theta, rest_angle);
  BendLocal<D> out;
  out.energy = 0.5 * stiffness * d * d;
  for (int k = 0; k < BendHessianSpectrum<D>::kCount; ++k) {
    out.spectrum.value[k] = 0.0;
    out.spectrum.vector[k].setZero();
  }
  if constexpr (D == 3) {
    if (f.degenerate && f.theta < 1.0) {
      // Exactly straight: the straight limit, as the full spectrum (both transverse directions).
      out.gradient.setZero();
      out.spectrum = spectrum_from_frames<D>(f, rest_angle, stiffness, true);
      return out;
    }
  }
  const Vec<3 * D> g = node_vector<D>(f, 0.0, 1.0, 0.0, -1.0, 0.0, 0.0);  // dtheta/dx
  out.gradient = (stiffness * d) * g;
  // In-plane relative rotation: K g g^T = 2K on g / sqrt2 (the Gauss-Newton part).
  out.spectrum.value[2] = 2.0 * stiffness;
  out.spectrum.vector[2] = (1.0 / std::sqrt(2.0)) * g;
  if constexpr (D == 3) {
    // Out-of-plane relative rotation: the antisymmetric eigenpair of O, kept when positive.
    double symmetric = 0.0, antisymmetric = 0.0;
    out_of_plane_eigenvalues(f.theta, f.tan_half, rest_angle, d, symmetric, antisymmetric);
    if (antisymmetric > 0.0) {
      const double h = 1.0 / std::sqrt(2.0);
      out.spectrum.value[5] = stiffness * antisymmetric;
      out.spectrum.vector[5] = node_vector<D>(f, 0.0, 0.0, 0.0, 0.0, h, -h);
    }
  }
  return out;
}

template <int D>
Mat<3 * D, 3 * D> bend_hessian_bending_modes(const BendStencil<D>& s, double rest_angle, double stiffness) {
  return positive_part<D>(bend_local_bending_modes<D>(s, rest_angle, stiffness).spectrum);
}

template <int D>
Mat<3 * D, 3 * D> bend_hessian_projected(const BendStencil<D>& s, double rest_angle, double stiffness) {
  return positive_part<D>(bend_hessian_spectrum<D>(s, rest_angle, stiffness));
}

#define BRISTLE_INSTANTIATE_BEND(D)                                                           \
  template double turning_angle<D>(const BendStencil<D>&);                                   \
  template double angle_deviation<D>(const BendStencil<D>&, double);                         \
  template Vec<3 * D> turning_angle_gradient<D>(const BendStencil<D>&);                      \
  template double bend_energy<D>(const BendStencil<D>&, double, double);                     \
  template Vec<3 * D> bend_gradient<D>(const BendStencil<D>&, double, double);               \
  template Mat<3 * D, 3 * D> bend_hessian<D>(const BendStencil<D>&, double, double);         \
  template Mat<3 * D, 3 * D> bend_hessian_gauss_newton<D>(const BendStencil<D>&, double, double); \
  template BendHessianSpectrum<D> bend_hessian_spectrum<D>(const BendStencil<D>&, double, double); \
  template Mat<3 * D, 3 * D> bend_hessian_projected<D>(const BendStencil<D>&, double, double); \
  template BendLocal<D> bend_local<D>(const BendStencil<D>&, double, double, bool);          \
  template BendLocal<D> bend_local_bending_modes<D>(const BendStencil<D>&, double, double);   \
  template Mat<3 * D, 3 * D> bend_hessian_bending_modes<D>(const BendStencil<D>&, double, double);

BRISTLE_INSTANTIATE_BEND(2)
BRISTLE_INSTANTIATE_BEND(3)

}  // namespace bristle
