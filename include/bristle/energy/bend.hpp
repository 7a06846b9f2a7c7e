#pragma once
/// Bending energy of one interior vertex (3-vertex stencil x_{i-1}, x_i, x_{i+1}).
///
///   E = 1/2 K (theta - theta_rest)^2,   K = E I / l_i,   l_i = (L_{i-1} + L_i) / 2
///
/// (interface.md section 2). theta is the turning angle between v1 = x_i - x_{i-1} and
/// v2 = x_{i+1} - x_i, zero when straight.
///
/// 2D: theta = atan2(cross_z(v1, v2), v1 . v2), signed, counter-clockwise from v1 to v2
///     (seed 000, with the safer atan2 form of physics-notes.md); theta - theta_rest is
///     wrapped into (-pi, pi].
/// 3D: theta = atan2(|v1 x v2|, v1 . v2) in [0, pi], unsigned (seed 001's evaluation advice).
///     We use theta itself, not 2 tan(theta/2), so that a planar configuration has the same
///     energy in 2D and 3D scenes and the discretisation is the one interface.md defines.
///     Exactly straight with theta_rest = 0 returns the smooth limit of the Hessian,
///     K (w w^T) (x) (I - t t^T), w = (1/l1, -1/l1 - 1/l2, 1/l2) (physics-notes.md); no
///     epsilon enters anywhere else.
///
/// Derivatives, in edge variables (physics-notes.md "Corrected bending Hessian"; seeds 001
/// and 004 have sign and factor errors there), with n_a = v_a x z (2D) or v_a x b^ (3D),
/// b^ = (v1 x v2)/|v1 x v2|, A_a = Sym(v_a, n_a)/|v_a|^4:
///   dtheta/dv1 = n1/|v1|^2,     dtheta/dv2 = -n2/|v2|^2
///   2D: H11 = -A1, H22 = A2, H12 = 0
///   3D: H11 = -A1 + cot(theta)/|v1|^2 b^b^T, H22 = A2 + cot(theta)/|v2|^2 b^b^T,
///       H12 = -b^b^T/(|v1||v2| sin theta)
/// Node derivatives follow from v1 = x_i - x_{i-1}, v2 = x_{i+1} - x_i (J^T H J).
///
/// DOF order of the stencil vector: [x_{i-1}, x_i, x_{i+1}], D entries each.

#include "bristle/math/types.hpp"

namespace bristle {

template <int D>
struct BendStencil {
  Vec<D> x0, x1, x2;  ///< x_{i-1}, x_i, x_{i+1}
};

/// Turning angle: signed in 2D, unsigned in 3D.
template <int D>
double turning_angle(const BendStencil<D>& s);

/// theta - theta_rest, wrapped into (-pi, pi] in 2D (the signed angle lives on a circle).
template <int D>
double angle_deviation(const BendStencil<D>& s, double rest_angle);

template <int D>
double bend_energy(const BendStencil<D>& s, double rest_angle, double stiffness);

template <int D>
Vec<3 * D> bend_gradient(const BendStencil<D>& s, double rest_angle, double stiffness);

/// The exact Hessian (indefinite whenever theta != theta_rest).
template <int D>
Mat<3 * D, 3 * D> bend_hessian(const BendStencil<D>& s, double rest_angle, double stiffness);

/// The Gauss-Newton part K g g^T: always PSD, exact at theta = theta_rest.
template <int D>
Mat<3 * D, 3 * D> bend_hessian_gauss_newton(const BendStencil<D>& s, double rest_angle,
                                            double stiffness);

/// Gradient of theta with respect to the stencil (exposed for tests and constraints).
template <int D>
Vec<3 * D> turning_angle_gradient(const BendStencil<D>& s);

}  // namespace bristle
