// Section properties (model/cross_section.hpp) against closed forms and tabulated values.

#include <cmath>
#include <initializer_list>

#include <doctest/doctest.h>

#include "bristle/model/cross_section.hpp"
#include "bristle/model/material.hpp"

using namespace bristle;

namespace {
constexpr double kPi = 3.14159265358979323846;
}

TEST_CASE("circle: I = pi r^4 / 4 about both axes, J = 2 I") {
  const CrossSection c = CrossSection::circle(0.002);
  CHECK(c.area() == doctest::Approx(kPi * 4e-6).epsilon(1e-14).scale(0.0));
  CHECK(c.second_moment_1() == doctest::Approx(kPi * 1.6e-11 / 4.0).epsilon(1e-14).scale(0.0));
  CHECK(c.second_moment_2() == c.second_moment_1());
  CHECK(c.torsion_constant() == doctest::Approx(2.0 * c.second_moment_1()).epsilon(1e-14).scale(0.0));
}

TEST_CASE("ellipse: a circle when a = b; I1 = pi a^3 b / 4 (bending along a), I2 = pi a b^3 / 4; J = pi a^3 b^3 / (a^2 + b^2)") {
  const CrossSection round = CrossSection::ellipse(0.003, 0.003), circle = CrossSection::circle(0.003);
  CHECK(round.area() == doctest::Approx(circle.area()).epsilon(1e-14).scale(0.0));
  CHECK(round.second_moment_1() == doctest::Approx(circle.second_moment_1()).epsilon(1e-14).scale(0.0));
  CHECK(round.torsion_constant() == doctest::Approx(circle.torsion_constant()).epsilon(1e-14).scale(0.0));
  const CrossSection flat = CrossSection::ellipse(0.004, 0.001);
  CHECK(flat.second_moment_1() == doctest::Approx(kPi * 6.4e-8 * 0.001 / 4.0).epsilon(1e-14).scale(0.0));
  CHECK(flat.second_moment_2() == doctest::Approx(kPi * 0.004 * 1e-9 / 4.0).epsilon(1e-14).scale(0.0));
  CHECK(flat.second_moment_1() == doctest::Approx(16.0 * flat.second_moment_2()).epsilon(1e-14).scale(0.0));
  CHECK(flat.torsion_constant() == doctest::Approx(kPi * 6.4e-8 * 1e-9 / (1.6e-5 + 1e-6)).epsilon(1e-14).scale(0.0));
  // The torsion constant of a non-circular section is below its polar moment.
  CHECK(flat.torsion_constant() < flat.polar_moment());
  CHECK(flat.anisotropic());
  CHECK_FALSE(round.anisotropic());
  CHECK(flat.outer_radius() == 0.004);
}

