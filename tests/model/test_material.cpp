#include <doctest/doctest.h>

#include "bristle/model/material.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

TEST_CASE("model material: section properties of a circular cross-section") {
  const Material m = make_material(7850.0, 0.01, 2.0e11);
  CHECK(m.area() == doctest::Approx(kPi * 1e-4).epsilon(1e-15));
  CHECK(m.second_moment() == doctest::Approx(kPi * 1e-8 / 4.0).epsilon(1e-15));
  CHECK(m.linear_density() == doctest::Approx(7850.0 * kPi * 1e-4).epsilon(1e-15));
  CHECK(m.axial_stiffness() == doctest::Approx(2.0e11 * kPi * 1e-4).epsilon(1e-15));
  CHECK(m.bending_stiffness() == doctest::Approx(2.0e11 * kPi * 1e-8 / 4.0).epsilon(1e-15));
  // I scales as r^4, A as r^2.
  const Material twice = make_material(7850.0, 0.02, 2.0e11);
  CHECK(twice.second_moment() / m.second_moment() == doctest::Approx(16.0).epsilon(1e-14));
  CHECK(twice.area() / m.area() == doctest::Approx(4.0).epsilon(1e-14));
}
