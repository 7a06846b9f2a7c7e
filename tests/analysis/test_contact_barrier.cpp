#include <cmath>
#include <limits>

#include <doctest/doctest.h>

#include <Eigen/Eigenvalues>

#include "bristle/analysis/contact_barrier.hpp"
#include "bristle/contact/signed_distance.hpp"
#include "bristle/integrator/assembly.hpp"
#include "support/finite_difference.hpp"

using namespace bristle;

TEST_CASE("analysis contact barrier: b, b' and b'' agree with finite differences; C2 at dhat, infinite at 0") {
  const double dhat = 1e-5;
  for (double ratio : {1e-3, 0.01, 0.1, 0.5, 0.9, 0.999}) {
    CAPTURE(ratio);
    const double d = ratio * dhat, step = 1e-6 * d;
    const BarrierValue v = barrier_function(d, dhat);
    const double db = (barrier_function(d + step, dhat).b - barrier_function(d - step, dhat).b) / (2.0 * step);
    const double d2b = (barrier_function(d + step, dhat).db - barrier_function(d - step, dhat).db) / (2.0 * step);
    CHECK(v.b > 0.0);
    CHECK(v.db < 0.0);
    CHECK(v.d2b > 0.0);
    CHECK(v.db == doctest::Approx(db).epsilon(1e-6));
    CHECK(v.d2b == doctest::Approx(d2b).epsilon(1e-6));
  }
  // At and beyond dhat everything is zero; just below it, everything is nearly zero.
  const BarrierValue at = barrier_function(dhat, dhat), near = barrier_function(dhat * (1 - 1e-6), dhat);
  CHECK(at.b == 0.0);
  CHECK(at.db == 0.0);
  CHECK(at.d2b == 0.0);
  CHECK(std::abs(near.d2b) < 1e-5);
  CHECK(std::isinf(barrier_function(0.0, dhat).b));
  CHECK(std::isinf(barrier_function(-1e-7, dhat).b));
}

namespace {

/// A 3D rod of three vertices (the first fixed) with its second vertex just above a plane
/// and its third just outside a sphere, both within the barrier's reach (dhat = 1e-5 m).
Model touching_model() {
  Material material;
  material.radius = 1e-3;
  material.density = 1000.0;
  material.youngs_modulus = 1e9;
  const Vec3 center(0.004, 0.005, 0.0);
  const Vec3 v2 = center + (1e-3 + 1e-3 + 6e-6) * Vec3(0.3, 1.0, 0.2).normalized();
  Model model;
  model.dimension = 3;
  model.rods.push_back(make_rod("r", material, {Vec3(0.0, 0.01, 0.0), Vec3(0.002, 1e-3 + 4e-6, 0.0), v2}, {0},
                                RestShape::Initial, 3));
  Collider plane;
  plane.type = ColliderType::Plane;
  Collider sphere;
  sphere.type = ColliderType::Sphere;
  sphere.center = center;
  sphere.radius = 1e-3;
  model.colliders = {plane, sphere};
  model.finalize();
  return model;
}

}  // namespace

TEST_CASE("analysis contact barrier: gradient and exact Hessian agree with finite differences; projected is PSD") {
  const Model model = touching_model();
  const double force_scale = 1e-3;
  const ContactBarrier barrier(model, force_scale);
  REQUIRE(barrier.enabled());
  const VecX x0 = initial_state(model).positions;
  REQUIRE(std::isfinite(barrier.energy(x0)));
  const BarrierContacts touching = barrier.contacts(x0);
  CHECK(touching.contacts == 2);
  CHECK(touching.min_gap == doctest::Approx(4e-6).epsilon(1e-6));

  // Free DOFs are 3..8 (vertex 0 is fixed); the free-free matrix is 6 x 6.
  SystemAssembler assembler(model);
  auto barrier_gradient = [&](const VecX& x, HessianProjection projection, SparseMatrix* matrix) {
    VecX g = VecX::Zero(x.size());
    if (matrix) {
      VecX ignored;
      assembler.assemble(x, 0.0, HessianProjection::Exact, 1.0, ignored);
      *matrix = assembler.matrix();
      std::fill(matrix->valuePtr(), matrix->valuePtr() + matrix->nonZeros(), 0.0);
    }
    barrier.add(x, projection, g, matrix);
    return g;
  };
  auto energy_of_free = [&](const Eigen::VectorXd& free) {
    VecX x = x0;
    x.tail(6) = free;
    return barrier.energy(x);
  };
  auto gradient_of_free = [&](const Eigen::VectorXd& free) -> Eigen::VectorXd {
    VecX x = x0;
    x.tail(6) = free;
    return barrier_gradient(x, HessianProjection::Exact, nullptr).tail(6);
  };
  const double step = 1e-9;  // far below the gaps (4e-6 and 6e-6 m)
  SparseMatrix exact;
  const VecX g = barrier_gradient(x0, HessianProjection::Exact, &exact);
  CHECK(g.head(3).norm() == 0.0);  // nothing on the fixed vertex
  const auto gradient_check =
      test::compare_matrices(g.tail(6), test::fd_gradient(energy_of_free, x0.tail(6), step), 1e-6);
  INFO(gradient_check.message);
  CHECK(gradient_check.ok);
  const auto hessian_check =
      test::compare_matrices(Eigen::MatrixXd(exact), test::fd_jacobian(gradient_of_free, x0.tail(6), step), 1e-5);
  INFO(hessian_check.message);
  CHECK(hessian_check.ok);

  SparseMatrix projected;
  barrier_gradient(x0, HessianProjection::Projected, &projected);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen{Eigen::MatrixXd(projected)};
  CHECK(eigen.eigenvalues().minCoeff() >= -1e-12 * eigen.eigenvalues().cwiseAbs().maxCoeff());
  // The exact one has the sphere's curvature term b' H_phi <= 0: it differs from the projected.
  CHECK((Eigen::MatrixXd(exact) - Eigen::MatrixXd(projected)).norm() > 0.0);
}

TEST_CASE("analysis contact barrier: lift_out moves penetrating free vertices out, and reports what it cannot") {
  const Model model = touching_model();
  const ContactBarrier barrier(model, 1e-3);
  VecX x = initial_state(model).positions;
  x[4] = -5e-4;  // vertex 1's centre below the plane
  CHECK(std::isinf(barrier.energy(x)));
  CHECK(barrier.lift_out(x) == "");
  CHECK(std::isfinite(barrier.energy(x)));
  CHECK(x[4] - 1e-3 == doctest::Approx(0.5e-5).epsilon(1e-6));  // gap dhat / 2
  CHECK(x[3] == 0.002);  // moved along the normal only

  // A free vertex inside a box that fills the space between two planes cannot get out of
  // both: named in the message.
  Model wedged = touching_model();
  Collider floor, ceiling;
  floor.type = ceiling.type = ColliderType::Plane;
  floor.point = Vec3(0.0, 0.0, 0.0);
  ceiling.point = Vec3(0.0, 0.0015, 0.0);
  ceiling.normal = -Vec3::UnitY();
  wedged.colliders = {floor, ceiling};
  const ContactBarrier squeezed(wedged, 1e-3);
  VecX y = initial_state(wedged).positions;
  const std::string message = squeezed.lift_out(y);
  CAPTURE(message);
  CHECK(message.find("vertex 1 of rod 'r'") != std::string::npos);
}