TEST_CASE("rectangle: w t^3 / 12 and the Saint-Venant torsion constant's tabulated coefficients") {
  const CrossSection r = CrossSection::rectangle(0.006, 0.002);
  CHECK(r.area() == doctest::Approx(1.2e-5).epsilon(1e-14).scale(0.0));
  // I1 = w^3 t / 12 (bending along the width), I2 = w t^3 / 12 (along the thickness).
  CHECK(r.second_moment_1() == doctest::Approx(2.16e-7 * 0.002 / 12.0).epsilon(1e-14).scale(0.0));
  CHECK(r.second_moment_2() == doctest::Approx(0.006 * 8e-9 / 12.0).epsilon(1e-14).scale(0.0));
  CHECK(r.outer_radius() == 0.003);
  CHECK(r.anisotropic());
  CHECK_FALSE(CrossSection::rectangle(0.002, 0.002).anisotropic());
  // J = k a b^3 with a the long side; k from Timoshenko & Goodier's table (section 109):
  // a/b = 1: 0.141, 2: 0.229, 3: 0.263, 5: 0.291, 10: 0.312, infinity: 1/3.
  struct Row {
    double ratio, k;
  };
  for (const Row& row : {Row{1.0, 0.1406}, Row{2.0, 0.2287}, Row{3.0, 0.2633}, Row{5.0, 0.2913}, Row{10.0, 0.3123}}) {
    const double b = 0.001, a = row.ratio * b;
    CAPTURE(row.ratio);
    CHECK(CrossSection::rectangle(a, b).torsion_constant() / (a * b * b * b) == doctest::Approx(row.k).epsilon(1e-3).scale(0.0));
    // Swapping width and thickness turns the section, not its torsion constant.
    CHECK(CrossSection::rectangle(b, a).torsion_constant() ==
          doctest::Approx(CrossSection::rectangle(a, b).torsion_constant()).epsilon(1e-14).scale(0.0));
  }
  // Against the series summed term by term here (Timoshenko & Goodier section 109, n odd to
  // 200001: the tail left out is below 1e-22), for aspect ratios the table does not list.
  for (const double ratio : {1.0, 1.5, 4.0, 7.0, 25.0}) {
    const double b = 0.002, a = ratio * b;
    double sum = 0.0;
    for (int n = 200001; n >= 1; n -= 2) sum += std::tanh(n * kPi * a / (2.0 * b)) / std::pow(n, 5);
    const double series = a * b * b * b / 3.0 * (1.0 - 192.0 / std::pow(kPi, 5) * (b / a) * sum);
    CAPTURE(ratio);
    CHECK(CrossSection::rectangle(b, a).torsion_constant() == doctest::Approx(series).epsilon(1e-14).scale(0.0));
  }
  // A thin strip: J -> w t^3 / 3 (1 - 0.630 t / w).
  const double w = 0.01, t = 1e-5;
  CHECK(CrossSection::rectangle(w, t).torsion_constant() ==
        doctest::Approx(w * t * t * t / 3.0 * (1.0 - 0.6302 * t / w)).epsilon(1e-6).scale(0.0));
}

TEST_CASE("material: the section it uses, its radius for contact, and its stiffnesses") {
  Material m;
  m.density = 1000.0;
  m.youngs_modulus = 1e9;
  m.radius = 0.001;
  // No section given: the circle of the radius.
  CHECK(m.section().shape == CrossSection::Shape::Circle);
  CHECK(m.area() == doctest::Approx(kPi * 1e-6).epsilon(1e-15).scale(0.0));
  CHECK(m.twisting_stiffness() == doctest::Approx(1e9 / 3.0 * kPi * 1e-12 / 2.0).epsilon(1e-14).scale(0.0));
  CHECK(m.rotational_inertia() == doctest::Approx(1000.0 * kPi * 1e-12 / 2.0).epsilon(1e-14).scale(0.0));
  // A ribbon: contact and rendering see its half width; rods without frames bend with
  // I2 = w t^3 / 12 (the width out of a 2D scene's plane).
  m.set_cross_section(CrossSection::rectangle(0.01, 0.001));
  CHECK(m.radius == 0.005);
  CHECK(m.area() == doctest::Approx(1e-5).epsilon(1e-14).scale(0.0));
  CHECK(m.second_moment() == doctest::Approx(0.01 * 1e-9 / 12.0).epsilon(1e-14).scale(0.0));
  CHECK(m.linear_density() == doctest::Approx(1e-2).epsilon(1e-14).scale(0.0));
  CHECK(m.rotational_inertia() == doctest::Approx(1000.0 * (1e-6 * 0.001 + 0.01 * 1e-9) / 12.0).epsilon(1e-14).scale(0.0));
  CHECK(m.twisting_stiffness() == doctest::Approx(m.shear() * m.section().torsion_constant()).epsilon(1e-15).scale(0.0));
}

TEST_CASE("shear modulus from Poisson's ratio: G = E / (2 (1 + nu))") {
  CHECK(shear_modulus_from_poisson(3e9, 0.5) == doctest::Approx(1e9).epsilon(1e-15).scale(0.0));
  CHECK(shear_modulus_from_poisson(2.6e9, 0.3) == doctest::Approx(1e9).epsilon(1e-15).scale(0.0));
}
