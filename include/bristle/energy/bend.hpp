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

#include <array>

#include "bristle/energy/element.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/rod.hpp"

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

/// The exact Hessian as a sum of rank-one terms, H = sum_k value[k] vector[k] vector[k]^T,
/// from its closed-form spectral decomposition in scaled edge coordinates.
///
/// Write each edge in its own orthonormal frame, v_a -> |v_a| (alpha_a t_a + beta_a m_a +
/// gamma_a b), with t_a = v_a/|v_a|, m_a = t_a x b and b the binormal (z in 2D): alpha, beta,
/// gamma are dimensionless rotations of the edges. In these coordinates the Hessian of
/// E = K/2 (theta - theta_rest)^2, with d = theta - theta_rest, is K times
///
///   in plane, (alpha1, beta1, alpha2, beta2):   N(d) = [ 0  -d   0   0 ]
///                                                      [-d   1   0  -1 ]
///                                                      [ 0   0   0   d ]
///                                                      [ 0  -1   d   1 ]
///   out of plane (3D only), (gamma1, gamma2):   O = d [ cot(theta)      -1/sin(theta) ]
///                                                     [ -1/sin(theta)   cot(theta)    ]
///
/// (the corrected blocks of physics-notes.md rewritten in this frame; the gradient g g^T
/// gives the 1, -1 entries). Their eigenpairs are exact:
///   N: -d on (1, 1, -1, 1)/2;  d on (-1, 1, 1, 1)/2;
///      1 + r on (k, -1, k, 1)/sqrt(2 + 2k^2);  1 - r on (1, k, 1, -k)/sqrt(2 + 2k^2),
///      with r = sqrt(1 + d^2) and k = d/(1 + r);
///   O: -d tan(theta/2) on (1, 1)/sqrt2;  d cot(theta/2) on (1, -1)/sqrt2.
/// So whenever d != 0 the element has exactly two negative eigenvalues in 2D and three in 3D
/// (physics-notes.md, "Definiteness"). `vector[k]` is the node-space image J^T S^-1 R u_k of
/// the eigenvector u_k; `value[k]` = K lambda_k. The three translations are the null space.
///
/// At exactly straight in 3D (no binormal) the spectrum is that of the straight limit,
/// K (w w^T) (x) (I - t t^T): 2K on the two transverse antisymmetric rotations, symmetric about
/// the tangent whatever perpendicular the frames pick. With a nonzero rest angle the unsigned
/// angle has a cone there and no Hessian exists; the same PSD matrix stands in (as
/// bend_hessian). Near an exact fold cot(theta/2) -> 0 and tan(theta/2) grows without bound
/// (to about 1e16 at theta = pi in double): the projection drops the huge negative term.
template <int D>
struct BendHessianSpectrum {
  static constexpr int kCount = D == 2 ? 4 : 6;
  double value[kCount];
  Vec<3 * D> vector[kCount];
};

template <int D>
BendHessianSpectrum<D> bend_hessian_spectrum(const BendStencil<D>& s, double rest_angle, double stiffness);

/// The Hessian projected onto the PSD cone in closed form: the negative eigenvalues of the
/// decomposition above set to zero. This is the nearest PSD matrix (Higham 1988) in the scaled
/// edge coordinates (alpha, beta, gamma), which measure every edge's motion as a rotation;
/// it is PSD in node space too (a congruence keeps definiteness) and keeps the translations
/// as its null space. Costs three rank-one updates instead of a 9 x 9 eigen-decomposition.
template <int D>
Mat<3 * D, 3 * D> bend_hessian_projected(const BendStencil<D>& s, double rest_angle, double stiffness);

/// Energy, gradient and the Hessian's spectrum in one pass: the assembler's kernel, the same
/// values as bend_energy, bend_gradient and bend_hessian_spectrum. With `positive_only` the
/// eigenvectors of non-positive eigenvalues are not formed (left zero): what the projection
/// needs.
template <int D>
struct BendLocal {
  double energy = 0.0;
  Vec<3 * D> gradient;
  BendHessianSpectrum<D> spectrum;
};

template <int D>
BendLocal<D> bend_local(const BendStencil<D>& s, double rest_angle, double stiffness, bool positive_only = false);

