#pragma once
/// Model builders for the validation tests: straight clamped-free rods whose effective clamp
/// (the midpoint of the first edge, physics-notes.md) sits at the origin, with material
/// constants chosen from the dimensionless numbers the continuum theory uses.
///
/// N edges of length h = L / (N - 1/2): vertex i at (i - 1/2) h along `direction`, vertices 0
/// and 1 fixed, so the rod has length L measured from the clamp point and every tip position
/// compares directly with the elastica's (in units of L).

#include <cmath>
#include <vector>

#include "bristle/model/model.hpp"

namespace bristle::test {

struct CantileverSpec {
  int segments = 80;
  int dimension = 2;
  double length = 1.0;           ///< L from the clamp point [m]
  double radius = 1e-3;          ///< [m]; slender: axial strain ~ Gamma r^2 / (4 L^2)
  double youngs_modulus = 1e9;   ///< [Pa]
  double density = 1000.0;       ///< [kg/m^3]; overridden when gamma > 0
  double gamma = 0.0;            ///< rho A g L^3 / (E I); gravity -y of magnitude 9.81
  double alpha = 0.0;            ///< P L^2 / (E I); a tip load P along -y
  Vec3 direction = Vec3::UnitX();  ///< the rod's axis (unit)
};

struct Cantilever {
  Model model;
  double h = 0.0;        ///< edge length [m]
  double L = 0.0;        ///< length from the clamp [m]
  double EI = 0.0;       ///< [N m^2]
  double rhoA = 0.0;     ///< [kg/m]
  int tip = 0;           ///< index of the tip vertex
};

inline Cantilever make_cantilever(const CantileverSpec& spec) {
  constexpr double kGravity = 9.81;
  Cantilever c;
  c.L = spec.length;
  c.h = spec.length / (spec.segments - 0.5);
  c.tip = spec.segments;
  Material material;
  material.radius = spec.radius;
  material.youngs_modulus = spec.youngs_modulus;
  material.density = spec.density;
  c.EI = material.bending_stiffness();
  if (spec.gamma > 0.0)
    material.density = spec.gamma * c.EI / (material.area() * kGravity * std::pow(c.L, 3));
  c.rhoA = material.linear_density();

  std::vector<Vec3> vertices;
  for (int i = 0; i <= spec.segments; ++i) {
    const double s = (i - 0.5) * c.h;
    vertices.push_back(s * spec.direction);
  }
  c.model.dimension = spec.dimension;
  c.model.rods.push_back(make_rod("rod", material, vertices, {0, 1}, RestShape::Straight, spec.dimension));
  if (spec.gamma > 0.0) c.model.gravity = Vec3(0.0, -kGravity, 0.0);
  if (spec.alpha > 0.0) {
    PointLoad load;
    load.rod = 0;
    load.vertex = c.tip;
    load.force = Vec3(0.0, -spec.alpha * c.EI / (c.L * c.L), 0.0);
    c.model.loads.push_back(load);
  }
  c.model.finalize();
  return c;
}

}  // namespace bristle::test
