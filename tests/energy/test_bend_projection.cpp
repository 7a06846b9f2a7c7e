// The closed-form spectrum of the bending Hessian and the projection built on it
// (bend_hessian_spectrum, bend_hessian_projected in include/bristle/energy/bend.hpp).

#include <algorithm>
#include <cmath>
#include <vector>
#include <random>

#include <doctest/doctest.h>
#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "bristle/energy/bend.hpp"
#include "support/finite_difference.hpp"

using namespace bristle;
using bristle::test::compare_matrices;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// Edge lengths l1, l2 turning by theta, rotated and translated at random.
template <int D>
BendStencil<D> random_stencil(double l1, double l2, double theta, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  BendStencil<D> s;
  if constexpr (D == 2) {
    const double phi = kPi * u(rng);
    const Vec2 origin(u(rng), u(rng));
    s.x0 = origin;
    s.x1 = origin + l1 * Vec2(std::cos(phi), std::sin(phi));
    s.x2 = s.x1 + l2 * Vec2(std::cos(phi + theta), std::sin(phi + theta));
  } else {
    const Eigen::Quaterniond rot = Eigen::Quaterniond(u(rng), u(rng), u(rng), u(rng)).normalized();
    s.x0 = Vec3(u(rng), u(rng), u(rng));
    s.x1 = s.x0 + l1 * (rot * Vec3::UnitX());
    s.x2 = s.x1 + l2 * (rot * Vec3(std::cos(theta), std::sin(theta), 0.0));
  }
  return s;
}

template <int D>
Mat<3 * D, 3 * D> reconstruct(const BendHessianSpectrum<D>& spectrum) {
  Mat<3 * D, 3 * D> h = Mat<3 * D, 3 * D>::Zero();
  for (int k = 0; k < BendHessianSpectrum<D>::kCount; ++k)
    h += spectrum.value[k] * spectrum.vector[k] * spectrum.vector[k].transpose();
  return h;
}

template <int D>
double min_eigenvalue(const Mat<3 * D, 3 * D>& m) {
  return Eigen::SelfAdjointEigenSolver<Mat<3 * D, 3 * D>>(m).eigenvalues().minCoeff();
}

// Turning angles from nearly straight to nearly folded, and rest angles of both signs.
const double kAngles[] = {1e-7, 1e-3, 0.3, 1.0, 2.0, 3.0, kPi - 1e-4};
const double kRestAngles[] = {0.0, 0.4, -1.1, 2.5};

template <int D>
void check_spectrum_reproduces_exact_hessian() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> length(0.2, 2.0);
  for (double theta : kAngles)
    for (double rest : kRestAngles) {
      if (D == 3 && rest < 0.0) continue;  // 3D rest angles are unsigned
      const double signed_theta = D == 2 && rest < 0.0 ? -theta : theta;
      CAPTURE(theta);
      CAPTURE(rest);
      const BendStencil<D> s = random_stencil<D>(length(rng), length(rng), signed_theta, rng);
      const double k = 3.7;
      const Mat<3 * D, 3 * D> exact = bend_hessian<D>(s, rest, k);
      const auto c = compare_matrices(reconstruct<D>(bend_hessian_spectrum<D>(s, rest, k)), exact, 1e-9, 1e-9 * k);
      INFO(c.message);
      CHECK(c.ok);
    }
}

/// Calls visit(stencil, theta, rest) for every turning angle of kAngles and rest angle of
/// kRestAngles (unsigned ones only in 3D), on stencils of random edge lengths and placement.
template <int D, typename Visit>
void for_each_stencil(unsigned seed, Visit&& visit) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> length(0.2, 2.0);
  for (double theta : kAngles)
    for (double rest : kRestAngles) {
      if (D == 3 && rest < 0.0) continue;
      CAPTURE(theta);
      CAPTURE(rest);
      visit(random_stencil<D>(length(rng), length(rng), theta, rng), theta, rest);
    }
}

