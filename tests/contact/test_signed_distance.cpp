// Signed distances of the collider shapes: values at known points, and gradients and Hessians
// against central finite differences at random points away from the medial sets (where
// phi is not differentiable), in every region of each shape (capsule cylinder and caps; box
// faces, edges, corners and inside).

#include <random>

#include <doctest/doctest.h>
#include <Eigen/Geometry>

#include "bristle/contact/signed_distance.hpp"
#include "support/finite_difference.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

/// Checks |grad phi| = 1 and the gradient and Hessian against finite differences at x.
void check_derivatives(const Collider& collider, const Vec3& x) {
  const ScalarFunction phi = [&](const Eigen::VectorXd& p) { return collider_distance(collider, Vec3(p)); };
  const VectorFunction gradient = [&](const Eigen::VectorXd& p) {
    return Eigen::VectorXd(collider_distance_gradient(collider, Vec3(p)));
  };
  const Eigen::VectorXd at = x;
  const double step = 1e-6;
  const Vec3 g = collider_distance_gradient(collider, x);
  CHECK(g.norm() == doctest::Approx(1.0).epsilon(1e-12));
  const Comparison cg = compare_matrices(Eigen::MatrixXd(g), Eigen::MatrixXd(fd_gradient(phi, at, step)), 1e-7, 1.0);
  INFO("x = " << x.transpose() << "; gradient " << cg.message);
  CHECK(cg.ok);
  const Mat3 h = collider_distance_hessian(collider, x);
  CHECK((h - h.transpose()).norm() <= 1e-12 * (1.0 + h.norm()));
  const Comparison ch = compare_matrices(Eigen::MatrixXd(h), fd_jacobian(gradient, at, step), 1e-5, 1.0);
  INFO("Hessian " << ch.message);
  CHECK(ch.ok);
}

Collider plane(const Vec3& point, const Vec3& normal) {
  Collider c;
  c.type = ColliderType::Plane;
  c.point = point;
  c.normal = normal.normalized();
  return c;
}

Collider sphere(const Vec3& center, double radius) {
  Collider c;
  c.type = ColliderType::Sphere;
  c.center = center;
  c.radius = radius;
  return c;
}

Collider capsule(const Vec3& a, const Vec3& b, double radius) {
  Collider c;
  c.type = ColliderType::Capsule;
  c.a = a;
  c.b = b;
  c.radius = radius;
  return c;
}

Collider box(const Vec3& center, const Mat3& rotation, const Vec3& half_extents) {
  Collider c;
  c.type = ColliderType::Box;
  c.center = center;
  c.rotation = rotation;
  c.half_extents = half_extents;
  return c;
}

Vec3 random_point(std::mt19937& rng, double scale) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return scale * Vec3(u(rng), u(rng), u(rng));
}

}  // namespace

TEST_CASE("signed distance: values at known points") {
  const Collider p = plane(Vec3(0, -1, 0), Vec3(0, 2, 0));
  CHECK(collider_distance(p, Vec3(3, 0.5, 7)) == doctest::Approx(1.5));
  CHECK(collider_distance(p, Vec3(0, -2, 0)) == doctest::Approx(-1.0));

  const Collider s = sphere(Vec3(1, 0, 0), 0.5);
  CHECK(collider_distance(s, Vec3(1, 2, 0)) == doctest::Approx(1.5));
  CHECK(collider_distance(s, Vec3(1.25, 0, 0)) == doctest::Approx(-0.25));

  const Collider c = capsule(Vec3(0, 0, 0), Vec3(2, 0, 0), 0.5);
  CHECK(collider_distance(c, Vec3(1, 1, 0)) == doctest::Approx(0.5));    // beside the cylinder
  CHECK(collider_distance(c, Vec3(3, 0, 0)) == doctest::Approx(0.5));    // beyond cap b
  CHECK(collider_distance(c, Vec3(-1, 0, 0)) == doctest::Approx(0.5));   // beyond cap a
  CHECK(collider_distance(c, Vec3(1, 0.2, 0)) == doctest::Approx(-0.3)); // inside

  const Mat3 turn = Eigen::AngleAxisd(0.5 * 3.14159265358979323846, Vec3::UnitZ()).toRotationMatrix();
  const Collider b = box(Vec3(0, 0, 0), turn, Vec3(2, 1, 1));  // long axis now along y
  CHECK(collider_distance(b, Vec3(0, 3, 0)) == doctest::Approx(1.0));
  CHECK(collider_distance(b, Vec3(2, 0, 0)) == doctest::Approx(1.0));
  CHECK(collider_distance(b, Vec3(2, 3, 0)) == doctest::Approx(std::sqrt(2.0)));  // edge region
  CHECK(collider_distance(b, Vec3(0, 0, 0)) == doctest::Approx(-1.0));           // centre: nearest face 1 away
  CHECK(collider_distance(b, Vec3(0, 1.9, 0)) == doctest::Approx(-0.1));
}

