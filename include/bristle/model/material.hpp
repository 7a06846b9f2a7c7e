#pragma once

#include "bristle/model/cross_section.hpp"

namespace bristle {

/// An isotropic rod material and its cross-section (interface.md section 2; sections other
/// than a circle: docs/physics.md, "Cross-sections").
struct Material {
  double density = 0.0;         ///< [kg/m^3]
  /// The radius of the round tube contact, rendering and brush spacing see [m]: the circle's
  /// radius, or for another section its larger half extent (set_cross_section keeps it so).
  double radius = 0.0;
  double youngs_modulus = 0.0;  ///< [Pa]
  /// G [Pa]: resists twist (rods with twist only). 0: from Poisson's ratio 0.5,
  /// G = E / (2 (1 + nu)) = E / 3 (the scene's default, interface.md section 2).
  double shear_modulus = 0.0;
  /// The cross-section; the default (size zero) means the circle of `radius`. Use
  /// set_cross_section to give another one.
  CrossSection cross_section;

  /// The shear modulus in use [Pa].
  double shear() const { return shear_modulus > 0.0 ? shear_modulus : youngs_modulus / 3.0; }

  /// The section in use: `cross_section`, or the circle of `radius` when it is unset.
  CrossSection section() const {
    return cross_section.size1 > 0.0 ? cross_section : CrossSection::circle(radius);
  }
  /// Sets the section and `radius` to its larger half extent.
  void set_cross_section(const CrossSection& s) {
    cross_section = s;
    radius = s.outer_radius();
  }

  /// Cross-section area A [m^2] (pi r^2 for a circle).
  double area() const { return section().area(); }
  /// The one second moment of a rod without material frames [m^4]: pi r^4 / 4 for a circle.
  /// For other sections it is I2 (docs/physics.md, "Cross-sections"): in 2D the section's
  /// first axis (a, the width) points out of the plane, so in-plane bending moves the rod
  /// along the second (b, the thickness). In 3D an anisotropic section needs twist (the
  /// scene loader refuses it otherwise), and rods with twist use I1 and I2 separately.
  double second_moment() const { return section().second_moment_2(); }
  /// Mass per length rho A [kg/m].
  double linear_density() const { return density * area(); }
  /// Axial stiffness E A [N].
  double axial_stiffness() const { return youngs_modulus * area(); }
  /// Bending stiffness E I [N m^2] of a rod without material frames (second_moment()).
  double bending_stiffness() const { return youngs_modulus * second_moment(); }
  /// Twisting stiffness G J [N m^2] (Saint-Venant torsion constant J of the section).
  double twisting_stiffness() const { return shear() * section().torsion_constant(); }
  /// Rotational inertia per length about the rod's axis, rho (I1 + I2) [kg m].
  double rotational_inertia() const { return density * section().polar_moment(); }
};

}  // namespace bristle
