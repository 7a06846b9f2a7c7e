#pragma once

namespace bristle {

/// An isotropic rod material with a circular cross-section (interface.md section 2).
struct Material {
  double density = 0.0;         ///< [kg/m^3]
  double radius = 0.0;          ///< [m]
  double youngs_modulus = 0.0;  ///< [Pa]
  /// G [Pa]: resists twist (rods with twist only). 0: from Poisson's ratio 0.5,
  /// G = E / (2 (1 + nu)) = E / 3 (the scene's default, interface.md section 2).
  double shear_modulus = 0.0;

  /// The shear modulus in use [Pa].
  double shear() const { return shear_modulus > 0.0 ? shear_modulus : youngs_modulus / 3.0; }

  /// Cross-section area A = pi r^2 [m^2].
  double area() const;
  /// Second moment of area I = pi r^4 / 4 [m^4].
  double second_moment() const;
  /// Mass per length rho A [kg/m].
  double linear_density() const { return density * area(); }
  /// Axial stiffness E A [N].
  double axial_stiffness() const { return youngs_modulus * area(); }
  /// Bending stiffness E I [N m^2].
  double bending_stiffness() const { return youngs_modulus * second_moment(); }
};

}  // namespace bristle
