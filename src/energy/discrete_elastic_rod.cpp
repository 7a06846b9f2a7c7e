/// Discrete-elastic-rod terms (include/bristle/energy/discrete_elastic_rod.hpp).

#include "bristle/energy/discrete_elastic_rod.hpp"

#include <cassert>
#include <cmath>

namespace bristle {

namespace {

/// The stencil's positions and twist angles from its 11 DOFs.
BendTwistStencil unpack(const Vec11& q) {
  BendTwistStencil s;
  s.x[0] = q.segment<3>(0);
  s.theta[0] = q[3];
  s.x[1] = q.segment<3>(4);
  s.theta[1] = q[7];
  s.x[2] = q.segment<3>(8);
  return s;
}

/// Edge j's committed reference director carried to `tangent`: the minimal rotation from the
/// committed tangent, which is the identity where the edge has not turned since the commit
/// (the tangent equal bit for bit, as at the step's start, where Newton's first iteration is
/// linearised): the committed director as it is, without a rotation's rounding.
Vec3 carried_director(const StencilFrames& committed, int j, const Vec3& tangent) {
  if (tangent == committed.tangent[j]) return committed.director[j];
  return parallel_transport(committed.tangent[j], tangent, committed.director[j]).normalized();
}

/// The reference twist between two carried directors, continuous with the committed value;
/// the committed value itself where neither edge has turned since the commit (the directors
/// are then the committed ones, between which it was measured).
double carried_reference_twist(const StencilFrames& committed, const Vec3& t0, const Vec3& t1, const Vec3& d0,
                               const Vec3& d1) {
  if (t0 == committed.tangent[0] && t1 == committed.tangent[1]) return committed.reference_twist;
  return reference_twist(t0, t1, d0, d1, committed.reference_twist);
}

/// Carries the committed frames to the stencil's edges: each reference director by the
/// minimal rotation from its committed tangent to the current one, the reference twist
/// measured between them and kept continuous with the committed value.
void transport(BendTwistStencil& s, const StencilFrames& committed, StencilFrames* carried) {
  const Vec3 tangent[2] = {(s.x[1] - s.x[0]).normalized(), (s.x[2] - s.x[1]).normalized()};
  for (int j = 0; j < 2; ++j) s.reference[j] = carried_director(committed, j, tangent[j]);
  s.reference_twist = carried_reference_twist(committed, tangent[0], tangent[1], s.reference[0], s.reference[1]);
  if (carried != nullptr) {
    for (int j = 0; j < 2; ++j) {
      carried->tangent[j] = tangent[j];
      carried->director[j] = s.reference[j];
    }
    carried->reference_twist = s.reference_twist;
  }
}

}  // namespace

Vec3 first_reference_director(const Vec3& tangent, const Vec3& hint) {
  Vec3 d = hint - hint.dot(tangent) * tangent;
  if (d.norm() > 1e-6 * std::max(1.0, hint.norm())) return d.normalized();
  const Vec3& t = tangent;
  Vec3 axis = Vec3::UnitX();
  if (std::abs(t.y()) < std::abs(t[0]) && std::abs(t.y()) <= std::abs(t.z())) axis = Vec3::UnitY();
  if (std::abs(t.z()) < std::abs(t[0]) && std::abs(t.z()) < std::abs(t.y())) axis = Vec3::UnitZ();
  d = axis - axis.dot(t) * t;
  return d.normalized();
}

StencilEdge carried_edge(const Vec11& q, const StencilFrames& committed, int j, bool directors) {
  // As transport(): the tangent of (x_{j+1} - x_j).normalized(), the committed director
  // carried to it and renormalised; then the material directors at theta_j.
  const Vec3 e = q.segment<3>(4 * j + 4) - q.segment<3>(4 * j);
  StencilEdge edge;
  edge.length = e.norm();
  edge.tangent = edge.length > 0.0 ? Vec3(e / edge.length) : e;
  edge.reference = carried_director(committed, j, edge.tangent);
  if (directors) edge.directors = material_directors(edge.tangent, edge.reference, q[4 * j + 3]);
  return edge;
}

void carry_twist(const Vec11& q, const StencilFrames& committed, CarriedStencil& s) {
  s.reference_twist = carried_reference_twist(committed, s.edge[0].tangent, s.edge[1].tangent, s.edge[0].reference,
                                              s.edge[1].reference);
  s.twist = q[7] - q[3] + s.reference_twist;  // stencil_twist
}

BendTwistStencil stencil_of(const Vec11& q, const CarriedStencil& carried) {
  BendTwistStencil s = unpack(q);
  for (int j = 0; j < 2; ++j) s.reference[j] = carried.edge[j].reference;
  s.reference_twist = carried.reference_twist;
  return s;
}

StencilFrames frames_of(const CarriedStencil& s) {
  StencilFrames frames;
  for (int j = 0; j < 2; ++j) {
    frames.tangent[j] = s.edge[j].tangent;
    frames.director[j] = s.edge[j].reference;
  }
  frames.reference_twist = s.reference_twist;
  return frames;
}

BendTwistStencil transported_stencil(const Vec11& q, const StencilFrames& committed) {
  BendTwistStencil s = unpack(q);
  transport(s, committed, nullptr);
  return s;
}

StencilFrames transported_frames(const Vec11& q, const StencilFrames& committed) {
  BendTwistStencil s = unpack(q);
  StencilFrames carried;
  transport(s, committed, &carried);
  return carried;
}

std::vector<BendTwistRest> bend_twist_rest(const Rod& rod, const Vec3& first_director) {
  const int n = rod.vertex_count();
  std::vector<BendTwistRest> rest(n);
  if (n < 3) return rest;
  const std::vector<Vec3>& x = rod.initial_positions;
  const Vec3 first_tangent = (x[1] - x[0]).normalized();
  const RodRestFrames frames = space_parallel_frames(x, first_reference_director(first_tangent, first_director));
  // The section's principal stiffnesses: E I1 resists kappa1 (bending along m1, the first
  // axis), E I2 kappa2; G J twist (docs/physics.md, "Cross-sections").
  const CrossSection section = rod.material.section();
  const double e = rod.material.youngs_modulus;
  const Vec2 i_section(section.second_moment_1(), section.second_moment_2());
  const double shear_modulus = rod.material.shear(), torsion_constant = section.torsion_constant();
  // The material frames start turned by the initial twists (the rest twist accumulated from
  // the root): rest curvatures are measured in them, so the initial shape is a rest state.
  std::vector<double> theta(rod.edge_count(), 0.0);
  if (rod.rest_twist != 0.0) theta = rod.initial_twists();
  for (int i = 1; i + 1 < n; ++i) {
    BendTwistRest& r = rest[i];
    for (int j = 0; j < 2; ++j) {
      r.frames.tangent[j] = (x[i + j] - x[i + j - 1]).normalized();
      r.frames.director[j] = frames.reference[i + j - 1];
    }
    r.frames.reference_twist = 0.0;  // Bishop frames do not twist
    // A straight rest shape ("rest": "straight") has zero rest angles: zero rest curvature.
    if (rod.rest_angles[i] == 0.0) {
      r.bend.rest_curvature = Vec2::Zero();
    } else if (theta[i - 1] == 0.0 && theta[i] == 0.0) {
      r.bend.rest_curvature = frames.curvature[i];
    } else {
      const BendTwistStencil s{{x[i - 1], x[i], x[i + 1]},
                               {theta[i - 1], theta[i]},
                               {frames.reference[i - 1], frames.reference[i]},
                               0.0};
      r.bend.rest_curvature = material_curvatures(s);
    }
    const double voronoi = rod.voronoi_length(i);
    r.bend.stiffness = e * i_section / voronoi;
    r.twist_stiffness = shear_modulus * torsion_constant / voronoi;
    // The rest twist rest_twist * l_i, taken as the initial theta_i - theta_{i-1} (equal up to
    // rounding) so that the initial state is a rest state exactly.
    r.rest_twist = theta[i] - theta[i - 1];
  }
  return rest;
}

namespace {
BendTwistGaussNewton gauss_newton(const BendTwistStrains& strains, const BendTwistRest& rest) {
  BendTwistGaussNewton out;
  for (int k = 0; k < 2; ++k) {
    const double deviation = strains.kappa[k].value - rest.bend.rest_curvature[k];
    out.energy[0] += 0.5 * rest.bend.stiffness[k] * deviation * deviation;
    out.gradient += (rest.bend.stiffness[k] * deviation) * strains.kappa[k].gradient;
    out.hessian.value[k] = rest.bend.stiffness[k];
    out.hessian.vector[k] = strains.kappa[k].gradient;
  }
  const double deviation = strains.twist.value - rest.rest_twist;
  out.energy[1] = 0.5 * rest.twist_stiffness * deviation * deviation;
  out.gradient += (rest.twist_stiffness * deviation) * strains.twist.gradient;
  out.hessian.value[2] = rest.twist_stiffness;
  out.hessian.vector[2] = strains.twist.gradient;
  return out;
}

}  // namespace

BendTwistGaussNewton bend_twist_gauss_newton(const BendTwistStencil& s, const BendTwistRest& rest) {
  return gauss_newton(bend_twist_strains(s), rest);
}

BendTwistGaussNewton bend_twist_gauss_newton(const CarriedStencil& s, const BendTwistRest& rest) {
  // bend_twist_strains(s.edge, s.twist) and gauss_newton in one pass, each value computed by
  // the same operations in the same order (tested bit for bit against them), without their
  // intermediate strain vectors.
  const double n[2] = {s.edge[0].length, s.edge[1].length};
  assert(n[0] > 0.0 && n[1] > 0.0);
  const Vec3& t0 = s.edge[0].tangent;
  const Vec3& t1 = s.edge[1].tangent;
  const MaterialDirectors& a = s.edge[0].directors;
  const MaterialDirectors& b = s.edge[1].directors;
  const double chi = 1.0 + t0.dot(t1);
  const Vec3 kb = 2.0 * t0.cross(t1) / chi;
  BendTwistGaussNewton out;
  double coefficient[3];
  // The curvature kappa = scale kb . w with d/dtheta_j = scale kb . du_j (rod_frame.cpp,
  // bend_twist_strains): kappa1 with w = m2^0 + m2^1, du_j = -m1^j; kappa2 with
  // w = m1^0 + m1^1, du_j = m2^j.
  const auto curvature = [&](int k, const Vec3& w, double scale, double du0, double du1) {
    const double projection = w.dot(kb);
    Vec3 g0 = 2.0 * t1.cross(w) - projection * t1;
    Vec3 g1 = 2.0 * w.cross(t0) - projection * t0;
    g0 = (g0 - t0.dot(g0) * t0) * (scale / (chi * n[0]));
    g1 = (g1 - t1.dot(g1) * t1) * (scale / (chi * n[1]));
    Vec11& v = out.hessian.vector[k];
    v.segment<3>(0) = -g0;
    v[3] = scale * du0;
    v.segment<3>(4) = g0 - g1;
    v[7] = scale * du1;
    v.segment<3>(8) = g1;
    const double deviation = scale * projection - rest.bend.rest_curvature[k];
    const double stiffness = rest.bend.stiffness[k];
    out.energy[0] += 0.5 * stiffness * deviation * deviation;
    coefficient[k] = stiffness * deviation;
    out.hessian.value[k] = stiffness;
  };
  curvature(0, a.m2 + b.m2, 0.5, -kb.dot(a.m1), -kb.dot(b.m1));
  curvature(1, a.m1 + b.m1, -0.5, kb.dot(a.m2), kb.dot(b.m2));
  // The twist: d/de_j = kb / (2 n_j), d/dtheta = (-1, 1).
  const Vec3 k0 = kb / (2.0 * n[0]), k1 = kb / (2.0 * n[1]);
  Vec11& v = out.hessian.vector[2];
  v.segment<3>(0) = -k0;
  v[3] = -1.0;
  v.segment<3>(4) = k0 - k1;
  v[7] = 1.0;
  v.segment<3>(8) = k1;
  const double deviation = s.twist - rest.rest_twist;
  out.energy[1] = 0.5 * rest.twist_stiffness * deviation * deviation;
  coefficient[2] = rest.twist_stiffness * deviation;
  out.hessian.value[2] = rest.twist_stiffness;
  out.gradient = coefficient[0] * out.hessian.vector[0] + coefficient[1] * out.hessian.vector[1] +
                 coefficient[2] * out.hessian.vector[2];
  return out;
}

std::array<double, 2> bend_twist_energies(const CarriedStencil& s, const BendTwistRest& rest) {
  // material_bend_energy and twist_energy, in their order of operations.
  const Vec2 deviation = material_curvatures(s.edge) - rest.bend.rest_curvature;
  const MaterialBendParameters& p = rest.bend;
  const double twist_deviation = s.twist - rest.rest_twist;
  return {0.5 * (p.stiffness[0] * deviation[0] * deviation[0] + p.stiffness[1] * deviation[1] * deviation[1]),
          0.5 * rest.twist_stiffness * twist_deviation * twist_deviation};
}

}  // namespace bristle
