#pragma once
/// Bending energy of a discrete elastic rod's interior vertex in its material frame
/// (Bergou et al. 2008, section 4.2; 2010, section 5), for anisotropic cross-sections:
///
///   E = 1/2 B1 (kappa1 - kappa1_rest)^2 + 1/2 B2 (kappa2 - kappa2_rest)^2,
///   B_k = E I_k / l_i,   l_i = (lbar_{i-1} + lbar_i) / 2,
///
/// kappa1, kappa2 the material curvatures of the bend-twist stencil (energy/rod_frame.hpp),
/// dimensionless (integrated over the Voronoi length; |kb| = 2 tan(phi/2)). An isotropic rod
/// with a straight rest shape has E = 1/2 (E I / l_i) (2 tan(phi/2))^2, the curvature measure
/// interface.md section 2 allows in place of phi. Derivation: docs/physics.md, "Discrete
/// elastic rods".
///
/// Gradient: sum_k B_k (kappa_k - rest_k) grad kappa_k. Exact Hessian:
/// sum_k B_k (grad kappa_k grad kappa_k^T + (kappa_k - rest_k) hess kappa_k), indefinite away
/// from rest; the Gauss-Newton part (first term) is PSD.

#include "bristle/energy/rod_frame.hpp"

namespace bristle {

struct MaterialBendParameters {
  Vec2 rest_curvature = Vec2::Zero();  ///< (kappa1, kappa2) at rest
  Vec2 stiffness = Vec2::Zero();       ///< (E I1 / l_i, E I2 / l_i) [N m]
};

double material_bend_energy(const BendTwistStencil& s, const MaterialBendParameters& p);

/// Energy, gradient and the exact Hessian (Hessian left zero unless want_hessian).
StencilScalar material_bend_local(const BendTwistStencil& s, const MaterialBendParameters& p, bool want_hessian);

/// Energy, gradient and the Gauss-Newton Hessian sum_k B_k grad kappa_k grad kappa_k^T (PSD).
StencilScalar material_bend_local_gauss_newton(const BendTwistStencil& s, const MaterialBendParameters& p);

}  // namespace bristle
