#pragma once
/// The discrete-elastic-rod terms for the element table (energy/element.hpp): material
/// bending with two principal stiffnesses and twist, each on the bend-twist stencil
/// [x_{i-1}, theta_{i-1}, x_i, theta_i, x_{i+1}] of an interior vertex of a rod with twist
/// DOFs (3D only: rods with twist exist only in 3D scenes, so the 2D instantiations the
/// assembly compiles are never called and do nothing). Bergou et al., "Discrete Elastic Rods" (2008) and "Discrete Viscous
/// Threads" (2010); derivations in docs/physics.md, "Discrete elastic rods".
///
/// Reference frames. Each element keeps, in its constants, its two edges' reference frames
/// where they were last committed (tangent and reference director per edge, and the
/// reference twist). The kernel carries them by parallel transport in time to the edges of the
/// configuration it is given, so every evaluation (line-search trial points, statics, modes)
/// sees frames transported to its own edges; the derivatives are exact where the frames were
/// committed. `advance` commits the frames transported to a configuration: the step's
/// "transport frames" stage calls it on the step's end positions. Pure functions throughout:
/// an element's frames depend only on its committed constants and the DOFs given.

#include <array>

#include "bristle/energy/element.hpp"
#include "bristle/energy/material_bend.hpp"
#include "bristle/energy/rod_frame.hpp"
#include "bristle/energy/twist.hpp"
#include "bristle/math/psd_projection.hpp"
#include "bristle/model/rod.hpp"

namespace bristle {

/// An element's reference frames where they were last committed.
struct StencilFrames {
  Vec3 tangent[2];          ///< unit tangents of edges i-1 and i
  Vec3 director[2];         ///< unit reference directors, perpendicular to the tangents
  double reference_twist = 0.0;  ///< [rad], continuous in time
};

/// The stencil at DOFs q (11) with the committed frames carried to q's edges.
BendTwistStencil transported_stencil(const Vec11& q, const StencilFrames& committed);
/// The committed frames carried to q's edges (what `advance` stores).
StencilFrames transported_frames(const Vec11& q, const StencilFrames& committed);

/// Edge j (0 or 1) of the stencil at DOFs q, its committed reference director carried to it:
/// what transported_stencil computes for that edge, bit for bit. Without `directors`, the
/// material directors are left unset (committing frames needs none).
StencilEdge carried_edge(const Vec11& q, const StencilFrames& committed, int j, bool directors = true);

/// The stencil at DOFs q with its two edges carried (carried_edge), the reference twist
/// carried with them and the twist: transported_stencil(q, committed) in other terms.
struct CarriedStencil {
  StencilEdge edge[2];
  double reference_twist = 0.0;
  double twist = 0.0;  ///< theta_i - theta_{i-1} + reference twist
};
/// Sets s's reference twist and twist from its two carried edges.
void carry_twist(const Vec11& q, const StencilFrames& committed, CarriedStencil& s);
BendTwistStencil stencil_of(const Vec11& q, const CarriedStencil& s);
/// The frames `advance` commits (transported_frames(q, committed)).
StencilFrames frames_of(const CarriedStencil& s);

/// A rod's first reference director: unit, perpendicular to its first edge's unit tangent,
/// `hint` (the rod's `material_normal`) made perpendicular, or, when it is zero or nearly
/// along the tangent, the coordinate axis least aligned with the tangent made perpendicular.
Vec3 first_reference_director(const Vec3& tangent, const Vec3& hint);

/// Per-vertex constants of a rod with twist, from its rest shape: the Bishop (space-parallel)
/// frames of its initial vertices with the first reference director `first_director`, rest
/// material curvatures in the material frames at the rod's initial twists ("rest":
/// "initial"; zero for "straight"), stiffnesses E I1 / l_i, E I2 / l_i and G J / l_i for twist
/// (the material's cross-section and shear modulus), rest twist rest_twist * l_i.
struct BendTwistRest {
  StencilFrames frames;
  MaterialBendParameters bend;
  double twist_stiffness = 0.0;  ///< G J / l_i [N m]
  double rest_twist = 0.0;       ///< [rad]
};
std::vector<BendTwistRest> bend_twist_rest(const Rod& rod, const Vec3& first_director);

/// A Hessian as Count rank-one terms sum_k value_k v_k v_k^T, handed to the assembly as a
/// PositiveSpectrum (energy/element.hpp): scattered and multiplied without an 11 x 11 matrix.
template <int Count>
struct RankOneTerms {
  static constexpr int kCount = Count;
  double value[Count] = {};
  Vec11 vector[Count];
};

/// The bend-twist stencil's energies (bending, twist), gradient and Gauss-Newton Hessian: the
/// stiffness-weighted outer products of its strains' gradients,
/// B1 grad kappa1 grad kappa1^T + B2 grad kappa2 grad kappa2^T + (G J / l) grad m grad m^T,
/// PSD by construction (docs/physics.md, "Gauss-Newton Hessians of the bend-twist stencil").
struct BendTwistGaussNewton {
  std::array<double, 2> energy{};
  Vec11 gradient = Vec11::Zero();
  RankOneTerms<3> hessian;
};
BendTwistGaussNewton bend_twist_gauss_newton(const BendTwistStencil& s, const BendTwistRest& rest);
/// The same from a carried stencil (bend_twist_gauss_newton(stencil_of(q, s), rest), bit for
/// bit).
BendTwistGaussNewton bend_twist_gauss_newton(const CarriedStencil& s, const BendTwistRest& rest);
/// The bending and twisting energies (BendTwistTerm::energy's values, bit for bit).
std::array<double, 2> bend_twist_energies(const CarriedStencil& s, const BendTwistRest& rest);

namespace detail {

/// The bend-twist stencil's slots, constants, elements (interior vertices of rods with twist)
/// and the commit of transported frames.
struct BendTwistSlots {
  static constexpr std::array<SlotKind, 5> kSlots{SlotKind::Vertex, SlotKind::Edge, SlotKind::Vertex, SlotKind::Edge,
                                                  SlotKind::Vertex};
  using Constants = BendTwistRest;

