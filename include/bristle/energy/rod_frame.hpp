#pragma once
/// Frame geometry of discrete elastic rods (Bergou et al., "Discrete Elastic Rods", SIGGRAPH
/// 2008; "Discrete Viscous Threads", SIGGRAPH 2010): parallel transport, the curvature
/// binormal, material directors and the reference twist, and the derivatives of a bend-twist
/// stencil's curvature and twist that the bending and twisting energies share.
/// Derivations: docs/physics.md, "Discrete elastic rods".
///
/// The bend-twist stencil of interior vertex i: vertices x_{i-1}, x_i, x_{i+1}, the twist
/// angles theta_{i-1}, theta_i of its two edges, each edge's reference director (unit,
/// perpendicular to the edge) and the reference twist between the two reference frames.
/// Local DOF order (the global layout interleaves an edge's twist after its first vertex):
///
///   [x_{i-1} (3), theta_{i-1}, x_i (3), theta_i, x_{i+1} (3)]   (11 DOFs)
///
/// Derivatives are those of the energy as a function of the DOFs with each reference frame
/// carried by parallel transport in time from where it is now: exact at the current
/// reference frames, which the integrator transports to the current edges before it
/// evaluates anything (integrator stage "transport frames").

#include <cmath>
#include <vector>

#include "bristle/math/types.hpp"

