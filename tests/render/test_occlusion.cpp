#include <doctest/doctest.h>

#include <cmath>

#include "bristle/render/occlusion.hpp"

using namespace bristle;

TEST_CASE("render occlusion: a long rod overhead hides r / d of the sky, split or whole") {
  const Vec3 p = Vec3::Zero(), n = Vec3::UnitY();
  const double r = 0.001, d = 0.01;
  // A rod 100 d long, parallel to the surface, straight above p: the strip factor sin(alpha).
  const Vec3 a(-1.0, d, 0.0), b(1.0, d, 0.0);
  const double whole = segment_occlusion(p, n, a, b, r);
  CHECK(whole == doctest::Approx(r / d).epsilon(0.01));
  // Cut at any point, the two halves' factors add up to the whole's.
  for (double cut : {-0.3, 0.0, 0.004, 0.5}) {
    CAPTURE(cut);
    const Vec3 c(cut, d, 0.0);
    CHECK(segment_occlusion(p, n, a, c, r) + segment_occlusion(p, n, c, b, r) == doctest::Approx(whole).epsilon(1e-9));
  }
}

TEST_CASE("render occlusion: nearer hides more; behind the surface, far away or inside") {
  const Vec3 p = Vec3::Zero(), n = Vec3::UnitY();
  const double r = 0.001;
  const auto above = [&](double h, double x) {
    return segment_occlusion(p, n, Vec3(x, h, -0.05), Vec3(x, h, 0.05), r);
  };
  CHECK(above(0.002, 0.0) > above(0.004, 0.0));
  CHECK(above(0.002, 0.0) > above(0.002, 0.004));  // off to the side, seen at a slant
  CHECK(above(-0.002, 0.0) == 0.0);                // under the surface: hides nothing of its sky
  CHECK(above(1.0, 0.0) < 0.002);
  CHECK(segment_occlusion(p, n, Vec3(-0.01, 0.0, 0.0), Vec3(0.01, 0.0, 0.0), r) == 1.0);  // p inside
  // A rod lying on the surface (touching) darkens it strongly next to the contact line.
  CHECK(segment_occlusion(Vec3(0.0, 0.0, 0.0015), n, Vec3(-0.05, r, 0.0), Vec3(0.05, r, 0.0), r) > 0.2);
  // Degenerate inputs.
  CHECK(segment_occlusion(p, n, Vec3(0.0, 0.01, 0.0), Vec3(0.0, 0.01, 0.0), r) > 0.0);  // a sphere
  CHECK(segment_occlusion(p, n, Vec3(0.0, 0.01, 0.0), Vec3(0.0, 0.02, 0.0), 0.0) == 0.0);
  // Always in [0, 1].
  for (double h : {0.0011, 0.003, 0.1})
    for (double x : {-0.01, 0.0, 0.002}) {
      const double f = above(h, x);
      CHECK(f >= 0.0);
      CHECK(f <= 1.0);
    }
}
