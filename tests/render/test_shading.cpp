#include <doctest/doctest.h>

#include <cmath>

#include "bristle/render/color.hpp"
#include "bristle/render/shading.hpp"

using namespace bristle;

TEST_CASE("render shading: Kajiya-Kay diffuse is sin(t, l)") {
  const Vec3 t = Vec3::UnitX();
  CHECK(kajiya_kay(t, Vec3::UnitY(), Vec3::UnitZ(), 10.0).diffuse == doctest::Approx(1.0));
  CHECK(kajiya_kay(t, Vec3::UnitX(), Vec3::UnitZ(), 10.0).diffuse == doctest::Approx(0.0));
  const Vec3 l = Vec3(1.0, 1.0, 0.0).normalized();
  CHECK(kajiya_kay(t, l, Vec3::UnitZ(), 10.0).diffuse == doctest::Approx(std::sqrt(0.5)));
}

TEST_CASE("render shading: the highlight peaks when the eye is on the reflection cone") {
  const Vec3 t = Vec3::UnitX();
  const Vec3 l = Vec3(1.0, 1.0, 0.0).normalized();
  // Mirror cone: t.v = -(t.l).
  const Vec3 v_on = Vec3(-1.0, 1.0, 0.0).normalized();
  CHECK(kajiya_kay(t, l, v_on, 40.0).specular == doctest::Approx(1.0));
  // Any direction with the same angle to t is on the cone too.
  const Vec3 v_around = Vec3(-1.0, 0.0, 1.0).normalized();
  CHECK(kajiya_kay(t, l, v_around, 40.0).specular == doctest::Approx(1.0));
  // Off the cone the highlight drops, and more so with a larger exponent.
  const Vec3 v_off = Vec3(0.2, 1.0, 0.0).normalized();
  const double s10 = kajiya_kay(t, l, v_off, 10.0).specular;
  const double s80 = kajiya_kay(t, l, v_off, 80.0).specular;
  CHECK(s10 < 0.9);
  CHECK(s80 < s10);
  // Looking back along the light's own side of the cone: no highlight.
  CHECK(kajiya_kay(t, Vec3::UnitX(), Vec3::UnitX(), 10.0).specular == 0.0);
}

TEST_CASE("render shading: colours stay in [0, 1], tubes are brightest towards the light") {
  Lighting lighting;
  const WorldLights lights = world_lights(lighting, Vec3::UnitX(), Vec3::UnitY(), -Vec3::UnitZ());
  CHECK(lights.key.norm() == doctest::Approx(1.0));
  const Color base = color_from_rgb8(0xe6, 0x9f, 0x00);
  const Vec3 t = Vec3::UnitY();  // a vertical fibre
  const Vec3 v = Vec3::UnitZ();  // seen from the front
  const Color c = hair_color(base, t, v, lights, lighting);
  for (double x : {c.r, c.g, c.b}) {
    CHECK(x >= 0.0);
    CHECK(x <= 1.0);
  }
  // The key light is at the upper left: the left side of the tube (s = +1 with side = -x) is
  // lit, the right side (s = -1) is in shade.
  const Color lit = tube_color(base, t, v, -Vec3::UnitX(), 0.7, lights, lighting);
  const Color dark = tube_color(base, t, v, -Vec3::UnitX(), -0.7, lights, lighting);
  CHECK(lit.r + lit.g + lit.b > dark.r + dark.g + dark.b);
}

TEST_CASE("render colors: parsing, palette and ramp") {
  CHECK(parse_color_hex("#ff8000") == color_from_rgb8(255, 128, 0));
  CHECK(parse_color(nlohmann::json("00ff00")) == color_from_rgb8(0, 255, 0));
  CHECK(parse_color(nlohmann::json::array({0.5, 0.25, 1.0})) == Color{0.5, 0.25, 1.0});
  CHECK_THROWS(parse_color(nlohmann::json("#12345")));
  CHECK_THROWS(parse_color(nlohmann::json::array({0.5, 2.0, 0.0})));
  CHECK_THROWS(parse_color(nlohmann::json(3)));

  const std::vector<Color> given = {Color{1, 0, 0}, Color{0, 1, 0}};
  CHECK(rod_color(3, 10, given) == Color{0, 1, 0});
  CHECK(rod_color(2, 3, {}) == default_palette()[2]);
  // Many rods: a ramp from the first to the last anchor, neighbours close together.
  const Color first = rod_color(0, 100, {}), next = rod_color(1, 100, {});
  CHECK(std::abs(first.r - next.r) + std::abs(first.g - next.g) + std::abs(first.b - next.b) < 0.1);
}
