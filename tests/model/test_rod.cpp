// make_rod and the per-rod quantities of interface.md section 2: rest lengths, rest angles
// (signed in 2D, unsigned in 3D), lumped masses, stiffnesses, fixed vertices.

#include <numeric>
#include <random>

#include <doctest/doctest.h>

#include "bristle/energy/bend.hpp"
#include "bristle/model/rod.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

TEST_CASE("model rod: rest lengths and rest angles come from the initial vertices") {
  // A square-cornered path: right, up, left (turns +pi/2, +pi/2), then down-left at 45 deg.
  const std::vector<Vec3> v{Vec3(0, 0, 0), Vec3(2, 0, 0), Vec3(2, 1, 0), Vec3(0.5, 1, 0), Vec3(0, 0.5, 0)};
  SUBCASE("2D: signed turning angles") {
    const Rod rod = rod_from_vertices(v, 2);
    REQUIRE(rod.vertex_count() == 5);
    REQUIRE(rod.edge_count() == 4);
    CHECK(rod.rest_lengths[0] == doctest::Approx(2.0));
    CHECK(rod.rest_lengths[1] == doctest::Approx(1.0));
    CHECK(rod.rest_lengths[2] == doctest::Approx(1.5));
    CHECK(rod.rest_lengths[3] == doctest::Approx(std::sqrt(0.5)));
    REQUIRE(rod.rest_angles.size() == 5u);
    CHECK(rod.rest_angles[0] == 0.0);
    CHECK(rod.rest_angles[1] == doctest::Approx(kPi / 2));
    CHECK(rod.rest_angles[2] == doctest::Approx(kPi / 2));
    CHECK(rod.rest_angles[3] == doctest::Approx(kPi / 4));
    CHECK(rod.rest_angles[4] == 0.0);
    // Mirror image: the signs flip in 2D.
    std::vector<Vec3> mirrored = v;
    for (Vec3& p : mirrored) p.y() = -p.y();
    const Rod m = rod_from_vertices(mirrored, 2);
    for (int i = 1; i < 4; ++i) CHECK(m.rest_angles[i] == doctest::Approx(-rod.rest_angles[i]));
  }
  SUBCASE("3D: unsigned turning angles, the same for the mirror image") {
    std::vector<Vec3> mirrored = v;
    for (Vec3& p : mirrored) p.y() = -p.y();
    const Rod rod = rod_from_vertices(v, 3), m = rod_from_vertices(mirrored, 3);
    CHECK(rod.rest_angles[1] == doctest::Approx(kPi / 2));
    CHECK(rod.rest_angles[3] == doctest::Approx(kPi / 4));
    for (int i = 1; i < 4; ++i) CHECK(m.rest_angles[i] == doctest::Approx(rod.rest_angles[i]));
  }
  SUBCASE("rest = straight keeps the lengths and zeroes the angles") {
    const Rod rod = rod_from_vertices(v, 2, {}, soft_material(), RestShape::Straight);
    CHECK(rod.rest_lengths[2] == doctest::Approx(1.5));
    for (double a : rod.rest_angles) CHECK(a == 0.0);
  }
  SUBCASE("2D drops the third coordinate") {
    std::vector<Vec3> lifted = v;
    for (Vec3& p : lifted) p.z() = 3.0;
    const Rod rod = rod_from_vertices(lifted, 2);
    for (const Vec3& p : rod.initial_positions) CHECK(p.z() == 0.0);
  }
}

TEST_CASE("model rod: lumped masses, stiffnesses and Voronoi lengths") {
  std::mt19937 rng(9);
  const Material material = make_material(1140.0, 1e-3, 3e9);
  for (int dimension : {2, 3}) {
    const Rod rod = rod_from_vertices(random_vertices(9, 0.01, 0.5, dimension, rng), dimension, {}, material);
    const double length = std::accumulate(rod.rest_lengths.begin(), rod.rest_lengths.end(), 0.0);
    CHECK(rod.rest_length() == doctest::Approx(length).epsilon(1e-15));
    double mass = 0.0;
    for (int i = 0; i < rod.vertex_count(); ++i) mass += rod.vertex_mass(i);
    CHECK(mass == doctest::Approx(material.linear_density() * length).epsilon(1e-14));
    CHECK(rod.vertex_mass(0) == doctest::Approx(material.linear_density() * rod.rest_lengths[0] / 2));
    CHECK(rod.vertex_mass(9) == doctest::Approx(material.linear_density() * rod.rest_lengths[8] / 2));
    for (int j = 0; j < rod.edge_count(); ++j)
      CHECK(rod.stretch_stiffness(j) == doctest::Approx(material.axial_stiffness() / rod.rest_lengths[j]));
    for (int i = 1; i + 1 < rod.vertex_count(); ++i) {
      const double l = 0.5 * (rod.rest_lengths[i - 1] + rod.rest_lengths[i]);
      CHECK(rod.vertex_mass(i) == doctest::Approx(material.linear_density() * l));
      CHECK(rod.voronoi_length(i) == doctest::Approx(l));
      CHECK(rod.bend_stiffness(i) == doctest::Approx(material.bending_stiffness() / l));
    }
  }
}