template <int D>
void check_projection() {
  for_each_stencil<D>(5, [](const BendStencil<D>& s, double theta, double rest) {
      const double k = 2.0;
      const BendHessianSpectrum<D> spectrum = bend_hessian_spectrum<D>(s, rest, k);
      const Mat<3 * D, 3 * D> projected = bend_hessian_projected<D>(s, rest, k);
      const double scale = std::max(1.0, projected.cwiseAbs().maxCoeff());
      // PSD, symmetric, and translations stay in its null space.
      CHECK(min_eigenvalue<D>(projected) >= -1e-10 * scale);
      CHECK((projected - projected.transpose()).cwiseAbs().maxCoeff() <= 1e-12 * scale);
      for (int axis = 0; axis < D; ++axis) {
        Vec<3 * D> translation = Vec<3 * D>::Zero();
        for (int node = 0; node < 3; ++node) translation[node * D + axis] = 1.0;
        CHECK((projected * translation).norm() <= 1e-10 * scale);
      }
      // Exactly the exact Hessian with its negative eigenvalues removed: the difference is
      // the negative part, negative semi-definite.
      const Mat<3 * D, 3 * D> exact = bend_hessian<D>(s, rest, k);
      const Mat<3 * D, 3 * D> removed = exact - projected;
      Mat<3 * D, 3 * D> negative_part = Mat<3 * D, 3 * D>::Zero();
      int negatives = 0;
      for (int i = 0; i < BendHessianSpectrum<D>::kCount; ++i)
        if (spectrum.value[i] < 0.0) {
          negative_part += spectrum.value[i] * spectrum.vector[i] * spectrum.vector[i].transpose();
          ++negatives;
        }
      // Relative to the Hessian's own size: the negative part can be far smaller.
      const auto c = compare_matrices(removed, negative_part, 1e-9, exact.cwiseAbs().maxCoeff());
      INFO(c.message);
      CHECK(c.ok);
      CHECK(-min_eigenvalue<D>(-removed) <= 1e-9 * scale);  // removed is NSD
      // physics-notes.md: away from rest, two negative eigenvalues in 2D, three in 3D.
      if (std::abs(theta - rest) > 1e-3) CHECK(negatives == (D == 2 ? 2 : 3));
  });
}

}  // namespace

TEST_CASE("bend spectrum: the rank-one terms add up to the exact Hessian, 2D and 3D") {
  check_spectrum_reproduces_exact_hessian<2>();
  check_spectrum_reproduces_exact_hessian<3>();
}

TEST_CASE("bend spectrum: eigenvalues in scaled edge coordinates are the closed forms") {
  // Checked independently of the code's formulas: a stencil with unit edges, the first along
  // x, turning in the xy-plane, so the edge frames are rotations of the axes and the scaled
  // edge coordinates are an orthonormal change of basis of the edge vectors. The edge-space
  // Hessian follows from the node Hessian by the pseudo-inverse of J (v = J x has full row
  // rank), and its numerically computed eigenvalues must be K times {-d, d, 1 +- sqrt(1 + d^2),
  // -d tan(theta/2), d cot(theta/2)}.
  const double theta = 0.9, rest = 0.25, k = 1.5, d = theta - rest;
  BendStencil<3> s{Vec3::Zero(), Vec3::UnitX(), Vec3::UnitX() + Vec3(std::cos(theta), std::sin(theta), 0.0)};
  Eigen::Matrix<double, 6, 9> J = Eigen::Matrix<double, 6, 9>::Zero();
  J.block<3, 3>(0, 0) = -Mat3::Identity();
  J.block<3, 3>(0, 3) = Mat3::Identity();
  J.block<3, 3>(3, 3) = -Mat3::Identity();
  J.block<3, 3>(3, 6) = Mat3::Identity();
  const Eigen::Matrix<double, 9, 6> J_plus = J.transpose() * (J * J.transpose()).inverse();
  const Mat6 edge_hessian = J_plus.transpose() * bend_hessian<3>(s, rest, k) * J_plus;
  Vec6 computed = Eigen::SelfAdjointEigenSolver<Mat6>(edge_hessian).eigenvalues();
  std::vector<double> expected = {-d, d, 1.0 + std::sqrt(1.0 + d * d), 1.0 - std::sqrt(1.0 + d * d),
                                  -d * std::tan(theta / 2), d / std::tan(theta / 2)};
  std::sort(expected.begin(), expected.end());
  for (int i = 0; i < 6; ++i) CHECK(computed[i] == doctest::Approx(k * expected[i]).epsilon(1e-10));
  // And the spectrum's values are the same multiset.
  const BendHessianSpectrum<3> spectrum = bend_hessian_spectrum<3>(s, rest, k);
  std::vector<double> values(spectrum.value, spectrum.value + 6);
  std::sort(values.begin(), values.end());
  for (int i = 0; i < 6; ++i) CHECK(values[i] == doctest::Approx(k * expected[i]).epsilon(1e-12));
}

