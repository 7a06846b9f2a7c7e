/// Bending in the material frame (include/bristle/energy/material_bend.hpp).

#include "bristle/energy/material_bend.hpp"

namespace bristle {

double material_bend_energy(const BendTwistStencil& s, const MaterialBendParameters& p) {
  const Vec2 deviation = material_curvatures(s) - p.rest_curvature;
  return 0.5 * (p.stiffness[0] * deviation[0] * deviation[0] + p.stiffness[1] * deviation[1] * deviation[1]);
}

namespace {
StencilScalar bend_local(const BendTwistStencil& s, const MaterialBendParameters& p, bool want_hessian,
                         bool curvature_term) {
  StencilScalar kappa[2];
  material_curvature_derivatives(s, want_hessian && curvature_term, kappa[0], kappa[1]);
  StencilScalar out;
  for (int k = 0; k < 2; ++k) {
    const double deviation = kappa[k].value - p.rest_curvature[k];
    out.value += 0.5 * p.stiffness[k] * deviation * deviation;
    out.gradient += (p.stiffness[k] * deviation) * kappa[k].gradient;
    if (!want_hessian) continue;
    out.hessian.noalias() += p.stiffness[k] * kappa[k].gradient * kappa[k].gradient.transpose();
    if (curvature_term) out.hessian += (p.stiffness[k] * deviation) * kappa[k].hessian;
  }
  return out;
}
}  // namespace

StencilScalar material_bend_local(const BendTwistStencil& s, const MaterialBendParameters& p, bool want_hessian) {
  return bend_local(s, p, want_hessian, true);
}

StencilScalar material_bend_local_gauss_newton(const BendTwistStencil& s, const MaterialBendParameters& p) {
  return bend_local(s, p, true, false);
}

}  // namespace bristle