TEST_CASE("model rod: fixed vertices are sorted and unique") {
  const Rod rod = straight_rod(6, Vec3::Zero(), Vec3(1, 0, 0), 3, {4, 0, 1, 4, 0});
  CHECK(rod.fixed == std::vector<int>{0, 1, 4});
  CHECK(rod.is_fixed(0));
  CHECK(rod.is_fixed(1));
  CHECK_FALSE(rod.is_fixed(2));
  CHECK(rod.is_fixed(4));
  CHECK_FALSE(rod.is_fixed(6));
}

TEST_CASE("model rod: a 3D rod straight up to rounding has rest angles exactly zero") {
  // Vertices spaced along a generic direction are collinear only up to rounding. A rest angle
  // of 1e-15 instead of 0 would make straight a cone tip of the unsigned angle and halve the
  // rod's bending stiffness at rest (docs/physics.md); make_rod snaps such angles to zero.
  const Vec3 direction = Vec3(0.3, -0.7, 0.55).normalized();
  std::vector<Vec3> vertices;
  for (int i = 0; i <= 20; ++i) vertices.push_back(Vec3(0.1, 0.2, -0.3) + (0.0137 * i) * direction);
  Material material;
  material.density = 1000.0;
  material.radius = 1e-3;
  material.youngs_modulus = 1e9;
  const Rod rod = make_rod("diagonal", material, vertices, {0, 1}, RestShape::Initial, 3);
  int nonzero_before_snap = 0;
  for (int i = 1; i < 20; ++i) {
    CHECK(rod.rest_angles[i] == 0.0);
    if (turning_angle<3>({vertices[i - 1], vertices[i], vertices[i + 1]}) != 0.0) ++nonzero_before_snap;
  }
  CHECK(nonzero_before_snap > 0);  // the case is real: rounding gives nonzero turning angles
  // A rod that really turns keeps its angle, however small it is above rounding.
  vertices[10] += 1e-9 * Vec3(0.0, 0.0, 1.0).cross(direction);
  const Rod bent = make_rod("bent", material, vertices, {0, 1}, RestShape::Initial, 3);
  CHECK(bent.rest_angles[10] > 1e-8);
}

TEST_CASE("model rod: which twists are held, by default and as twist_fixed says; initial twists") {
  // 6 vertices, 5 edges along x.
  auto rod_with = [](std::vector<int> fixed, Rod::TwistEnd root, Rod::TwistEnd tip) {
    std::vector<Vec3> v;
    for (int i = 0; i < 6; ++i) v.push_back(Vec3(0.01 * i, 0.0, 0.0));
    Rod rod = make_rod("r", steel(), v, std::move(fixed), RestShape::Straight, 3);
    rod.twist = true;
    rod.twist_root = root;
    rod.twist_tip = tip;
    return rod;
  };
  auto held = [](const Rod& rod) {
    std::string s;
    for (int j = 0; j < rod.edge_count(); ++j) s += rod.is_twist_fixed(j) ? 'H' : '-';
    return s;
  };
  using E = Rod::TwistEnd;
  // Default: an edge is held iff both its vertices are fixed.
  CHECK(held(rod_with({0, 1}, E::Default, E::Default)) == "H----");
  CHECK(held(rod_with({0, 1, 2, 4, 5}, E::Default, E::Default)) == "HH--H");
  CHECK(held(rod_with({0}, E::Default, E::Default)) == "-----");
  // A freed clamp frees its whole run of fixed edges (a bearing), and only that end's.
  CHECK(held(rod_with({0, 1, 2, 4, 5}, E::Free, E::Default)) == "----H");
  CHECK(held(rod_with({0, 1, 2, 4, 5}, E::Default, E::Free)) == "HH---");
  // A held pin holds its end edge.
  CHECK(held(rod_with({0, 5}, E::Fixed, E::Default)) == "H----");
  CHECK(held(rod_with({0, 5}, E::Fixed, E::Fixed)) == "H---H");
  // Every vertex fixed: both runs cover every edge, held if either end's rule holds it.
  CHECK(held(rod_with({0, 1, 2, 3, 4, 5}, E::Free, E::Default)) == "-----");
  CHECK(held(rod_with({0, 1, 2, 3, 4, 5}, E::Free, E::Fixed)) == "HHHHH");
  // A rod without twist holds no twist.
  Rod plain = rod_with({0, 1}, E::Default, E::Default);
  plain.twist = false;
  CHECK(held(plain) == "-----");
  CHECK(plain.initial_twists().empty());

  // Initial twists: theta_j = rest_twist * (l_1 + ... + l_j), l_i the Voronoi lengths.
  std::vector<Vec3> v = {Vec3(0, 0, 0), Vec3(0.01, 0, 0), Vec3(0.03, 0, 0), Vec3(0.06, 0, 0)};
  Rod uneven = make_rod("u", steel(), v, {}, RestShape::Straight, 3);
  uneven.twist = true;
  CHECK(uneven.initial_twists() == std::vector<double>{0.0, 0.0, 0.0});
  uneven.rest_twist = 10.0;
  const std::vector<double> theta = uneven.initial_twists();
  REQUIRE(theta.size() == 3);
  CHECK(theta[0] == 0.0);
  CHECK(theta[1] == doctest::Approx(10.0 * 0.015).epsilon(1e-14).scale(0.0));
  CHECK(theta[2] == doctest::Approx(10.0 * (0.015 + 0.025)).epsilon(1e-14).scale(0.0));
}