/// The Hessian reduced to its two bending terms: in the bending plane the Gauss-Newton part
/// K g g^T (2K on the relative rotation (beta1 - beta2)/sqrt2 of the edges), and across it the
/// antisymmetric out-of-plane eigenpair of O, K d cot(theta/2) on (gamma1 - gamma2)/sqrt2,
/// kept when positive (near straight it is the stiffness against bending in the second
/// direction, 2K at theta -> 0). Every other term of the spectrum is dropped: the +-d pair and
/// 1 - r, which rotate the stencil rigidly in its plane (beta1 = beta2) or stretch its edges
/// (alpha), and -d tan(theta/2). Those are the geometric stiffness of a stressed stencil:
/// projected to their positive part they resist the in-plane swing of every bent stencil,
/// which makes one linear solve per step drag a swinging strand (docs/physics.md, "One solve
/// per step"). PSD; zero on translations and on the rotation about the binormal; equal to the
/// exact Hessian at the rest angle (d = 0, theta > 0) and at exactly straight in 3D (the
/// straight limit, as bend_hessian). In 2D it is Gauss-Newton. `spectrum` holds the kept terms
/// (value > 0); the others have value 0 and a zero vector.
template <int D>
BendLocal<D> bend_local_bending_modes(const BendStencil<D>& s, double rest_angle, double stiffness);
template <int D>
Mat<3 * D, 3 * D> bend_hessian_bending_modes(const BendStencil<D>& s, double rest_angle, double stiffness);

/// Gradient of theta with respect to the stencil (exposed for tests and constraints).
template <int D>
Vec<3 * D> turning_angle_gradient(const BendStencil<D>& s);

/// The bending term for the element table (energy/element.hpp): one element per interior
/// vertex, on the turning angle.
struct BendTerm {
  static constexpr std::array<SlotKind, 3> kSlots{SlotKind::Vertex, SlotKind::Vertex, SlotKind::Vertex};
  static constexpr EnergyTerm kEnergyTerm = EnergyTerm::Bend;
  struct Constants {
    double rest_angle;
    double stiffness;  ///< E I / l [N m]
  };

  template <class Emit>
  static void for_each_element(const Rod& rod, Emit&& emit) {
    if (rod.twist) return;  // bent by BendTwistTerm (energy/discrete_elastic_rod.hpp)
    for (int i = 1; i + 1 < rod.vertex_count(); ++i)
      emit(std::array<int, 3>{i - 1, i, i + 1}, Constants{rod.rest_angles[i], rod.bend_stiffness(i)});
  }

  template <int D>
  static BendStencil<D> stencil(const Vec<3 * D>& x) {
    return {x.template segment<D>(0), x.template segment<D>(D), x.template segment<D>(2 * D)};
  }

  template <int D>
  static double energy(const Vec<3 * D>& x, const Constants& c) {
    return bend_energy<D>(stencil<D>(x), c.rest_angle, c.stiffness);
  }

  /// Projected and bending-modes Hessians come from the fused kernel as a spectrum (energy,
  /// gradient and spectrum from one set of frames); exact and Gauss-Newton ones as matrices.
  template <int D, class Sink>
  EIGEN_ALWAYS_INLINE static void evaluate(const Vec<3 * D>& x, const Constants& c, const LocalRequest& request, Sink&& sink) {
    const BendStencil<D> s = stencil<D>(x);
    if (request.projection == HessianProjection::Projected || request.projection == HessianProjection::BendingModes) {
      const BendLocal<D> local = request.projection == HessianProjection::Projected
                                     ? bend_local<D>(s, c.rest_angle, c.stiffness, true)
                                     : bend_local_bending_modes<D>(s, c.rest_angle, c.stiffness);
      sink(local.energy, local.gradient, PositiveSpectrum<BendHessianSpectrum<D>>{local.spectrum});
      return;
    }
    const double energy = request.energy ? bend_energy<D>(s, c.rest_angle, c.stiffness) : 0.0;
    const Vec<3 * D> gradient = bend_gradient<D>(s, c.rest_angle, c.stiffness);
    if (!request.hessian) {
      sink(energy, gradient, NoHessian{});
      return;
    }
    const Mat<3 * D, 3 * D> h = request.projection == HessianProjection::Exact
                                    ? bend_hessian<D>(s, c.rest_angle, c.stiffness)
                                    : bend_hessian_gauss_newton<D>(s, c.rest_angle, c.stiffness);
    sink(energy, gradient, h);
  }
};

}  // namespace bristle
