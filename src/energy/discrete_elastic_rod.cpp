/// Discrete-elastic-rod terms (include/bristle/energy/discrete_elastic_rod.hpp).

#include "bristle/energy/discrete_elastic_rod.hpp"

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

/// Carries the committed frames to the stencil's edges: each reference director by the
/// minimal rotation from its committed tangent to the current one, the reference twist
/// measured between them and kept continuous with the committed value.
void transport(BendTwistStencil& s, const StencilFrames& committed, StencilFrames* carried) {
  const Vec3 tangent[2] = {(s.x[1] - s.x[0]).normalized(), (s.x[2] - s.x[1]).normalized()};
  for (int j = 0; j < 2; ++j)
    s.reference[j] = parallel_transport(committed.tangent[j], tangent[j], committed.director[j]).normalized();
  s.reference_twist = reference_twist(tangent[0], tangent[1], s.reference[0], s.reference[1], committed.reference_twist);
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

BendTwistGaussNewton bend_twist_gauss_newton(const BendTwistStencil& s, const BendTwistRest& rest) {
  const BendTwistStrains strains = bend_twist_strains(s);
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

}  // namespace bristle
