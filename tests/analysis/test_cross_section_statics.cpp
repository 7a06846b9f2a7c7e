// Statics of rods with non-round cross-sections (docs/physics.md, "Cross-sections"): a
// ribbon cantilever bends with the second moment of the axis it bends about.

#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "bristle/analysis/static_solver.hpp"
#include "bristle/model/model.hpp"

using namespace bristle;

namespace {

constexpr double kGravity = 9.81;

/// A ribbon (width 10 x thickness) cantilever along x under gravity -y, clamped at vertices 0
/// and 1 with its clamp point (the middle of the first edge) at the origin, as the elastica
/// builders do: N edges of h = L / (N - 1/2), vertex i at (i - 1/2) h.
struct Ribbon {
  Model model;
  double q = 0.0;  ///< weight per length [N/m]
  int tip = 0;
};

constexpr double kLength = 0.05;  ///< [m] from the clamp point

Ribbon ribbon_cantilever(int dimension, bool twist, const Vec3& material_normal, int segments = 40) {
  const double length = kLength, width = 0.005, thickness = 0.0005;
  Material material;
  material.density = 1000.0;
  material.youngs_modulus = 2e9;
  material.shear_modulus = 0.8e9;
  material.set_cross_section(CrossSection::rectangle(width, thickness));
  const double h = length / (segments - 0.5);
  std::vector<Vec3> vertices;
  for (int i = 0; i <= segments; ++i) vertices.push_back(Vec3((i - 0.5) * h, 0.0, 0.0));
  Ribbon r;
  r.model.dimension = dimension;
  r.model.gravity = Vec3(0.0, -kGravity, 0.0);
  r.model.rods.push_back(make_rod("ribbon", material, vertices, {0, 1}, RestShape::Straight, dimension));
  r.model.rods[0].twist = twist;
  r.model.rods[0].material_normal = material_normal;
  r.model.finalize();
  r.q = material.linear_density() * kGravity;
  r.tip = segments;
  return r;
}

/// The tip's deflection (downwards, positive) after a static solve, and the sideways one.
std::pair<double, double> solve_tip(Ribbon& r) {
  State state = initial_state(r.model);
  const StaticResult result = solve_static(r.model, state, {});
  INFO(result.message);
  REQUIRE(result.ok);
  const Vec3 tip = vertex_position(r.model, state.positions, 0, r.tip);
  return {-tip.y(), std::abs(tip.z())};
}

}  // namespace

TEST_CASE("analysis static: a ribbon cantilever bends with the second moment of the axis it bends about") {
  // Linear beam theory: a cantilever of length L under a load q per length deflects at its
  // tip by w = q L^4 / (8 E I) (Timoshenko and Gere, Mechanics of Materials). With the width
  // vertical (m1 = y) the ribbon bends along its width: I1 = w^3 t / 12; with the width
  // horizontal (m1 = z) along its thickness: I2 = w t^3 / 12, 100 times softer. Both are
  // small deflections (3.7e-5 L and 3.7e-3 L: q L^3 / (E I) = 3e-4 and 0.03), where the
  // linear theory holds to better than 1e-4.
  const double L = kLength, E = 2e9;
  const CrossSection section = CrossSection::rectangle(0.005, 0.0005);
  struct Case {
    const char* name;
    int dimension;
    bool twist;
    Vec3 normal;
    double second_moment;
  };
  const Case cases[] = {
      {"3D, width vertical (stiff)", 3, true, Vec3::UnitY(), section.second_moment_1()},
      {"3D, width horizontal (soft)", 3, true, Vec3::UnitZ(), section.second_moment_2()},
      // In 2D the width points out of the plane: the soft axis, without twist.
      {"2D", 2, false, Vec3::Zero(), section.second_moment_2()},
  };
  for (const Case& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    Ribbon r = ribbon_cantilever(c.dimension, c.twist, c.normal);
    const auto [deflection, sideways] = solve_tip(r);
    const double expected = r.q * std::pow(L, 4) / (8.0 * E * c.second_moment);
    MESSAGE(name << ": tip deflection " << deflection << " m against q L^4 / (8 E I) = " << expected
                   << " m: relative error " << deflection / expected - 1.0 << "; sideways " << sideways << " m");
    CHECK(std::abs(deflection / expected - 1.0) < 0.01);
    CHECK(sideways < 1e-9 * L);
  }
}
