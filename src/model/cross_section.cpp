/// Section properties (include/bristle/model/cross_section.hpp); derivations and sources in
/// docs/physics.md, "Cross-sections".

#include "bristle/model/cross_section.hpp"

#include <algorithm>
#include <cmath>

namespace bristle {
namespace {

constexpr double kPi = 3.14159265358979323846;

/// Saint-Venant's series for a rectangle of long side a and short side b (Timoshenko & Goodier,
/// Theory of Elasticity, section 109):
///   J = a b^3 / 3 [1 - (192 / pi^5) (b / a) sum_{n = 1, 3, 5, ...} tanh(n pi a / (2 b)) / n^5].
/// With tanh = 1 - 2 / (exp(2 x) + 1), the sum is sum_{n odd} 1/n^5 = (1 - 2^-5) zeta(5) minus
/// sum_{n odd} 2 / ((exp(n pi a / b) + 1) n^5), whose terms fall below 1e-60 of the first by
/// n = 45 (a >= b): exact to rounding, where the plain series truncated after 50 terms is
/// off by 1e-9.
double rectangle_torsion_constant(double width, double thickness) {
  const double a = std::max(width, thickness), b = std::min(width, thickness);
  if (!(b > 0.0)) return 0.0;
  constexpr double kZeta5 = 1.0369277551433699263;  // zeta(5)
  double correction = 0.0;
  for (int n = 45; n >= 1; n -= 2)  // smallest terms first
    correction += 2.0 / ((std::exp(n * kPi * a / b) + 1.0) * std::pow(n, 5));
  const double sum = (1.0 - 1.0 / 32.0) * kZeta5 - correction;
  return a * b * b * b / 3.0 * (1.0 - 192.0 / std::pow(kPi, 5) * (b / a) * sum);
}

}  // namespace

double CrossSection::area() const {
  switch (shape) {
    case Shape::Circle: return kPi * size1 * size1;
    case Shape::Ellipse: return kPi * size1 * size2;
    case Shape::Rectangle: return size1 * size2;
  }
  return 0.0;
}

// I1 = int (y . m1)^2 dA: the extent along m1 (a, the width) enters cubed.
double CrossSection::second_moment_1() const {
  switch (shape) {
    case Shape::Circle: return 0.25 * kPi * size1 * size1 * size1 * size1;
    case Shape::Ellipse: return kPi * std::pow(size1, 3) * size2 / 4.0;
    case Shape::Rectangle: return std::pow(size1, 3) * size2 / 12.0;
  }
  return 0.0;
}

// I2 = int (y . m2)^2 dA: the extent along m2 (b, the thickness) enters cubed.
double CrossSection::second_moment_2() const {
  switch (shape) {
    case Shape::Circle: return 0.25 * kPi * size1 * size1 * size1 * size1;
    case Shape::Ellipse: return kPi * size1 * std::pow(size2, 3) / 4.0;
    case Shape::Rectangle: return size1 * std::pow(size2, 3) / 12.0;
  }
  return 0.0;
}

double CrossSection::torsion_constant() const {
  switch (shape) {
    case Shape::Circle: return 2.0 * second_moment_1();  // the polar moment
    // Saint-Venant: J = pi a^3 b^3 / (a^2 + b^2) (Timoshenko & Goodier, section 105).
    case Shape::Ellipse: return kPi * std::pow(size1, 3) * std::pow(size2, 3) / (size1 * size1 + size2 * size2);
    case Shape::Rectangle: return rectangle_torsion_constant(size1, size2);
  }
  return 0.0;
}

const char* CrossSection::type_name() const {
  switch (shape) {
    case Shape::Circle: return "circle";
    case Shape::Ellipse: return "ellipse";
    case Shape::Rectangle: return "rectangle";
  }
  return "circle";
}

double shear_modulus_from_poisson(double youngs_modulus, double poissons_ratio) {
  return youngs_modulus / (2.0 * (1.0 + poissons_ratio));
}

}  // namespace bristle