TEST_CASE("bend projection: PSD, the exact Hessian minus exactly its negative part, 2D and 3D") {
  check_projection<2>();
  check_projection<3>();
}

TEST_CASE("bend projection: at rest it is the exact Hessian; exactly straight in 3D it is the smooth limit") {
  std::mt19937 rng(3);
  // At theta = theta_rest the Hessian is the Gauss-Newton part K g g^T, already PSD.
  for (double rest : {0.3, 1.7}) {
    const BendStencil<3> s = random_stencil<3>(0.7, 1.3, rest, rng);
    const auto c = compare_matrices(bend_hessian_projected<3>(s, rest, 2.0), bend_hessian<3>(s, rest, 2.0), 1e-9);
    INFO(c.message);
    CHECK(c.ok);
  }
  // Exactly straight, zero rest angle: K (w w^T) (x) (I - t t^T), whatever binormal is picked.
  const Vec3 t = Vec3(1.0, 2.0, -0.5).normalized();
  const double l1 = 0.8, l2 = 1.1, k = 3.0;
  const BendStencil<3> straight{Vec3(0.1, 0.2, 0.3), Vec3(0.1, 0.2, 0.3) + l1 * t, Vec3(0.1, 0.2, 0.3) + (l1 + l2) * t};
  const Vec3 w(1.0 / l1, -1.0 / l1 - 1.0 / l2, 1.0 / l2);
  Mat9 limit;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) limit.block<3, 3>(3 * a, 3 * b) = k * w(a) * w(b) * (Mat3::Identity() - t * t.transpose());
  const auto c = compare_matrices(bend_hessian_projected<3>(straight, 0.0, k), limit, 1e-12);
  INFO(c.message);
  CHECK(c.ok);
  // Nearly straight tends to the same matrix.
  const BendStencil<3> nearly = random_stencil<3>(l1, l2, 1e-7, rng);
  const Vec3 t2 = (nearly.x1 - nearly.x0).normalized();
  Mat9 limit2;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) limit2.block<3, 3>(3 * a, 3 * b) = k * w(a) * w(b) * (Mat3::Identity() - t2 * t2.transpose());
  const auto c2 = compare_matrices(bend_hessian_projected<3>(nearly, 0.0, k), limit2, 1e-6);
  INFO(c2.message);
  CHECK(c2.ok);
}

TEST_CASE("bend projection: exactly straight in 3D gives the straight limit, with or without a rest angle") {
  // No bending plane exists there; with a rest angle the unsigned angle has a cone and no
  // Hessian. The projection must not depend on which perpendicular the code picks: along each
  // axis, and for rest angles 0 and 0.5, it is K (w w^T) (x) (I - t t^T), as bend_hessian.
  const double k = 2.0;
  const Vec3 w(1.0, -2.0, 1.0);  // unit edges
  for (int axis = 0; axis < 3; ++axis)
    for (double rest : {0.0, 0.5}) {
      CAPTURE(axis);
      CAPTURE(rest);
      const Vec3 t = Vec3::Unit(axis);
      const BendStencil<3> straight{Vec3::Zero(), t, 2.0 * t};
      Mat9 limit;
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) limit.block<3, 3>(3 * a, 3 * b) = k * w(a) * w(b) * (Mat3::Identity() - t * t.transpose());
      const auto c = compare_matrices(bend_hessian_projected<3>(straight, rest, k), limit, 1e-14);
      INFO(c.message);
      CHECK(c.ok);
      const auto e = compare_matrices(bend_hessian<3>(straight, rest, k), limit, 1e-14);
      INFO(e.message);
      CHECK(e.ok);
    }
}

