/// Frame geometry and the shared curvature and twist derivatives of discrete elastic rods
/// (include/bristle/energy/rod_frame.hpp). Every formula is derived in docs/physics.md,
/// "Discrete elastic rods", and checked against finite differences in tests/energy/.

#include "bristle/energy/rod_frame.hpp"

#include <cassert>
#include <cmath>

namespace bristle {
namespace {

constexpr double kPi = 3.14159265358979323846;

Mat3 cross_matrix(const Vec3& v) {
  Mat3 m;
  m << 0.0, -v.z(), v.y(), v.z(), 0.0, -v.x(), -v.y(), v.x(), 0.0;
  return m;
}

/// Geometry of the two edges shared by every derivative.
struct EdgeGeometry {
  Vec3 t[2];       // unit tangents
  double n[2];     // edge lengths
  Mat3 p[2];       // I - t t^T
  double chi;      // 1 + t0 . t1
  Vec3 kb;         // curvature binormal
  Mat<3, 6> dkb;   // d kb / d(e0, e1)
};

EdgeGeometry edge_geometry(const BendTwistStencil& s) {
  EdgeGeometry g;
  const Vec3 e0 = s.x[1] - s.x[0], e1 = s.x[2] - s.x[1];
  g.n[0] = e0.norm();
  g.n[1] = e1.norm();
  assert(g.n[0] > 0.0 && g.n[1] > 0.0);
  g.t[0] = e0 / g.n[0];
  g.t[1] = e1 / g.n[1];
  for (int j = 0; j < 2; ++j) g.p[j] = Mat3::Identity() - g.t[j] * g.t[j].transpose();
  g.chi = 1.0 + g.t[0].dot(g.t[1]);
  g.kb = 2.0 * g.t[0].cross(g.t[1]) / g.chi;
  // kb = 2 (t0 x t1) / chi: d(t0 x t1) = -[t1]x dt0 + [t0]x dt1, dchi = t1 . dt0 + t0 . dt1,
  // dt_j = P_j de_j / n_j.
  g.dkb.leftCols<3>() = (-2.0 / g.chi * cross_matrix(g.t[1]) - g.kb * g.t[1].transpose() / g.chi) * g.p[0] / g.n[0];
  g.dkb.rightCols<3>() = (2.0 / g.chi * cross_matrix(g.t[0]) - g.kb * g.t[0].transpose() / g.chi) * g.p[1] / g.n[1];
  return g;
}

/// Hessian over (e0, e1) of w . kb for a fixed vector w: the Hessian in tangent space of
/// g(t0, t1) = 2 w . (t0 x t1) / (1 + t0 . t1), pulled back through t_j = e_j / |e_j|.
Mat6 binormal_projection_hessian(const EdgeGeometry& geo, const Vec3& w) {
  const double numerator = w.dot(geo.t[0].cross(geo.t[1]));
  Vec6 grad_n, grad_c;
  grad_n << geo.t[1].cross(w), w.cross(geo.t[0]);
  grad_c << geo.t[1], geo.t[0];
  Mat6 hess_n = Mat6::Zero(), hess_c = Mat6::Zero();
  hess_n.topRightCorner<3, 3>() = -cross_matrix(w);
  hess_n.bottomLeftCorner<3, 3>() = cross_matrix(w);  // (-[w]x)^T
  hess_c.topRightCorner<3, 3>() = Mat3::Identity();
  hess_c.bottomLeftCorner<3, 3>() = Mat3::Identity();
  const double chi = geo.chi;
  const Vec6 grad_g = 2.0 * grad_n / chi - 2.0 * numerator * grad_c / (chi * chi);
  const Mat6 hess_g = 2.0 * hess_n / chi - 2.0 * (grad_n * grad_c.transpose() + grad_c * grad_n.transpose()) / (chi * chi) -
                      2.0 * numerator * hess_c / (chi * chi) +
                      4.0 * numerator * grad_c * grad_c.transpose() / (chi * chi * chi);
  Mat6 h;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      h.block<3, 3>(3 * a, 3 * b) = geo.p[a] * hess_g.block<3, 3>(3 * a, 3 * b) * geo.p[b] / (geo.n[a] * geo.n[b]);
  // The curvature of t_j(e_j): d2t[u, v] = -((t.v) P u + (t.u) P v + (u.P v) t) / n^2.
  for (int j = 0; j < 2; ++j) {
    const Vec3 gj = grad_g.segment<3>(3 * j);
    const Vec3 pg = geo.p[j] * gj;
    h.block<3, 3>(3 * j, 3 * j) -=
        (pg * geo.t[j].transpose() + geo.t[j] * pg.transpose() + gj.dot(geo.t[j]) * geo.p[j]) / (geo.n[j] * geo.n[j]);
  }
  return h;
}

/// Stencil DOFs from edge-space variables (e0, e1, theta0, theta1): e0 = x1 - x0,
/// e1 = x2 - x1. Each edge-space variable is a signed sum of at most two stencil DOFs.
struct EdgeVariable {
  int dof[2];
  double sign[2];
  int count;
};
constexpr EdgeVariable edge_variable(int k) {
  if (k < 3) return {{k, 4 + k}, {-1.0, 1.0}, 2};
  if (k < 6) return {{4 + (k - 3), 8 + (k - 3)}, {-1.0, 1.0}, 2};
  return {{k == 6 ? 3 : 7, 0}, {1.0, 0.0}, 1};
}

/// The stencil gradient of edge-space derivatives g = (d/de0, d/de1, d/dtheta0, d/dtheta1):
/// x_{i-1} gets -d/de0, x_i d/de0 - d/de1, x_{i+1} d/de1 (edge_variable's signed sums).
Vec11 stencil_gradient(const Vec<8>& g) {
  Vec11 out;
  out.segment<3>(0) = -g.segment<3>(0);
  out[3] = g[6];
  out.segment<3>(4) = g.segment<3>(0) - g.segment<3>(3);
  out[7] = g[7];
  out.segment<3>(8) = g.segment<3>(3);
  return out;
}

Mat11 stencil_hessian(const Mat<8, 8>& h) {
  Mat11 out = Mat11::Zero();
  for (int k = 0; k < 8; ++k) {
    const EdgeVariable u = edge_variable(k);
    for (int l = 0; l < 8; ++l) {
      const EdgeVariable v = edge_variable(l);
      for (int a = 0; a < u.count; ++a)
        for (int b = 0; b < v.count; ++b) out(u.dof[a], v.dof[b]) += u.sign[a] * v.sign[b] * h(k, l);
    }
  }
  return out;
}

/// kappa = scale * kb . (u0 + u1), u_j one material director of edge j (m2 for kappa1, m1 for
/// kappa2), du_j = d u_j / d theta_j and ddu_j its second derivative (-u_j).
void curvature_from_directors(const EdgeGeometry& geo, const Vec3 (&u)[2], const Vec3 (&du)[2], double scale,
                              bool want_hessian, StencilScalar& out) {
  const Vec3 w = u[0] + u[1];
  Vec<8> g = Vec<8>::Zero();
  g.head<6>() = geo.dkb.transpose() * w;
  // A director carried by parallel transport turns with its edge: d u_j / d e_j = -t_j u_j^T / n_j,
  // which adds -u_j (t_j . kb) / n_j = 0 to the gradient (kb is perpendicular to both edges)
  // but not to the Hessian.
  Mat3 director_jacobian[2];
  for (int j = 0; j < 2; ++j) {
    director_jacobian[j] = -geo.t[j] * u[j].transpose() / geo.n[j];
    g[6 + j] = geo.kb.dot(du[j]);
  }
  out.value = scale * geo.kb.dot(w);
  out.gradient = stencil_gradient(scale * g);
  if (!want_hessian) return;
  Mat<8, 8> h = Mat<8, 8>::Zero();
  h.topLeftCorner<6, 6>() = binormal_projection_hessian(geo, w);
  for (int j = 0; j < 2; ++j) {
    // kb . d2u_j/de_j^2 = -(u_j kb^T + kb u_j^T) / (2 n_j^2) (kb is perpendicular to t_j).
    h.block<3, 3>(3 * j, 3 * j) -= (u[j] * geo.kb.transpose() + geo.kb * u[j].transpose()) / (2.0 * geo.n[j] * geo.n[j]);
    const Mat<3, 6> cross_term = director_jacobian[j].transpose() * geo.dkb;
    h.block<3, 6>(3 * j, 0) += cross_term;
    h.block<6, 3>(0, 3 * j) += cross_term.transpose();
    // Twist-twist: d2u/dtheta2 = -u. Twist-edge: d/de of kb . du_j, whose director term
    // -du_j (t_j . kb) / n_j vanishes as above.
    h(6 + j, 6 + j) = -geo.kb.dot(u[j]);
    const Vec6 mixed = geo.dkb.transpose() * du[j];
    h.block<6, 1>(0, 6 + j) += mixed;
    h.block<1, 6>(6 + j, 0) += mixed.transpose();
  }
  out.hessian = stencil_hessian(scale * h);
}

}  // namespace

Vec3 parallel_transport_turned(const Vec3& from, const Vec3& axis, double c, const Vec3& v) {
  // (Nearly) opposite tangents: an edge that turned around within one step, which only a
  // violent motion does. The minimal rotation is (nearly) undefined there; turn by the angle
  // between them about a unit axis perpendicular to `from` (a x b if it is not round-off,
  // else a fixed perpendicular) so that frames stay finite and the step can go on.
  const double s = axis.norm();
  Vec3 k = axis / s;
  if (!(s > 1e-12)) {
    const Vec3 trial = std::abs(from.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
    k = from.cross(trial).normalized();
  }
  const double angle = std::atan2(s, c);
  return std::cos(angle) * v + std::sin(angle) * k.cross(v) + (1.0 - std::cos(angle)) * k.dot(v) * k;
}

Vec3 curvature_binormal(const Vec3& t0, const Vec3& t1) { return 2.0 * t0.cross(t1) / (1.0 + t0.dot(t1)); }

double reference_twist(const Vec3& t0, const Vec3& t1, const Vec3& d0, const Vec3& d1, double previous) {
  const double angle = signed_angle(parallel_transport(t0, t1, d0), d1, t1);
  // The representative of angle + 2 pi k nearest the previous value. In a step the reference
  // twist moves by far less than pi, so the difference is usually in [-pi, pi] already and the
  // (slow) exact remainder is skipped.
  const double difference = angle - previous;
  if (std::abs(difference) <= kPi) return previous + difference;
  return previous + std::remainder(difference, 2.0 * kPi);
}

MaterialDirectors material_directors(const Vec3& tangent, const Vec3& reference, double theta) {
  const double c = std::cos(theta), s = std::sin(theta);
  MaterialDirectors m;
  m.m1 = c * reference + s * tangent.cross(reference);
  m.m2 = tangent.cross(m.m1);
  return m;
}

namespace {
void stencil_directors(const BendTwistStencil& s, const EdgeGeometry& geo, MaterialDirectors (&m)[2]) {
  for (int j = 0; j < 2; ++j) m[j] = material_directors(geo.t[j], s.reference[j], s.theta[j]);
}
}  // namespace

StencilEdge stencil_edge(const Vec3& from, const Vec3& to, const Vec3& reference, double theta) {
  StencilEdge edge;
  const Vec3 e = to - from;
  edge.length = e.norm();
  // e / |e| (Eigen's normalized(): a zero edge keeps its zero tangent; the kernels that
  // divide by the length assert it is positive).
  edge.tangent = edge.length > 0.0 ? Vec3(e / edge.length) : e;
  edge.reference = reference;
  edge.directors = material_directors(edge.tangent, reference, theta);
  return edge;
}

namespace {
void stencil_edges(const BendTwistStencil& s, StencilEdge (&edge)[2]) {
  for (int j = 0; j < 2; ++j) edge[j] = stencil_edge(s.x[j], s.x[j + 1], s.reference[j], s.theta[j]);
}
}  // namespace

Vec2 material_curvatures(const StencilEdge (&edge)[2]) {
  const Vec3 kb = curvature_binormal(edge[0].tangent, edge[1].tangent);
  const MaterialDirectors& a = edge[0].directors;
  const MaterialDirectors& b = edge[1].directors;
  return {0.5 * kb.dot(a.m2 + b.m2), -0.5 * kb.dot(a.m1 + b.m1)};
}

Vec2 material_curvatures(const BendTwistStencil& s) {
  StencilEdge edge[2];
  stencil_edges(s, edge);
  return material_curvatures(edge);
}

RodRestFrames space_parallel_frames(const std::vector<Vec3>& vertices, const Vec3& first_director) {
  RodRestFrames frames;
  const std::size_t n = vertices.size();
  frames.curvature.assign(n, Vec2::Zero());
  if (n < 2) return frames;
  frames.reference.resize(n - 1);
  Vec3 previous_tangent = (vertices[1] - vertices[0]).normalized();
  frames.reference[0] = (first_director - first_director.dot(previous_tangent) * previous_tangent).normalized();
  for (std::size_t j = 1; j + 1 < n; ++j) {
    const Vec3 tangent = (vertices[j + 1] - vertices[j]).normalized();
    // Renormalised and re-orthogonalised: transport preserves both in exact arithmetic, and a
    // long rod must not accumulate rounding.
    Vec3 d = parallel_transport(previous_tangent, tangent, frames.reference[j - 1]);
    d -= d.dot(tangent) * tangent;
    frames.reference[j] = d.normalized();
    const BendTwistStencil s{{vertices[j - 1], vertices[j], vertices[j + 1]},
                             {0.0, 0.0},
                             {frames.reference[j - 1], frames.reference[j]},
                             0.0};
    frames.curvature[j] = material_curvatures(s);
    previous_tangent = tangent;
  }
  return frames;
}

double stencil_twist(const BendTwistStencil& s) { return s.theta[1] - s.theta[0] + s.reference_twist; }

void material_curvature_derivatives(const BendTwistStencil& s, bool want_hessian, StencilScalar& kappa1,
                                    StencilScalar& kappa2) {
  const EdgeGeometry geo = edge_geometry(s);
  MaterialDirectors m[2];
  stencil_directors(s, geo, m);
  // kappa1 = 1/2 kb . (m2^0 + m2^1), d m2 / d theta = -m1;
  // kappa2 = -1/2 kb . (m1^0 + m1^1), d m1 / d theta = m2.
  const Vec3 m2s[2] = {m[0].m2, m[1].m2}, minus_m1s[2] = {-m[0].m1, -m[1].m1};
  const Vec3 m1s[2] = {m[0].m1, m[1].m1};
  curvature_from_directors(geo, m2s, minus_m1s, 0.5, want_hessian, kappa1);
  curvature_from_directors(geo, m1s, m2s, -0.5, want_hessian, kappa2);
}

BendTwistStrains bend_twist_strains(const BendTwistStencil& s) {
  StencilEdge edge[2];
  stencil_edges(s, edge);
  return bend_twist_strains(edge, stencil_twist(s));
}

BendTwistStrains bend_twist_strains(const StencilEdge (&edge)[2], double twist) {
  const double n[2] = {edge[0].length, edge[1].length};
  assert(n[0] > 0.0 && n[1] > 0.0);
  const Vec3 t[2] = {edge[0].tangent, edge[1].tangent};
  const double chi = 1.0 + t[0].dot(t[1]);
  const Vec3 kb = 2.0 * t[0].cross(t[1]) / chi;
  const MaterialDirectors m[2] = {edge[0].directors, edge[1].directors};
  // d(w . kb)/de_0 = P_0 (2 t_1 x w - (w . kb) t_1) / (chi n_0),
  // d(w . kb)/de_1 = P_1 (2 w x t_0 - (w . kb) t_0) / (chi n_1), P_j = I - t_j t_j^T: the
  // transpose of edge_geometry's dkb applied to w. The directors' own turn with their edges
  // adds nothing to the gradient (kb is perpendicular to both tangents).
  const auto binormal_gradient = [&](const Vec3& w, double scale, const Vec3 (&du)[2]) {
    const double projection = w.dot(kb);
    Vec3 g0 = 2.0 * t[1].cross(w) - projection * t[1];
    Vec3 g1 = 2.0 * w.cross(t[0]) - projection * t[0];
    g0 = (g0 - t[0].dot(g0) * t[0]) * (scale / (chi * n[0]));
    g1 = (g1 - t[1].dot(g1) * t[1]) * (scale / (chi * n[1]));
    Vec<8> g;
    g << g0, g1, scale * kb.dot(du[0]), scale * kb.dot(du[1]);
    return StencilStrain{scale * projection, stencil_gradient(g)};
  };
  BendTwistStrains out;
  // kappa1 = 1/2 kb . (m2^0 + m2^1), d m2 / d theta = -m1; kappa2 = -1/2 kb . (m1^0 + m1^1),
  // d m1 / d theta = m2 (as material_curvature_derivatives).
  const Vec3 minus_m1s[2] = {-m[0].m1, -m[1].m1}, m2s[2] = {m[0].m2, m[1].m2};
  out.kappa[0] = binormal_gradient(m[0].m2 + m[1].m2, 0.5, minus_m1s);
  out.kappa[1] = binormal_gradient(m[0].m1 + m[1].m1, -0.5, m2s);
  // The twist's gradient from the same binormal (as twist_strain).
  Vec<8> g;
  g << kb / (2.0 * n[0]), kb / (2.0 * n[1]), -1.0, 1.0;
  out.twist = {twist, stencil_gradient(g)};
  return out;
}

StencilStrain twist_strain(const BendTwistStencil& s) {
  const Vec3 e0 = s.x[1] - s.x[0], e1 = s.x[2] - s.x[1];
  const double n0 = e0.norm(), n1 = e1.norm();
  const Vec3 kb = curvature_binormal(e0 / n0, e1 / n1);
  // d(twist)/de_j = kb / (2 n_j), d/dtheta = (-1, 1) (as twist_derivatives).
  Vec<8> g;
  g << kb / (2.0 * n0), kb / (2.0 * n1), -1.0, 1.0;
  return {stencil_twist(s), stencil_gradient(g)};
}

StencilScalar twist_derivatives(const BendTwistStencil& s, bool want_hessian) {
  const EdgeGeometry geo = edge_geometry(s);
  StencilScalar out;
  out.value = stencil_twist(s);
  // d(twist)/de_j = kb / (2 n_j) (Bergou et al. 2010, section 7), d/dtheta = (-1, 1).
  Vec<8> g;
  g << geo.kb / (2.0 * geo.n[0]), geo.kb / (2.0 * geo.n[1]), -1.0, 1.0;
  out.gradient = stencil_gradient(g);
  if (!want_hessian) return out;
  // The Hessian is the symmetric part of the Jacobian J of (kb / (2 n0), kb / (2 n1)): the
  // holonomy of the transported reference frames adds exactly the antisymmetric part's
  // negative (docs/physics.md).
  Mat6 j;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      j.block<3, 3>(3 * a, 3 * b) = geo.dkb.block<3, 3>(0, 3 * b) / (2.0 * geo.n[a]);
      if (a == b) j.block<3, 3>(3 * a, 3 * b) -= geo.kb * geo.t[a].transpose() / (2.0 * geo.n[a] * geo.n[a]);
    }
  Mat<8, 8> h = Mat<8, 8>::Zero();
  h.topLeftCorner<6, 6>() = 0.5 * (j + j.transpose());
  out.hessian = stencil_hessian(h);
  return out;
}

}  // namespace bristle