namespace bristle {

using Vec11 = Vec<11>;
using Mat11 = Mat<11, 11>;

/// parallel_transport for (nearly) opposite `from` and `to` (cosine c, from x to = axis).
Vec3 parallel_transport_turned(const Vec3& from, const Vec3& axis, double c, const Vec3& v);

/// The minimal rotation taking unit vector `from` to unit vector `to`, applied to v
/// (rotation about from x to; requires from . to > -1). Inline: every evaluation of a rod
/// with twist calls it twice per stencil (the same arithmetic wherever it is compiled, since
/// the build does not contract floating-point operations).
inline Vec3 parallel_transport(const Vec3& from, const Vec3& to, const Vec3& v) {
  const Vec3 axis = from.cross(to);
  const double c = from.dot(to);
  // Rodrigues' formula with the unnormalised axis a = from x to, |a| = sin(angle):
  // R v = cos v + a x v + (a . v) a / (1 + cos).
  if (c > -1.0 + 1e-6) return c * v + axis.cross(v) + (axis.dot(v) / (1.0 + c)) * axis;
  return parallel_transport_turned(from, axis, c, v);
}

/// The signed angle in (-pi, pi] from p to q about `axis` (p, q perpendicular to axis).
inline double signed_angle(const Vec3& p, const Vec3& q, const Vec3& axis) {
  return std::atan2(p.cross(q).dot(axis), p.dot(q));
}

/// Curvature binormal 2 t0 x t1 / (1 + t0 . t1) of two unit tangents; its length is
/// 2 tan(phi / 2), phi the turning angle.
Vec3 curvature_binormal(const Vec3& t0, const Vec3& t1);

/// The reference twist of a vertex: the signed angle about t1 from the reference director
/// d0 of edge i-1, parallel transported to edge i, to the reference director d1 of edge i;
/// the representative nearest `previous` (the twist is continuous in time, not wrapped).
double reference_twist(const Vec3& t0, const Vec3& t1, const Vec3& d0, const Vec3& d1, double previous);

/// The material directors of an edge with tangent t, reference director d and twist angle
/// theta: m1 = cos(theta) d + sin(theta) (t x d), m2 = t x m1.
struct MaterialDirectors {
  Vec3 m1, m2;
};
MaterialDirectors material_directors(const Vec3& tangent, const Vec3& reference, double theta);

struct BendTwistStencil {
  Vec3 x[3];               ///< x_{i-1}, x_i, x_{i+1} [m]
  double theta[2];         ///< twist angles of edges i-1 and i [rad]
  Vec3 reference[2];       ///< reference directors of edges i-1 and i (unit, perpendicular)
  double reference_twist;  ///< [rad]
};

/// Material curvatures (kappa1, kappa2) = (1/2 kb . (m2^0 + m2^1), -1/2 kb . (m1^0 + m1^1)).
Vec2 material_curvatures(const BendTwistStencil& s);
/// Twist theta_i - theta_{i-1} + reference twist [rad].
double stencil_twist(const BendTwistStencil& s);

/// A scalar of the stencil with its gradient and Hessian over the 11 local DOFs.
struct StencilScalar {
  double value = 0.0;
  Vec11 gradient = Vec11::Zero();
  Mat11 hessian = Mat11::Zero();
};

/// kappa1 and kappa2 with their exact derivatives (Hessians only when asked for).
void material_curvature_derivatives(const BendTwistStencil& s, bool want_hessian, StencilScalar& kappa1,
                                    StencilScalar& kappa2);
/// The twist with its exact derivatives, the reference twist's dependence on the edges
/// included (Hessian only when asked for).
StencilScalar twist_derivatives(const BendTwistStencil& s, bool want_hessian);

/// A scalar of the stencil with its gradient only (no Hessian storage).
struct StencilStrain {
  double value = 0.0;
  Vec11 gradient = Vec11::Zero();
};

/// kappa1, kappa2 and the twist with their gradients, from one pass over the edges' geometry:
/// the same values and gradients as material_curvature_derivatives and twist_derivatives
/// (tested against them and against finite differences), without forming the 3 x 6 Jacobian
/// of the curvature binormal. What the Gauss-Newton Hessians and gradient passes use.
struct BendTwistStrains {
  StencilStrain kappa[2];
  StencilStrain twist;
};
BendTwistStrains bend_twist_strains(const BendTwistStencil& s);

/// One edge of a bend-twist stencil: its length, unit tangent, reference director and
/// material directors at its twist angle. Two neighbouring stencils share an edge; the
/// element table evaluates a rod's stencils in order and hands each its first edge from the
/// one before (BendTwistTerm::Chain, energy/discrete_elastic_rod.hpp).
struct StencilEdge {
  double length = 0.0;
  Vec3 tangent;    ///< unit
  Vec3 reference;  ///< unit reference director, perpendicular to the tangent
  MaterialDirectors directors;
};
/// The edge from `from` to `to` with reference director `reference` and twist angle `theta`
/// (the values bend_twist_strains(s) and material_curvatures(s) compute from a stencil).
StencilEdge stencil_edge(const Vec3& from, const Vec3& to, const Vec3& reference, double theta);
/// bend_twist_strains of the stencil with these two edges and twist theta_i - theta_{i-1} +
/// reference twist (the same values, bit for bit).
BendTwistStrains bend_twist_strains(const StencilEdge (&edge)[2], double twist);
/// material_curvatures of the stencil with these two edges (the same values, bit for bit).
Vec2 material_curvatures(const StencilEdge (&edge)[2]);
/// The twist alone with its gradient (bend_twist_strains(s).twist, without the curvatures).
StencilStrain twist_strain(const BendTwistStencil& s);

/// Frames of a whole rod at rest, from its vertices: the first edge's reference director is
/// `first_director` made perpendicular to the edge (any unit vector not along it), each next
/// one its predecessor parallel transported along the rod (the space-parallel, or Bishop,
/// frame), so every reference twist is zero. With the material frames on the reference frames
/// (theta = 0), `curvature` holds each interior vertex's (kappa1, kappa2): rest curvatures that
/// make the given shape, a helix included, a rest state (`"rest": "initial"`).
struct RodRestFrames {
  std::vector<Vec3> reference;  ///< per edge
  std::vector<Vec2> curvature;  ///< per vertex; zero at the two ends
};
RodRestFrames space_parallel_frames(const std::vector<Vec3>& vertices, const Vec3& first_director);

}  // namespace bristle