TEST_CASE("bend projection: an exact fold gives a finite PSD matrix") {
  for (double rest : {0.0, 1.0, 3.14159265358979323846}) {
    CAPTURE(rest);
    const BendStencil<3> folded{Vec3::Zero(), Vec3::UnitX(), Vec3::Zero() + 0.5 * Vec3::UnitX()};
    const Mat9 h = bend_hessian_projected<3>(folded, rest, 1.0);
    CHECK(h.allFinite());
    CHECK(min_eigenvalue<3>(h) >= -1e-9 * std::max(1.0, h.cwiseAbs().maxCoeff()));
    const BendStencil<2> folded_2d{Vec2::Zero(), Vec2::UnitX(), 0.5 * Vec2::UnitX()};
    const Mat6 h2 = bend_hessian_projected<2>(folded_2d, rest, 1.0);
    CHECK(h2.allFinite());
    CHECK(min_eigenvalue<2>(h2) >= -1e-9 * std::max(1.0, h2.cwiseAbs().maxCoeff()));
  }
}

namespace {

/// The translations of a stencil and its rotation within the bending plane (about the
/// binormal in 3D), as node-space vectors: the motions of a stencil swinging in its plane.
template <int D>
std::vector<Vec<3 * D>> in_plane_rigid_motions(const BendStencil<D>& s) {
  std::vector<Vec<3 * D>> motions;
  const Vec<D> nodes[3] = {s.x0, s.x1, s.x2};
  for (int axis = 0; axis < D; ++axis) {
    Vec<3 * D> translation = Vec<3 * D>::Zero();
    for (int node = 0; node < 3; ++node) translation[node * D + axis] = 1.0;
    motions.push_back(translation);
  }
  Vec<3 * D> rotation;
  if constexpr (D == 2) {
    for (int node = 0; node < 3; ++node) rotation.template segment<2>(2 * node) = Vec2(-nodes[node].y(), nodes[node].x());
  } else {
    const Vec3 b = (s.x1 - s.x0).cross(s.x2 - s.x1).normalized();
    for (int node = 0; node < 3; ++node) rotation.template segment<3>(3 * node) = b.cross(nodes[node]);
  }
  motions.push_back(rotation);
  return motions;
}

template <int D>
void check_bending_modes() {
  for_each_stencil<D>(17, [](const BendStencil<D>& s, double theta, double rest) {
      const double k = 2.0;
      const Mat<3 * D, 3 * D> h = bend_hessian_bending_modes<D>(s, rest, k);
      const double scale = std::max(1.0, h.cwiseAbs().maxCoeff());
      CHECK(min_eigenvalue<D>(h) >= -1e-10 * scale);
      CHECK((h - h.transpose()).cwiseAbs().maxCoeff() <= 1e-12 * scale);
      // No stiffness against translation nor against the stencil's rotation in its plane (the
      // projected exact Hessian resists that rotation of a bent stencil; this one must not).
      if (!(D == 3 && theta < 1e-6))  // below that the plane is rounding noise
        for (const Vec<3 * D>& motion : in_plane_rigid_motions<D>(s))
          CHECK((h * motion).norm() <= 1e-9 * scale * motion.norm());
      // The in-plane part is Gauss-Newton's K g g^T; in 2D that is all of it.
      const Vec<3 * D> g = turning_angle_gradient<D>(s);
      const Mat<3 * D, 3 * D> out_of_plane = h - k * g * g.transpose();
      if constexpr (D == 2) {
        CHECK(out_of_plane.cwiseAbs().maxCoeff() <= 1e-12 * scale);
      } else {
        // The rest acts only across the bending plane: every node moves along the binormal.
        const Vec3 b = (s.x1 - s.x0).cross(s.x2 - s.x1).normalized();
        const Mat3 in_plane = Mat3::Identity() - b * b.transpose();
        for (int a = 0; a < 3; ++a)
          for (int c = 0; c < 3; ++c)
            CHECK((in_plane * out_of_plane.template block<3, 3>(3 * a, 3 * c)).cwiseAbs().maxCoeff() <= 1e-9 * scale);
      }
      // The fused kernel's gradient and energy are the plain ones.
      const BendLocal<D> local = bend_local_bending_modes<D>(s, rest, k);
      CHECK(std::abs(local.energy - bend_energy<D>(s, rest, k)) <= 1e-14 * std::max(1.0, local.energy));
      CHECK((local.gradient - bend_gradient<D>(s, rest, k)).norm() <= 1e-12 * std::max(1.0, local.gradient.norm()));
  });
}

}  // namespace

