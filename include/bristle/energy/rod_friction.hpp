#pragma once
/// Coulomb friction between rods as IPC's lagged friction potential (Li et al., "Incremental
/// Potential Contact", SIGGRAPH 2020, section 5; derived in docs/contact.md, "Friction between
/// rods"). One element per rod-contact pair that is within g^ at the start of the step x0.
///
/// Stencil x = [p0, p1, q0, q1], the barrier's (energy/rod_contact.hpp). Frozen at x0 (the
/// element's constants): the closest-point parameters (s, t), a tangent basis T (D x (D-1),
/// orthonormal columns orthogonal to the contact normal n), the lagged normal force
/// lambda = -kappa b'(g(x0)) times mu, and the start points x_start. The tangential slip over
/// the step is linear in x,
///
///   u(x) = T^T r,   r = (1-s)(p0 - p0s) + s (p1 - p1s) - (1-t)(q0 - q0s) - t (q1 - q1s),
///
/// and the friction potential is F(x) = mu lambda (f0(|u|) - f0(0)) with IPC's smoothing
///
///   f0(y) = -y^3 / (3 e^2) + y^2 / e + e / 3   (y < e),   y  (y >= e),   f0(0) = e / 3,
///
/// e = eps_v h (a slip speed eps_v below which a contact counts as sticking). f1 = f0' is
/// 2y/e - y^2/e^2 below e and 1 above, so the friction force mu lambda f1(|u|) never exceeds
/// mu lambda. With phi(y) = f1(y) / y:
///
///   grad_u F = mu lambda phi u,   hess_u F = mu lambda (phi I + phi'(y)/y u u^T),
///
/// whose eigenvalues are mu lambda f2(y) along u (f2 = f1' = 2/e - 2y/e^2 below e, 0 above)
/// and mu lambda phi(y) across: both >= 0, so the Hessian is PSD as it is and needs no
/// projection. In x: grad_k = w_k T grad_u, hess_kl = w_k w_l T hess_u T^T with
/// w = [1-s, s, -(1-t), -t].

#include <array>
#include <optional>

#include "bristle/energy/element.hpp"
#include "bristle/energy/rod_contact.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/rod.hpp"

namespace bristle {

struct RodFrictionConstants {
  double force = 0.0;  ///< mu lambda: the largest friction force [N]
  double slip = 0.0;   ///< e = eps_v h: the slip below which f0 is smoothed [m]
  double s = 0.0, t = 0.0;  ///< closest-point parameters at x0 (frozen weights)
  std::array<double, 12> start{};   ///< x_start = [p0, p1, q0, q1] at x0 (first 4 D entries used)
  std::array<double, 6> tangent{};  ///< T, column-major D x (D-1) (first D (D-1) entries used)
};

template <int D>
struct RodFrictionLocal {
  double energy = 0.0;
  double slip = 0.0;  ///< |u| [m]
  Vec<4 * D> gradient;
  Mat<4 * D, 4 * D> hessian;  ///< set when asked for (PSD: exact and projected are the same)
};

/// The lagged friction element of a barrier pair at x0: nullopt when the pair's gap is not
/// below g^ there (no normal force). `mu` the Coulomb coefficient, `slip` = e [m].
template <int D>
std::optional<RodFrictionConstants> lag_rod_friction(const Vec<4 * D>& x0, const RodContactConstants& contact,
                                                     double mu, double slip);

template <int D>
double rod_friction_energy(const Vec<4 * D>& x, const RodFrictionConstants& c);

template <int D>
RodFrictionLocal<D> rod_friction_local(const Vec<4 * D>& x, const RodFrictionConstants& c, bool hessian);

/// The friction term for the element table: coupling elements only, built by the step at its
/// start (ImplicitEuler's lag-friction stage) and kept for all its Newton iterations.
struct RodFrictionTerm {
  static constexpr std::array<SlotKind, 4> kSlots{SlotKind::Vertex, SlotKind::Vertex, SlotKind::Vertex,
                                                  SlotKind::Vertex};
  static constexpr EnergyTerm kEnergyTerm = EnergyTerm::Friction;
  using Constants = RodFrictionConstants;

  template <class Emit>
  static void for_each_element(const Rod&, Emit&&) {}

  template <int D>
  static double energy(const Vec<4 * D>& x, const Constants& c) {
    return rod_friction_energy<D>(x, c);
  }

  template <int D, class Sink>
  static void evaluate(const Vec<4 * D>& x, const Constants& c, const LocalRequest& request, Sink&& sink) {
    const RodFrictionLocal<D> local = rod_friction_local<D>(x, c, request.hessian);
    if (request.hessian)
      sink(local.energy, local.gradient, local.hessian);
    else
      sink(local.energy, local.gradient, NoHessian{});
  }
};

}  // namespace bristle
