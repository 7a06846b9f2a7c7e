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
/// The terms fall as 1/n^5; 50 odd terms leave a relative error below 1e-10.
double rectangle_torsion_constant(double width, double thickness) {
  const double a = std::max(width, thickness), b = std::min(width, thickness);
  if (!(b > 0.0)) return 0.0;
  double sum = 0.0;
  for (int k = 0; k < 50; ++k) {
    const double n = 2.0 * k + 1.0;
    sum += std::tanh(n * kPi * a / (2.0 * b)) / std::pow(n, 5);
  }
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

// I1 is about m1: the section's extent along m2 enters cubed.
double CrossSection::second_moment_1() const {
  switch (shape) {
    case Shape::Circle: return kPi * std::pow(size1, 4) / 4.0;
    case Shape::Ellipse: return kPi * size1 * std::pow(size2, 3) / 4.0;
    case Shape::Rectangle: return size1 * std::pow(size2, 3) / 12.0;
  }
  return 0.0;
}

double CrossSection::second_moment_2() const {
  switch (shape) {
    case Shape::Circle: return kPi * std::pow(size1, 4) / 4.0;
    case Shape::Ellipse: return kPi * std::pow(size1, 3) * size2 / 4.0;
    case Shape::Rectangle: return std::pow(size1, 3) * size2 / 12.0;
  }
  return 0.0;
}

double CrossSection::torsion_constant() const {
  switch (shape) {
    case Shape::Circle: return kPi * std::pow(size1, 4) / 2.0;
    // Saint-Venant: J = pi a^3 b^3 / (a^2 + b^2) (Timoshenko & Goodier, section 105).
    case Shape::Ellipse: return kPi * std::pow(size1, 3) * std::pow(size2, 3) / (size1 * size1 + size2 * size2);
    case Shape::Rectangle: return rectangle_torsion_constant(size1, size2);
  }
  return 0.0;
}

double shear_modulus_from_poisson(double youngs_modulus, double poissons_ratio) {
  return youngs_modulus / (2.0 * (1.0 + poissons_ratio));
}

}  // namespace bristle