TEST_CASE("bend bending modes: PSD, no stiffness against in-plane rigid motions, Gauss-Newton in plane, 2D and 3D") {
  check_bending_modes<2>();
  check_bending_modes<3>();
}

TEST_CASE("bend bending modes: at rest and exactly straight it is the exact Hessian") {
  std::mt19937 rng(23);
  for (double rest : {0.3, 1.7}) {
    CAPTURE(rest);
    const BendStencil<3> s = random_stencil<3>(0.7, 1.3, rest, rng);
    const auto c = compare_matrices(bend_hessian_bending_modes<3>(s, rest, 2.0), bend_hessian<3>(s, rest, 2.0), 1e-9, 1e-12);
    INFO(c.message);
    CHECK(c.ok);
    const BendStencil<2> s2 = random_stencil<2>(0.7, 1.3, rest, rng);
    const auto c2 = compare_matrices(bend_hessian_bending_modes<2>(s2, rest, 2.0), bend_hessian<2>(s2, rest, 2.0), 1e-9, 1e-12);
    INFO(c2.message);
    CHECK(c2.ok);
  }
  const Vec3 t = Vec3(1.0, 2.0, -0.5).normalized();
  const BendStencil<3> straight{Vec3::Zero(), 0.8 * t, 1.9 * t};
  const auto c = compare_matrices(bend_hessian_bending_modes<3>(straight, 0.0, 3.0), bend_hessian<3>(straight, 0.0, 3.0), 1e-12);
  INFO(c.message);
  CHECK(c.ok);
}

TEST_CASE("bend bending modes 3D: bending across the plane is as stiff as in the exact Hessian; Gauss-Newton has none") {
  // Equal edges, so moving the end nodes along the binormal and the middle one back is the
  // pure antisymmetric out-of-plane rotation: an eigenvector of the exact Hessian, with
  // eigenvalue K d cot(theta/2) in edge rotations. The kept term must reproduce it.
  std::mt19937 rng(29);
  for (double theta : {1e-3, 0.3, 1.0, 2.5}) {
    CAPTURE(theta);
    const BendStencil<3> s = random_stencil<3>(1.0, 1.0, theta, rng);
    const Vec3 b = (s.x1 - s.x0).cross(s.x2 - s.x1).normalized();
    Vec9 across;
    across << b, -b, b;
    const double k = 2.0;
    const double exact = across.dot(bend_hessian<3>(s, 0.0, k) * across);
    const double kept = across.dot(bend_hessian_bending_modes<3>(s, 0.0, k) * across);
    CHECK(exact > 0.0);
    CHECK(kept == doctest::Approx(exact).epsilon(1e-9));
    CHECK(std::abs(across.dot(bend_hessian_gauss_newton<3>(s, 0.0, k) * across)) <= 1e-12 * exact);
  }
}
