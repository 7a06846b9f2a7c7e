#include <doctest/doctest.h>

#include "bristle/scene/generators.hpp"

using namespace bristle;

TEST_CASE("scene: straight generator spaces segments + 1 vertices evenly, ends exact") {
  const Vec3 from(0.1, 0.2, 0.3), to(0.7, -0.4, 1.3);
  const auto vertices = straight_rod(from, to, 7);
  REQUIRE(vertices.size() == 8);
  CHECK(vertices.front() == from);
  CHECK(vertices.back() == to);
  const double edge = (to - from).norm() / 7;
  for (int k = 0; k < 7; ++k) {
    CHECK((vertices[k + 1] - vertices[k]).norm() == doctest::Approx(edge).epsilon(1e-12));
    // Collinear: every edge points the same way.
    CHECK((vertices[k + 1] - vertices[k]).normalized().dot((to - from).normalized()) ==
          doctest::Approx(1.0).epsilon(1e-12));
  }
  CHECK(straight_rod(from, to, 1).size() == 2);
}