TEST_CASE("signed distance: gradients and Hessians against finite differences") {
  std::mt19937 rng(3);
  SUBCASE("plane") {
    const Collider c = plane(Vec3(0.1, -0.2, 0.3), Vec3(0.3, 1.0, -0.2));
    for (int k = 0; k < 20; ++k) check_derivatives(c, random_point(rng, 2.0));
  }
  SUBCASE("sphere, outside and inside") {
    const Collider c = sphere(Vec3(0.2, 0.1, -0.3), 0.7);
    for (int k = 0; k < 40; ++k) {
      const Vec3 x = random_point(rng, 2.0);
      if ((x - c.center).norm() < 0.05) continue;  // the centre is the medial set
      check_derivatives(c, x);
    }
  }
  SUBCASE("capsule: cylinder, both caps, inside") {
    const Vec3 a(-0.5, 0.1, 0.2), b(0.7, -0.3, 0.4);
    const Collider c = capsule(a, b, 0.3);
    const Vec3 axis = (b - a).normalized();
    int cylinder = 0, caps = 0;
    for (int k = 0; k < 80; ++k) {
      const Vec3 x = random_point(rng, 1.5);
      const double t = (x - a).dot(b - a) / (b - a).squaredNorm();
      const Vec3 radial = (x - a) - (x - a).dot(axis) * axis;
      if (radial.norm() < 0.05 || std::abs(t) < 0.02 || std::abs(t - 1.0) < 0.02) continue;  // medial set, seams
      check_derivatives(c, x);
      (t > 0.0 && t < 1.0 ? cylinder : caps) += 1;
    }
    CHECK(cylinder > 10);
    CHECK(caps > 10);
  }
  SUBCASE("oriented box: faces, edges, corners") {
    const Mat3 r = Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()).toRotationMatrix();
    const Vec3 e(0.4, 0.25, 0.6);
    const Collider c = box(Vec3(0.1, 0.2, -0.1), r, e);
    int regions[4] = {0, 0, 0, 0};  // inside, face, edge, corner
    for (int k = 0; k < 600; ++k) {
      const Vec3 x = random_point(rng, 1.2);
      const Vec3 q = r.transpose() * (x - c.center);
      const Vec3 w = q.cwiseAbs() - e;
      // Stay off the seams between regions (some |w_k| near 0) and off the inner diagonals.
      if (w.cwiseAbs().minCoeff() < 0.02) continue;
      int outside = 0;
      for (int j = 0; j < 3; ++j) outside += w[j] > 0.0 ? 1 : 0;
      if (outside == 0) {
        Vec3 sorted = w;
        std::sort(sorted.data(), sorted.data() + 3);
        if (sorted[2] - sorted[1] < 0.02) continue;
      }
      check_derivatives(c, x);
      ++regions[outside == 0 ? 0 : outside];
    }
    for (int region : regions) CHECK(region > 3);
  }
}

TEST_CASE("signed distance: an infinite half extent makes a slab") {
  const double inf = std::numeric_limits<double>::infinity();
  const Collider c = box(Vec3(0, 0, 0), Mat3::Identity(), Vec3(1, 0.5, inf));
  CHECK(collider_distance(c, Vec3(0, 1, 100)) == doctest::Approx(0.5));
  CHECK(collider_distance(c, Vec3(2, 1.5, -1e6)) == doctest::Approx(std::sqrt(2.0)));
  CHECK(collider_distance_gradient(c, Vec3(0, 1, 100)).isApprox(Vec3::UnitY()));
  CHECK(collider_distance(c, Vec3(0.9, 0, 5)) == doctest::Approx(-0.1));
}
