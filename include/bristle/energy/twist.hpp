#pragma once
/// Twisting energy of a discrete elastic rod's interior vertex (Bergou et al. 2008, section
/// 4.2.2; 2010, section 7):
///
///   E = 1/2 T (m - m_rest)^2,   T = G J / l_i,   m = theta_i - theta_{i-1} + m_ref,
///
/// m_ref the reference twist of the stencil (energy/rod_frame.hpp), which depends on the
/// edges through the parallel-transported reference frames. Derivation, including the
/// Hessian's holonomy term: docs/physics.md, "Discrete elastic rods".

#include "bristle/energy/rod_frame.hpp"

namespace bristle {

double twist_energy(const BendTwistStencil& s, double rest_twist, double stiffness);

/// Energy, gradient and the exact Hessian T (grad m grad m^T + (m - m_rest) hess m)
/// (Hessian left zero unless want_hessian).
StencilScalar twist_local(const BendTwistStencil& s, double rest_twist, double stiffness, bool want_hessian);

/// Energy, gradient and the Gauss-Newton Hessian T grad m grad m^T (PSD).
StencilScalar twist_local_gauss_newton(const BendTwistStencil& s, double rest_twist, double stiffness);

}  // namespace bristle
