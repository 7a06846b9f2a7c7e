#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "bristle/render/camera.hpp"

using namespace bristle;

namespace {

Bounds box(const Vec3& lo, const Vec3& hi) {
  Bounds b;
  b.extend(lo);
  b.extend(hi);
  return b;
}

// Every corner of b projects inside the image; returns the fraction of the image the box's
// projection spans (the larger of width and height fractions).
double check_inside(const Bounds& b, const Camera& cam, int w, int h) {
  const Projector proj(cam, w, h);
  Vec2 lo = Vec2::Constant(1e300), hi = Vec2::Constant(-1e300);
  for (int c = 0; c < 8; ++c) {
    const Vec3 corner((c & 1) ? b.max.x() : b.min.x(), (c & 2) ? b.max.y() : b.min.y(),
                      (c & 4) ? b.max.z() : b.min.z());
    REQUIRE(proj.depth(corner) > proj.near_depth());
    const Vec2 p = proj.project(corner).pixel;
    CHECK(p.x() >= 0.0);
    CHECK(p.x() <= w);
    CHECK(p.y() >= 0.0);
    CHECK(p.y() <= h);
    lo = lo.cwiseMin(p);
    hi = hi.cwiseMax(p);
  }
  return std::max((hi.x() - lo.x()) / w, (hi.y() - lo.y()) / h);
}

}  // namespace

TEST_CASE("render camera: the target projects to the image centre") {
  for (ProjectionType type : {ProjectionType::Perspective, ProjectionType::Orthographic}) {
    Camera cam;
    cam.type = type;
    cam.position = Vec3(1.0, 2.0, 3.0);
    cam.target = Vec3(0.1, -0.2, 0.3);
    const Projector proj(cam, 640, 480);
    const ScreenPoint s = proj.project(cam.target);
    CHECK(s.pixel.x() == doctest::Approx(320.0));
    CHECK(s.pixel.y() == doctest::Approx(240.0));
    CHECK(s.depth == doctest::Approx((cam.target - cam.position).norm()));
    // Up in the world is up on the screen (smaller y).
    CHECK(proj.project(cam.target + 0.1 * Vec3::UnitY()).pixel.y() < 240.0);
  }
}

TEST_CASE("render camera: fitted cameras frame the whole box") {
  const int w = 960, h = 540;
  SUBCASE("2D: orthographic, looking down -z, y up") {
    const Bounds b = box(Vec3(-0.1, 0.0, 0.0), Vec3(0.3, 0.05, 0.0));
    const Camera cam = fit_camera(b, 2, double(w) / h);
    CHECK(cam.type == ProjectionType::Orthographic);
    CHECK(cam.position.z() > cam.target.z());
    CHECK(cam.position.x() == doctest::Approx(cam.target.x()));
    CHECK(cam.up.y() == doctest::Approx(1.0));
    CHECK(check_inside(b, cam, w, h) > 0.8);
  }
  SUBCASE("3D: perspective 3/4 view from above") {
    const Bounds b = box(Vec3(-0.02, 0.0, -0.01), Vec3(0.02, 0.03, 0.01));
    const Camera cam = fit_camera(b, 3, double(w) / h);
    CHECK(cam.type == ProjectionType::Perspective);
    const Vec3 to_eye = (cam.position - cam.target).normalized();
    CHECK(to_eye.y() > 0.3);  // above
    CHECK(to_eye.x() > 0.3);  // from the side
    CHECK(to_eye.z() > 0.5);  // mostly from the front
    CHECK(check_inside(b, cam, w, h) > 0.6);
  }
  SUBCASE("3D with z up (gravity along -z)") {
    const Bounds b = box(Vec3(-1.0, -1.0, 0.0), Vec3(1.0, 1.0, 3.0));
    const Camera cam = fit_camera(b, 3, 1.0, Vec3::UnitZ());
    CHECK((cam.position - cam.target).normalized().z() > 0.3);
    CHECK(check_inside(b, cam, 500, 500) > 0.6);
  }
  SUBCASE("degenerate boxes still give a usable camera") {
    for (int dim : {2, 3}) {
      const Camera a = fit_camera(Bounds(), dim);
      const Camera p = fit_camera(box(Vec3(1, 2, 3), Vec3(1, 2, 3)), dim);
      CHECK(a.position.allFinite());
      CHECK(p.position.allFinite());
      CHECK((p.position - p.target).norm() > 0.0);
      CHECK(std::isfinite(p.ortho_height));
      CHECK(p.ortho_height > 0.0);
    }
  }
}

TEST_CASE("render camera: frame bounds include the rod radius; scene up follows gravity") {
  Manifest m;
  m.rods.push_back(RodInfo{"a", 2, 0.5});
  Frame f;
  RodFrame r;
  r.positions = {Vec3(0, 0, 0), Vec3(1, 0, 0)};
  f.rods.push_back(r);
  const Bounds b = frame_bounds(m, f);
  CHECK(b.min.x() == doctest::Approx(-0.5));
  CHECK(b.max.x() == doctest::Approx(1.5));
  CHECK(b.max.y() == doctest::Approx(0.5));

  CHECK(scene_up(nlohmann::json{{"gravity", {0, 0, -9.81}}}).isApprox(Vec3::UnitZ()));
  CHECK(scene_up(nlohmann::json{{"gravity", {0, -9.81}}}).isApprox(Vec3::UnitY()));
  CHECK(scene_up(nlohmann::json::object()).isApprox(Vec3::UnitY()));
  CHECK(scene_up(nlohmann::json{{"gravity", {0, 0, 0}}}).isApprox(Vec3::UnitY()));
}

TEST_CASE("render camera: fitting to the points frames a slanted rod tighter than its box") {
  // A diagonal rod: its box has two empty corners, which a box fit must keep in view.
  std::vector<PaddedPoint> points;
  Bounds b;
  for (int i = 0; i <= 20; ++i) {
    const Vec3 p(0.05 * i / 20.0, -0.03 * i / 20.0, 0.01 * i / 20.0);
    points.push_back(PaddedPoint{p, 1e-4});
    b.extend(p, 1e-4);
  }
  const int w = 960, h = 540;
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const Camera loose = fit_camera(b, dim, double(w) / h);
    const Camera tight = fit_camera(b, dim, double(w) / h, Vec3::UnitY(), points);
    const Projector proj(tight, w, h);
    Vec2 lo = Vec2::Constant(1e300), hi = Vec2::Constant(-1e300);
    for (const PaddedPoint& p : points) {
      const Vec2 px = proj.project(p.point).pixel;
      CHECK(px.x() >= 0.0);
      CHECK(px.x() <= w);
      CHECK(px.y() >= 0.0);
      CHECK(px.y() <= h);
      lo = lo.cwiseMin(px);
      hi = hi.cwiseMax(px);
    }
    // The rod spans most of the image in at least one direction.
    CHECK(std::max((hi.x() - lo.x()) / w, (hi.y() - lo.y()) / h) > 0.75);
    if (dim == 3) {
      CHECK((tight.position - tight.target).norm() < (loose.position - loose.target).norm());
    } else {
      CHECK(tight.ortho_height <= loose.ortho_height);
    }
  }
}