  template <class Emit>
  static void for_each_element(const Rod& rod, Emit&& emit) {
    if (!rod.twist) return;
    const std::vector<BendTwistRest> rest = bend_twist_rest(rod, rod.material_normal);
    for (int i = 1; i + 1 < rod.vertex_count(); ++i) emit(std::array<int, 5>{i - 1, i - 1, i, i, i + 1}, rest[i]);
  }

  /// The chain (energy/element.hpp): element k + 1 on a rod starts on element k's second edge,
  /// whose carried frame it takes instead of carrying it again. Each edge's committed frame
  /// is kept by both elements that share it, equal bit for bit (bend_twist_rest sets them
  /// from the same values and every advance carries both with the same arithmetic), so the
  /// chain changes no result: it halves the parallel transports and sin / cos of the twists.
  struct Chain {
    bool holds = false;  ///< `edge` is the next element's first edge
    StencilEdge edge{0.0, Vec3::Zero(), Vec3::Zero(), {Vec3::Zero(), Vec3::Zero()}};
    StencilFrames* keep = nullptr;  ///< where the next carry leaves its frames (keep_into)
    BendTwistGaussNewton* keep_local = nullptr;  ///< where the next Gauss-Newton kernel leaves its results
  };
  static bool continues(const std::array<int, 5>& previous, const std::array<int, 5>& next) {
    return next[0] == previous[2] && next[1] == previous[3] && next[2] == previous[4];
  }

  /// The stencil at q with its edges carried, the first one taken from the chain when it
  /// holds it; leaves the second in the chain.
  static CarriedStencil carry(const Vec11& q, const Constants& c, Chain& chain, bool directors = true) {
    CarriedStencil s;
    s.edge[0] = chain.holds ? chain.edge : carried_edge(q, c.frames, 0, directors);
    s.edge[1] = carried_edge(q, c.frames, 1, directors);
    chain.edge = s.edge[1];
    chain.holds = true;
    carry_twist(q, c.frames, s);
    if (chain.keep != nullptr) {
      *chain.keep = frames_of(s);
      chain.keep = nullptr;
    }
    return s;
  }

  /// A pass that keeps state (LocalRequest::keep_state) leaves each element's carried frames
  /// in `into` (a copy of its constants): they are what `advance` at the same DOFs commits,
  /// bit for bit (carried_edge computes the tangent and the carried director the same way
  /// with or without material directors).
  static constexpr bool kKeepsState = true;
  static void keep_into(Chain& chain, Constants& into) { chain.keep = &into.frames; }

  /// Its Gauss-Newton kernel's results too (energies, gradient, rank-one Hessian terms), which
  /// a gradient pass computes whole: a Hessian pass at the same DOFs with the frames that pass
  /// carried committed (the next step's first pass, at the positions just committed) replays
  /// them instead of evaluating again. The same values bit for bit, because evaluating there
  /// carries each committed frame to its own tangent as it is (carried_director), so the
  /// kernel sees the frames the keeping pass saw.
  using KeptLocal = BendTwistGaussNewton;
  static void keep_local_into(Chain& chain, KeptLocal& into) { chain.keep_local = &into; }

