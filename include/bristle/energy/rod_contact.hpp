#pragma once
/// Rod-rod contact as a barrier energy between two segments' capsules (docs/contact.md,
/// "Rod-rod contact"): the incremental-potential contact of Li et al., "Incremental Potential
/// Contact" (SIGGRAPH 2020), on the gap between the surfaces of two round rods.
///
/// Stencil x = [p0, p1, q0, q1]: segment P of one rod and segment Q of another (or of the same
/// rod, not adjacent). With d the distance between the centre lines
/// (contact/segment_distance_derivatives.hpp) and R = r_P + r_Q, the surfaces are g = d - R
/// apart, and
///
///   E = kappa b(g),   b(g) = -(g - g^)^2 ln(g / g^) for 0 < g < g^, 0 for g >= g^,
///
/// which is C^2 at g^ and grows without bound as g -> 0, so a minimisation that keeps every
/// iterate feasible (the step's CCD-limited line search) never lets two capsules touch.
///   grad E = kappa b'(g) grad d,                 grad d = grad D / (2 d),
///   hess E = kappa (b''(g) grad d grad d^T + b'(g) hess d),
///   hess d = hess D / (2 d) - grad D grad D^T / (4 d^3),   D = d^2.
/// b' < 0 and b'' > 0, but hess d is indefinite (it is not even PSD for crossing segments).
/// HessianProjection::Exact gets it as it is; Projected, projected onto the PSD cone by its
/// eigenvalues (IPC's per-element projection); GaussNewton and BendingModes (the default)
/// the rank-one kappa (b'' + |b'| / d) grad d grad d^T: the stiffness along the normal, without
/// hess D's curvature of the closest points, which grows as 1 / angle^2 between nearly
/// parallel segments crossing at a small angle (1e11 at 1e-6 rad) and would only slow CG down
/// (docs/contact.md, "Rod-rod contact"). With a force estimate in the constants (the
/// primal-dual form, RodContactConstants::force), every projection takes normal_stiffness in
/// place of kappa b'' along grad d; without one (force < 0) they are the barrier's Hessian.

#include <array>
#include <cmath>

#include "bristle/energy/element.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/rod.hpp"

namespace bristle {

/// b(d), b'(d), b''(d) of the barrier above with g^ = `dhat` [m^2, m, 1] (zero at and beyond
/// dhat; +inf, -inf, +inf at d <= 0). Also the collider barrier of statics
/// (analysis/contact_barrier.hpp).
struct BarrierValue {
  double b = 0.0, db = 0.0, d2b = 0.0;
};
BarrierValue barrier_function(double d, double dhat);

struct RodContactConstants;
/// The stiffness along the normal that the system matrix gets for a pair at gap g with
/// barrier values b: kappa b''(g) without a force estimate; with one (lambda = c.force), the
/// primal-dual stiffness kappa b''(g) + (lambda - phi) / g, phi = -kappa b'(g) the barrier's
/// force at g, bounded below by kappa b''(g) lambda / phi and by 0 (docs/contact.md).
double normal_stiffness(double gap, const BarrierValue& b, const RodContactConstants& c);
/// psi(g) = d(g phi(g))/dg for phi = -kappa b'(g), formed without cancellation; 0 outside
/// (0, g^). Zero for a pure log barrier, whose g phi is constant.
double barrier_force_slope(double gap, double gap_hat, double stiffness);

/// Energy, gradient and Hessian of one pair.
template <int D>
struct RodContactLocal {
  double energy = 0.0;
  double gap = 0.0;  ///< g = d - R [m]
  Vec<4 * D> gradient;
  Mat<4 * D, 4 * D> hessian;  ///< set when asked for: exact or projected
};

struct RodContactConstants {
  double reach = 0.0;      ///< R = r_P + r_Q [m]
  double gap_hat = 0.0;    ///< g^: the barrier acts below this gap [m]
  double stiffness = 0.0;  ///< kappa [J/m^2]
  /// The force the pair is estimated to carry [N] (the dual variable of a primal-dual
  /// interior-point method), or negative where there is no estimate: the system's stiffness
  /// along the normal is then the barrier's own, kappa b''(g). See rod_contact_local.
  double force = -1.0;
};

template <int D>
double rod_contact_energy(const Vec<4 * D>& x, const RodContactConstants& c);

/// With `hessian` false the Hessian is left unset; otherwise in the given projection.
template <int D>
RodContactLocal<D> rod_contact_local(const Vec<4 * D>& x, const RodContactConstants& c, bool hessian,
                                     HessianProjection projection);

/// The rod-rod contact term for the element table: no elements of its own; the step adds the
/// pairs near each other as coupling elements (contact/rod_contact.hpp), slots in increasing
/// DOF order, which [p0, p1, q0, q1] is when P's (rod, segment) comes before Q's.
struct RodContactTerm {
  static constexpr std::array<SlotKind, 4> kSlots{SlotKind::Vertex, SlotKind::Vertex, SlotKind::Vertex,
                                                  SlotKind::Vertex};
  static constexpr EnergyTerm kEnergyTerm = EnergyTerm::Contact;
  using Constants = RodContactConstants;

  template <class Emit>
  static void for_each_element(const Rod&, Emit&&) {}

  template <int D>
  static double energy(const Vec<4 * D>& x, const Constants& c) {
    return rod_contact_energy<D>(x, c);
  }

  template <int D, class Sink>
  static void evaluate(const Vec<4 * D>& x, const Constants& c, const LocalRequest& request, Sink&& sink) {
    const RodContactLocal<D> local = rod_contact_local<D>(x, c, request.hessian, request.projection);
    if (request.hessian)
      sink(local.energy, local.gradient, local.hessian);
    else
      sink(local.energy, local.gradient, NoHessian{});
  }
};

}  // namespace bristle
