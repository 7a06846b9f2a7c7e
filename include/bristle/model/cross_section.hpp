#pragma once
/// Section properties of a rod's cross-section: area, the two principal second moments of
/// area and the torsion constant, for the shapes a scene can name (issue 15: circle, ellipse,
/// rectangle). Formulas and their sources: docs/physics.md, "Cross-sections".
///
/// Axes: the first material director m1 is the section's first axis (the ellipse's `a`, the
/// rectangle's `width`), m2 the second. I_k = integral of (y . m_k)^2 over the section: I1
/// resists bending that moves the rod along m1 (the material curvature kappa1 of
/// energy/material_bend.hpp, whose stiffness is E I1 / l), I2 bending along m2 (kappa2).
/// In the engineering naming I1 is the second moment *about* m2 and I2 the one about m1.

#include <algorithm>

namespace bristle {

struct CrossSection {
  enum class Shape { Circle, Ellipse, Rectangle };
  Shape shape = Shape::Circle;
  /// Circle: radius, radius. Ellipse: semi-axes a (along m1), b (along m2).
  /// Rectangle: full width (along m1), full thickness (along m2). [m]
  /// A default-constructed section has size zero (Material reads it as "the circle of
  /// Material::radius").
  double size1 = 0.0, size2 = 0.0;

  static CrossSection circle(double radius) { return {Shape::Circle, radius, radius}; }
  static CrossSection ellipse(double a, double b) { return {Shape::Ellipse, a, b}; }
  static CrossSection rectangle(double width, double thickness) { return {Shape::Rectangle, width, thickness}; }

  double area() const;            ///< [m^2]
  double second_moment_1() const; ///< I1 = int (y . m1)^2 dA, resists kappa1 [m^4]
  double second_moment_2() const; ///< I2 = int (y . m2)^2 dA, resists kappa2 [m^4]
  /// Polar moment I1 + I2 [m^4]: the section's rotational inertia per length is rho (I1 + I2).
  double polar_moment() const { return second_moment_1() + second_moment_2(); }
  /// Saint-Venant torsion constant J [m^4]: the twisting stiffness is G J. Equal to the polar
  /// moment only for a circle.
  double torsion_constant() const;
  /// Whether the two bending stiffnesses differ (I1 != I2): an ellipse with a != b, a
  /// rectangle with width != thickness. Such a section needs material frames to bend right.
  bool anisotropic() const { return shape != Shape::Circle && size1 != size2; }
  /// A circle's and an ellipse's outer radius along m1 and m2 (half the width and thickness of
  /// a rectangle) [m].
  double half_extent_1() const { return shape == Shape::Rectangle ? 0.5 * size1 : size1; }
  double half_extent_2() const { return shape == Shape::Rectangle ? 0.5 * size2 : size2; }
  /// The larger half extent: the radius of the round tube contact and rendering see [m].
  double outer_radius() const { return std::max(half_extent_1(), half_extent_2()); }
  /// "circle", "ellipse" or "rectangle" (the scene's `cross_section.type`).
  const char* type_name() const;
};

/// Shear modulus from Young's modulus and Poisson's ratio, G = E / (2 (1 + nu)) [Pa].
double shear_modulus_from_poisson(double youngs_modulus, double poissons_ratio);

}  // namespace bristle
