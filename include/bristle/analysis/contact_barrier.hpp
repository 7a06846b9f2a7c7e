#pragma once
/// Frictionless contact with the colliders as a potential energy, for the static solver.
///
/// The dynamic step imposes contact as velocity constraints (contact/contact_solver.hpp); a
/// static solve has no velocities, and Newton's method on the potential wants contact to be
/// one more energy term. We use the smoothly clamped log barrier of Incremental Potential
/// Contact (Li et al., SIGGRAPH 2020, section 4.1) on the gap between each free vertex's rod
/// surface and each collider:
///
///   B(x) = kappa sum_{free vertex i, collider c} b(d_ic),   d_ic = phi_c(x_i) - r_i,
///   b(d) = -(d - dhat)^2 ln(d / dhat)   for 0 < d < dhat,
///          0                            for d >= dhat,
///          +infinity                    for d <= 0 (the surface touches or enters the collider),
///
/// phi_c the collider's signed distance (contact/signed_distance.hpp) and r_i the rod's
/// radius. b is C2 at dhat (b = b' = b'' = 0 there), b' < 0 and b'' > 0 on (0, dhat):
///
///   b'(d)  = -2 (d - dhat) ln(d / dhat) - (d - dhat)^2 / d,
///   b''(d) = -2 ln(d / dhat) - 4 (d - dhat) / d + (d - dhat)^2 / d^2.
///
/// Per vertex, gradient kappa b' n and Hessian kappa (b'' n n^T + b' H_phi), n = grad phi,
/// H_phi = its Hessian. Every collider is convex, so H_phi >= 0 and b' H_phi <= 0: the
/// projected Hessian keeps only kappa b'' n n^T (PSD), the exact one both terms.
///
/// Constants. dhat = 1e-2 r per rod: at equilibrium a vertex in contact rests with its surface
/// less than 1% of the radius away from the collider (never inside). kappa = F / dhat with F
/// the static solver's force scale (the largest external force on one vertex, or E I / L^2):
/// a vertex pressed with force f settles where kappa |b'(d)| = f; since |b'(d)| ~ dhat^2 / d
/// for d << dhat, d ~ dhat F / f. A vertex carrying its own weight F sits at about dhat / 2
/// (|b'(dhat/2)| = (1/2 + ln 2) dhat); one carrying 100 F at about dhat / 100.
///
/// Friction does not enter: a static equilibrium with Coulomb friction is not unique (it
/// depends on the loading path), and the frictionless one is its lowest-energy member.
/// The potential is infinite where a vertex penetrates, so the line search never accepts such
/// a point; the solve starts by lifting free vertices that start inside or within dhat / 2
/// of a collider out along n to d = dhat / 2 (lift_out).

#include <string>
#include <vector>

#include "bristle/integrator/assembly.hpp"
#include "bristle/energy/rod_contact.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// Contact at a state, for reports.
struct BarrierContacts {
  int contacts = 0;               ///< (vertex, collider) pairs with d < dhat
  double min_gap = 0.0;           ///< smallest d over those pairs [m] (0 when none)
  std::vector<double> normal_force;  ///< per collider: sum of kappa |b'(d)| [N]
};

class ContactBarrier {
 public:
  /// `force_scale` [N] sets kappa (see above); the model's colliders are copied (a 2D box is
  /// made infinite along z, as the dynamic contact does).
  ContactBarrier(const Model& model, double force_scale);

  bool enabled() const { return !colliders_.empty(); }
  double kappa() const { return kappa_; }

  /// B(x) [J]; +infinity when a free vertex's surface touches or is inside a collider.
  double energy(const VecX& x) const;

  /// Adds grad B to `gradient` (all DOFs) and, when `matrix` is given, the barrier's Hessian
  /// blocks into it (the free-free K of SystemAssembler: full storage, every free vertex's
  /// D x D diagonal block present). `projection` Exact keeps b' H_phi, otherwise it is dropped.
  void add(const VecX& x, HessianProjection projection, VecX& gradient, SparseMatrix* matrix) const;

  /// Moves free vertices whose gap is below dhat / 2 (inside included) out along the collider's
  /// normal to d = dhat / 2, repeating over the colliders a few times for corners. Returns ""
  /// when every free vertex ends with d > 0, otherwise names the rod, vertex and collider.
  std::string lift_out(VecX& x) const;

  BarrierContacts contacts(const VecX& x) const;

 private:
  struct Vertex {
    int rod, index, dof, free;
    double radius, dhat;
  };
  Vec3 position(const VecX& x, const Vertex& v) const;

  int dimension_;
  double kappa_ = 0.0;
  std::vector<Collider> colliders_;
  std::vector<Vertex> vertices_;  // free vertices only
  std::vector<std::string> rod_names_;
};

}  // namespace bristle
