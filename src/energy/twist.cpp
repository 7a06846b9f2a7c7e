/// Twisting energy (include/bristle/energy/twist.hpp).

#include "bristle/energy/twist.hpp"

namespace bristle {

double twist_energy(const BendTwistStencil& s, double rest_twist, double stiffness) {
  const double deviation = stencil_twist(s) - rest_twist;
  return 0.5 * stiffness * deviation * deviation;
}

namespace {
StencilScalar local(const BendTwistStencil& s, double rest_twist, double stiffness, bool want_hessian,
                    bool curvature_term) {
  const StencilScalar m = twist_derivatives(s, want_hessian && curvature_term);
  const double deviation = m.value - rest_twist;
  StencilScalar out;
  out.value = 0.5 * stiffness * deviation * deviation;
  out.gradient = (stiffness * deviation) * m.gradient;
  if (want_hessian) {
    out.hessian.noalias() = stiffness * m.gradient * m.gradient.transpose();
    if (curvature_term) out.hessian += (stiffness * deviation) * m.hessian;
  }
  return out;
}
}  // namespace

StencilScalar twist_local(const BendTwistStencil& s, double rest_twist, double stiffness, bool want_hessian) {
  return local(s, rest_twist, stiffness, want_hessian, true);
}

StencilScalar twist_local_gauss_newton(const BendTwistStencil& s, double rest_twist, double stiffness) {
  return local(s, rest_twist, stiffness, true, false);
}

}  // namespace bristle
