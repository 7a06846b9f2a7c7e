// Section properties (model/cross_section.hpp) against closed forms and tabulated values.

#include <cmath>
#include <initializer_list>

#include <doctest/doctest.h>

#include "bristle/model/cross_section.hpp"

using namespace bristle;

namespace {
constexpr double kPi = 3.14159265358979323846;
}

TEST_CASE("circle: I = pi r^4 / 4 about both axes, J = 2 I") {
  const CrossSection c = CrossSection::circle(0.002);
  CHECK(c.area() == doctest::Approx(kPi * 4e-6).epsilon(1e-14));
  CHECK(c.second_moment_1() == doctest::Approx(kPi * 1.6e-11 / 4.0).epsilon(1e-14));
  CHECK(c.second_moment_2() == c.second_moment_1());
  CHECK(c.torsion_constant() == doctest::Approx(2.0 * c.second_moment_1()).epsilon(1e-14));
}

TEST_CASE("ellipse: a circle when a = b; I1 about the a axis grows with b^3; J = pi a^3 b^3 / (a^2 + b^2)") {
  const CrossSection round = CrossSection::ellipse(0.003, 0.003), circle = CrossSection::circle(0.003);
  CHECK(round.area() == doctest::Approx(circle.area()).epsilon(1e-14));
  CHECK(round.second_moment_1() == doctest::Approx(circle.second_moment_1()).epsilon(1e-14));
  CHECK(round.torsion_constant() == doctest::Approx(circle.torsion_constant()).epsilon(1e-14));
  const CrossSection flat = CrossSection::ellipse(0.004, 0.001);
  CHECK(flat.second_moment_1() == doctest::Approx(kPi * 0.004 * 1e-9 / 4.0).epsilon(1e-14));
  CHECK(flat.second_moment_2() == doctest::Approx(16.0 * flat.second_moment_1()).epsilon(1e-14));
  // The torsion constant of a non-circular section is below its polar moment.
  CHECK(flat.torsion_constant() < flat.polar_moment());
}

TEST_CASE("rectangle: w t^3 / 12 and the Saint-Venant torsion constant's tabulated coefficients") {
  const CrossSection r = CrossSection::rectangle(0.006, 0.002);
  CHECK(r.area() == doctest::Approx(1.2e-5).epsilon(1e-14));
  CHECK(r.second_moment_1() == doctest::Approx(0.006 * 8e-9 / 12.0).epsilon(1e-14));
  CHECK(r.second_moment_2() == doctest::Approx(2.16e-7 * 0.002 / 12.0).epsilon(1e-14));
  // J = k a b^3 with a the long side; k from Timoshenko & Goodier's table (section 109):
  // a/b = 1: 0.141, 2: 0.229, 3: 0.263, 5: 0.291, 10: 0.312, infinity: 1/3.
  struct Row {
    double ratio, k;
  };
  for (const Row& row : {Row{1.0, 0.1406}, Row{2.0, 0.2287}, Row{3.0, 0.2633}, Row{5.0, 0.2913}, Row{10.0, 0.3123}}) {
    const double b = 0.001, a = row.ratio * b;
    CAPTURE(row.ratio);
    CHECK(CrossSection::rectangle(a, b).torsion_constant() / (a * b * b * b) == doctest::Approx(row.k).epsilon(1e-3));
    // Swapping width and thickness turns the section, not its torsion constant.
    CHECK(CrossSection::rectangle(b, a).torsion_constant() ==
          doctest::Approx(CrossSection::rectangle(a, b).torsion_constant()).epsilon(1e-14));
  }
  // A thin strip: J -> w t^3 / 3 (1 - 0.630 t / w).
  const double w = 0.01, t = 1e-5;
  CHECK(CrossSection::rectangle(w, t).torsion_constant() ==
        doctest::Approx(w * t * t * t / 3.0 * (1.0 - 0.6302 * t / w)).epsilon(1e-6));
}

TEST_CASE("shear modulus from Poisson's ratio: G = E / (2 (1 + nu))") {
  CHECK(shear_modulus_from_poisson(3e9, 0.5) == doctest::Approx(1e9).epsilon(1e-15));
  CHECK(shear_modulus_from_poisson(2.6e9, 0.3) == doctest::Approx(1e9).epsilon(1e-15));
}