  /// Commits the frames carried to q's edges.
  template <int D>
  static void advance(const Vec<3 * D + 2>& q, Constants& c, Chain& chain) {
    if constexpr (D == 3) c.frames = frames_of(carry(q, c, chain, false));
  }

  /// Whether a request takes the Gauss-Newton kernel: gradient passes (no Hessian), and the
  /// Hessian of `gauss_newton` and `bending_modes` (the default). The turning-angle bend term's
  /// bending modes are its Gauss-Newton part plus the stiffness across the bending plane, which
  /// the unsigned angle's gradient lacks; the material curvatures' gradients have both
  /// directions, so here the Gauss-Newton part is the bending modes. It leaves out the geometric
  /// stiffness (strain times the strains' Hessians), which projected onto its positive part
  /// drags every swinging stencil (docs/physics.md, "Gauss-Newton Hessians of the bend-twist
  /// stencil").
  static bool takes_gauss_newton(const LocalRequest& request) {
    return !request.hessian || request.projection == HessianProjection::GaussNewton ||
           request.projection == HessianProjection::BendingModes;
  }
};

}  // namespace detail

/// Material bending and twist of the bend-twist stencil, one element per interior vertex of a
/// rod with twist, fused so that the committed frames are carried to the stencil once and the
/// strains come from one pass over its edges:
///   E_bend = 1/2 B1 (kappa1 - kappa1_rest)^2 + 1/2 B2 (kappa2 - kappa2_rest)^2 (energy/material_bend.hpp),
///   E_twist = 1/2 (G J / l_i) (m - m_rest)^2, m = theta_i - theta_{i-1} + reference twist (energy/twist.hpp),
/// reported to the energy breakdown as bending and twist.
struct BendTwistTerm : detail::BendTwistSlots {
  static constexpr std::array<EnergyTerm, 2> kEnergyTerms{EnergyTerm::Bend, EnergyTerm::Twist};
  using Energies = std::array<double, 2>;

  template <int D>
  static Energies energy(const Vec<3 * D + 2>& q, const Constants& c, Chain& chain) {
    if constexpr (D == 3) return bend_twist_energies(carry(q, c, chain), c);
    return {0.0, 0.0};
  }
  template <int D>
  static Energies energy(const Vec<3 * D + 2>& q, const Constants& c) {
    Chain chain;
    return energy<D>(q, c, chain);
  }

  /// The Gauss-Newton Hessian as three rank-one terms (takes_gauss_newton), or the exact one,
  /// as it is for Exact and projected onto the PSD cone (one 11 x 11 eigen-decomposition of the
  /// sum) for Projected.
  template <int D, class Sink>
  static void evaluate(const Vec<3 * D + 2>& q, const Constants& c, const LocalRequest& request, Sink&& sink,
                       Chain& chain) {
    if constexpr (D == 3) {
      const CarriedStencil carried = carry(q, c, chain);
      if (takes_gauss_newton(request)) {
        const BendTwistGaussNewton local = bend_twist_gauss_newton(carried, c);
        if (chain.keep_local != nullptr) {
          *chain.keep_local = local;
          chain.keep_local = nullptr;
        }
        replay<D>(local, request, sink);
        return;
      }
      const BendTwistStencil s = stencil_of(q, carried);
      StencilScalar sum = material_bend_local(s, c.bend, request.hessian);
      const StencilScalar twist = twist_local(s, c.rest_twist, c.twist_stiffness, request.hessian);
      const Energies energies{sum.value, twist.value};
      sum.gradient += twist.gradient;
      sum.hessian += twist.hessian;
      if (request.projection == HessianProjection::Exact)
        sink(energies, sum.gradient, sum.hessian);
      else
        sink(energies, sum.gradient, Mat11(project_to_psd<11>(sum.hessian)));
    }
  }
  template <int D, class Sink>
  static void evaluate(const Vec<3 * D + 2>& q, const Constants& c, const LocalRequest& request, Sink&& sink) {
    Chain chain;
    evaluate<D>(q, c, request, sink, chain);
  }

  /// Whether kept results serve a request: those of the Gauss-Newton kernel (takes_gauss_newton).
  static bool replays(const LocalRequest& request) { return takes_gauss_newton(request); }
  /// Hands kept (or just computed) Gauss-Newton results to the sink as evaluate does.
  template <int D, class Sink>
  static void replay(const KeptLocal& local, const LocalRequest& request, Sink&& sink) {
    if constexpr (D == 3) {
      if (request.hessian)
        sink(local.energy, local.gradient, PositiveSpectrum<RankOneTerms<3>>{local.hessian});
      else
        sink(local.energy, local.gradient, NoHessian{});
    }
  }
};

}  // namespace bristle
