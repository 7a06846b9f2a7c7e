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

namespace detail {

/// What the two DER terms share: slots, constants, elements (interior vertices of rods with
/// twist) and the commit of transported frames.
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

  /// Commits the frames carried to q's edges.
  template <int D>
  static void advance(const Vec<3 * D + 2>& q, Constants& c) {
    if constexpr (D == 3) c.frames = transported_frames(q, c.frames);
  }

  /// The local Hessian handed to the assembly: exact, or projected onto the PSD cone
  /// (eigen-clamped) for every projection but Exact.
  template <class Sink>
  static void hand_over(const StencilScalar& local, const LocalRequest& request, Sink&& sink);
};

}  // namespace detail

/// E = 1/2 B1 (kappa1 - kappa1_rest)^2 + 1/2 B2 (kappa2 - kappa2_rest)^2 (energy/material_bend.hpp).
struct MaterialBendTerm : detail::BendTwistSlots {
  static constexpr EnergyTerm kEnergyTerm = EnergyTerm::Bend;

  template <int D>
  static double energy(const Vec<3 * D + 2>& q, const Constants& c) {
    if constexpr (D == 3) return material_bend_energy(transported_stencil(q, c.frames), c.bend);
    return 0.0;
  }

  template <int D, class Sink>
  static void evaluate(const Vec<3 * D + 2>& q, const Constants& c, const LocalRequest& request, Sink&& sink) {
    if constexpr (D == 3)
      hand_over(material_bend_local(transported_stencil(q, c.frames), c.bend, request.hessian), request, sink);
  }
};

/// E = 1/2 (G J / l_i) (m - m_rest)^2, m = theta_i - theta_{i-1} + reference twist (energy/twist.hpp).
struct TwistTerm : detail::BendTwistSlots {
  static constexpr EnergyTerm kEnergyTerm = EnergyTerm::Twist;

  template <int D>
  static double energy(const Vec<3 * D + 2>& q, const Constants& c) {
    if constexpr (D == 3) return twist_energy(transported_stencil(q, c.frames), c.rest_twist, c.twist_stiffness);
    return 0.0;
  }

  template <int D, class Sink>
  static void evaluate(const Vec<3 * D + 2>& q, const Constants& c, const LocalRequest& request, Sink&& sink) {
    if constexpr (D == 3)
      hand_over(twist_local(transported_stencil(q, c.frames), c.rest_twist, c.twist_stiffness, request.hessian),
                request, sink);
  }
};

template <class Sink>
void detail::BendTwistSlots::hand_over(const StencilScalar& local, const LocalRequest& request, Sink&& sink) {
  if (!request.hessian) {
    sink(local.value, local.gradient, NoHessian{});
  } else if (request.projection == HessianProjection::Exact) {
    sink(local.value, local.gradient, local.hessian);
  } else {
    sink(local.value, local.gradient, Mat11(project_to_psd<11>(local.hessian)));
  }
}

}  // namespace bristle
