#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "bristle/render/camera.hpp"
#include "bristle/render/image.hpp"
#include "bristle/render/render_error.hpp"
#include "bristle/render/render_frame.hpp"
#include "bristle/render/shading.hpp"
#include "render/render_test_support.hpp"

using namespace bristle;
using bristle::test::add_straight_rod;
using bristle::test::empty_manifest;
using bristle::test::render_scratch_dir;

namespace {

constexpr double kPi = 3.14159265358979323846;

Rgb8 to_rgb8(const Color& c) {
  return Rgb8{static_cast<std::uint8_t>(std::lround(c.r * 255)),
              static_cast<std::uint8_t>(std::lround(c.g * 255)),
              static_cast<std::uint8_t>(std::lround(c.b * 255))};
}

RenderOptions small_options() {
  RenderOptions o;
  o.width = 320;
  o.height = 200;
  o.background = color_from_rgb8(0x20, 0x40, 0x60);
  return o;
}

// The pixel holding a world point (the view lies below the time stamp band, if any).
Rgb8 pixel_at(const Image& img, const Camera& cam, const RenderOptions& opt, const Vec3& p) {
  const Projector proj = view_projector(cam, opt);
  const Vec2 px = proj.project(p).pixel;
  return img.at(static_cast<int>(std::floor(px.x())), static_cast<int>(std::floor(px.y())));
}

bool all_background(const Image& img, const Rgb8& bg) {
  for (const Rgb8& p : img.pixels) {
    if (p != bg) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("render: a frame's PNG decodes at the requested size, rods drawn, corners background") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    Manifest m = empty_manifest(dim);
    Frame f;
    f.time = 0.12;
    add_straight_rod(m, f, "a", Vec3(-0.01, 0.0, 0.0), Vec3(0.01, 0.004, 0.0), 9, 0.0004);
    add_straight_rod(m, f, "b", Vec3(-0.01, -0.004, 0.0), Vec3(0.01, 0.0, 0.0), 9, 0.0002);
    const RenderOptions opt = small_options();
    const Camera cam = fit_camera(frame_bounds(m, f), dim, view_aspect(opt));
    CHECK(cam.type == (dim == 2 ? ProjectionType::Orthographic : ProjectionType::Perspective));

    const std::string png = render_scratch_dir("frame" + std::to_string(dim)) + "/frame.png";
    render_frame(m, f, {}, cam, opt, png);
    const Image img = read_png(png);
    REQUIRE(img.width == 320);
    REQUIRE(img.height == 200);
    const Rgb8 bg = to_rgb8(opt.background);
    for (const RodFrame& rod : f.rods) {
      for (const Vec3& p : rod.positions) CHECK(pixel_at(img, cam, opt, p) != bg);
    }
    // The time stamp band runs along the top; the bottom corners are far from every rod.
    CHECK(img.at(img.width - 1, img.height - 1) == bg);
    CHECK(img.at(img.width - 1, 0) != bg);
    CHECK(img.at(img.width - 1, time_stamp_band(opt)) == bg);
    CHECK(img.at(0, img.height - 1) == bg);
    // The image written equals the one rendered in memory.
    const Image mem = render_image(m, f, {}, cam, opt);
    CHECK(mem.pixels == img.pixels);
  }
}

TEST_CASE("render: an empty frame is only background") {
  for (int dim : {2, 3}) {
    const Manifest m = empty_manifest(dim);
    const Frame f;
    RenderOptions opt = small_options();
    opt.time_stamp = false;
    const Camera cam = fit_camera(Bounds(), dim);
    const std::string png = render_scratch_dir("empty" + std::to_string(dim)) + "/empty.png";
    render_frame(m, f, {}, cam, opt, png);
    const Image img = read_png(png);
    CHECK(img.width == opt.width);
    CHECK(all_background(img, to_rgb8(opt.background)));
  }
}

TEST_CASE("render: the time stamp is drawn when asked") {
  Manifest m = empty_manifest(3);
  Frame f;
  f.time = 1.234;
  RenderOptions opt = small_options();
  const Camera cam = fit_camera(Bounds(), 3);
  opt.time_stamp = false;
  CHECK(all_background(render_image(m, f, {}, cam, opt), to_rgb8(opt.background)));
  opt.time_stamp = true;
  CHECK_FALSE(all_background(render_image(m, f, {}, cam, opt), to_rgb8(opt.background)));
  CHECK(time_stamp_text(1.234, 0.01) == "t = 1.234 s");
  CHECK(time_stamp_text(0.5, 0.0001) == "t = 0.5000 s");
  CHECK(time_stamp_text(2.0, 0.0) == "t = 2.000 s");
}

TEST_CASE("render: colliders change the pixels where they project") {
  const Manifest m = empty_manifest(3);
  const Frame f;
  RenderOptions opt = small_options();
  opt.time_stamp = false;
  const Rgb8 bg = to_rgb8(opt.background);
  Bounds b;
  b.extend(Vec3(-0.05, 0.0, -0.05));
  b.extend(Vec3(0.05, 0.05, 0.05));
  const Camera cam = fit_camera(b, 3, double(opt.width) / opt.height);

  SUBCASE("sphere") {
    Collider s;
    s.type = ColliderType::Sphere;
    s.center = Vec3(0.0, 0.02, 0.0);
    s.radius = 0.01;
    const Image img = render_image(m, f, {s}, cam, opt);
    CHECK(pixel_at(img, cam, opt, s.center) != bg);
    CHECK(img.at(0, 0) == bg);
    CHECK(img.at(img.width - 1, img.height - 1) == bg);
  }
  SUBCASE("plane") {
    Collider p;
    p.type = ColliderType::Plane;
    p.point = Vec3(0.0, 0.0, 0.0);
    p.normal = Vec3(0.0, 1.0, 0.0);
    const Image img = render_image(m, f, {p}, cam, opt);
    CHECK(pixel_at(img, cam, opt, Vec3(0.0, 0.0, 0.0)) != bg);
    CHECK(pixel_at(img, cam, opt, Vec3(0.03, 0.0, 0.02)) != bg);
    CHECK(img.at(img.width / 2, 0) == bg);  // the sky above the horizon
  }
  SUBCASE("capsule") {
    Collider c;
    c.type = ColliderType::Capsule;
    c.a = Vec3(-0.02, 0.02, 0.0);
    c.b = Vec3(0.02, 0.02, 0.0);
    c.radius = 0.004;
    const Image img = render_image(m, f, {c}, cam, opt);
    CHECK(pixel_at(img, cam, opt, Vec3(0.0, 0.02, 0.0)) != bg);
    CHECK(img.at(0, 0) == bg);
  }
  SUBCASE("box") {
    Collider c;
    c.type = ColliderType::Box;
    c.center = Vec3(0.0, 0.02, 0.0);
    c.half_extents = Vec3(0.01, 0.005, 0.01);
    c.rotation = Eigen::AngleAxisd(0.3, Vec3::UnitY()).toRotationMatrix();
    const Image img = render_image(m, f, {c}, cam, opt);
    CHECK(pixel_at(img, cam, opt, c.center + Vec3(0.0, 0.005, 0.0)) != bg);
    CHECK(img.at(0, 0) == bg);
  }
  SUBCASE("2D plane, sphere and box seen edge-on / face-on") {
    const Manifest m2 = empty_manifest(2);
    const Camera cam2 = fit_camera(b, 2, double(opt.width) / opt.height);
    Collider ground;
    ground.type = ColliderType::Plane;
    ground.point = Vec3(0.0, 0.0, 0.0);
    ground.normal = Vec3(0.0, 1.0, 0.0);
    Collider s;
    s.type = ColliderType::Sphere;
    s.center = Vec3(0.02, 0.03, 0.0);
    s.radius = 0.005;
    Collider box;
    box.type = ColliderType::Box;
    box.center = Vec3(-0.02, 0.03, 0.0);
    box.half_extents = Vec3(0.005, 0.005, 0.0);
    const Image img = render_image(m2, f, {ground, s, box}, cam2, opt);
    CHECK(pixel_at(img, cam2, opt, Vec3(0.0, -0.002, 0.0)) != bg);  // inside the solid half plane
    CHECK(pixel_at(img, cam2, opt, s.center) != bg);
    CHECK(pixel_at(img, cam2, opt, box.center) != bg);
    CHECK(pixel_at(img, cam2, opt, Vec3(0.0, 0.045, 0.0)) == bg);  // open space above
  }
}

TEST_CASE("render: a rod far thinner than a pixel vanishes unless min_line_width widens it") {
  Manifest m = empty_manifest(3);
  Frame f;
  add_straight_rod(m, f, "hair", Vec3(-0.01, 0.0, 0.0), Vec3(0.01, 0.0, 0.0), 5, 1e-9);
  RenderOptions opt = small_options();
  opt.time_stamp = false;
  Bounds b;
  b.extend(Vec3(-0.01, -0.01, -0.01));
  b.extend(Vec3(0.01, 0.01, 0.01));
  const Camera cam = fit_camera(b, 3);
  CHECK(all_background(render_image(m, f, {}, cam, opt), to_rgb8(opt.background)));
  opt.min_line_width = 1.25;
  const Image img = render_image(m, f, {}, cam, opt);
  CHECK(pixel_at(img, cam, opt, Vec3(0.0, 0.0, 0.0)) != to_rgb8(opt.background));
}

TEST_CASE("render: nearer rods are drawn over farther ones, whatever their order") {
  // Looking down -z: a red rod along x at z = 0.002 crosses a blue rod along y at z = 0.
  Camera cam;
  cam.type = ProjectionType::Orthographic;
  cam.position = Vec3(0.0, 0.0, 1.0);
  cam.target = Vec3::Zero();
  cam.ortho_height = 0.03;
  RenderOptions opt = small_options();
  opt.time_stamp = false;
  opt.lighting.specular = 0.0;
  for (bool red_first : {true, false}) {
    CAPTURE(red_first);
    Manifest m = empty_manifest(3);
    Frame f;
    const Color red{0.9, 0.05, 0.05}, blue{0.05, 0.05, 0.9};
    if (red_first) {
      add_straight_rod(m, f, "red", Vec3(-0.01, 0.0, 0.002), Vec3(0.01, 0.0, 0.002), 11, 0.001);
      add_straight_rod(m, f, "blue", Vec3(0.0, -0.01, 0.0), Vec3(0.0, 0.01, 0.0), 11, 0.001);
      opt.palette = {red, blue};
    } else {
      add_straight_rod(m, f, "blue", Vec3(0.0, -0.01, 0.0), Vec3(0.0, 0.01, 0.0), 11, 0.001);
      add_straight_rod(m, f, "red", Vec3(-0.01, 0.0, 0.002), Vec3(0.01, 0.0, 0.002), 11, 0.001);
      opt.palette = {blue, red};
    }
    const Image img = render_image(m, f, {}, cam, opt);
    const Rgb8 c = pixel_at(img, cam, opt, Vec3(0.0, 0.0, 0.0));
    CHECK(c.r > c.b);
    const Rgb8 blue_only = pixel_at(img, cam, opt, Vec3(0.0, 0.006, 0.0));
    CHECK(blue_only.b > blue_only.r);
  }
}

TEST_CASE("render: output is deterministic") {
  Manifest m = empty_manifest(3);
  Frame f;
  for (int i = 0; i < 12; ++i) {
    add_straight_rod(m, f, "r" + std::to_string(i), Vec3(0.001 * i, 0.0, 0.0005 * i),
                     Vec3(0.001 * i + 0.003, 0.02, -0.001 * i), 15, 0.0002);
  }
  Collider s;
  s.type = ColliderType::Sphere;
  s.center = Vec3(0.01, 0.01, 0.01);
  s.radius = 0.004;
  const RenderOptions opt = small_options();
  const Camera cam = fit_camera(frame_bounds(m, f), 3);
  CHECK(render_image(m, f, {s}, cam, opt).pixels == render_image(m, f, {s}, cam, opt).pixels);
}

TEST_CASE("render: mismatched frames and bad sizes are errors") {
  Manifest m = empty_manifest(3);
  Frame f;
  add_straight_rod(m, f, "a", Vec3::Zero(), Vec3::UnitX(), 3, 0.01);
  m.rods.clear();
  const Camera cam = fit_camera(frame_bounds(m, f), 3);
  CHECK_THROWS_AS(render_image(m, f, {}, cam, RenderOptions()), RenderError);
  RenderOptions bad;
  bad.width = 0;
  CHECK_THROWS_AS(render_image(empty_manifest(3), Frame(), {}, cam, bad), RenderError);
  CHECK_THROWS_AS(render_frame(empty_manifest(3), Frame(), {}, cam, RenderOptions(),
                               "/nonexistent-dir/x.png"),
                  RenderError);
  CHECK_THROWS_AS(read_png("/nonexistent-dir/x.png"), RenderError);
}

TEST_CASE("render: PNG round trip through write_png and read_png") {
  Image img;
  img.width = 3;
  img.height = 2;
  img.pixels = {{1, 2, 3}, {250, 128, 0}, {0, 0, 0}, {255, 255, 255}, {7, 8, 9}, {10, 200, 30}};
  const std::string png = render_scratch_dir("png") + "/tiny.png";
  write_png(img, png);
  const Image back = read_png(png);
  CHECK(back.width == 3);
  CHECK(back.height == 2);
  CHECK(back.pixels == img.pixels);
}

TEST_CASE("render: a rod with twist shows a darker stripe on the side of its material director m1") {
  // A thick straight rod across the view; its directors, all alike, point towards the eye, away
  // from it, or turn along the rod.
  const RenderOptions opt = small_options();
  Manifest plain = empty_manifest(3);
  Frame f;
  add_straight_rod(plain, f, "rod", Vec3(-0.01, 0.0, 0.0), Vec3(0.01, 0.0, 0.0), 9, 0.0012);
  const Camera cam = fit_camera(frame_bounds(plain, f), 3, view_aspect(opt));
  const Projector proj = view_projector(cam, opt);
  const Image without = render_image(plain, f, {}, cam, opt);

  Manifest twisted = plain;
  twisted.rods[0].twist = true;
  const Vec3 axis = Vec3::UnitX();
  const auto with_directors = [&](const std::function<Vec3(int)>& director) {
    Frame g = f;
    for (int j = 0; j < 8; ++j) {
      const Vec3 d = director(j);
      g.rods[0].directors.push_back((d - d.dot(axis) * axis).normalized());
    }
    return render_image(twisted, g, {}, cam, opt);
  };
  const Vec3 towards_eye = -proj.forward();
  const Image facing = with_directors([&](int) { return towards_eye; });
  const Image away = with_directors([&](int) { return Vec3(-towards_eye); });

  // Facing the eye: the middle of the tube is darker, by the stripe's darkening (55%).
  const Rgb8 lit = pixel_at(without, cam, opt, Vec3(0.002, 0.0, 0.0));
  const Rgb8 striped = pixel_at(facing, cam, opt, Vec3(0.002, 0.0, 0.0));
  const int lit_sum = lit.r + lit.g + lit.b, striped_sum = striped.r + striped.g + striped.b;
  CHECK(striped_sum < 0.6 * lit_sum);
  CHECK(striped_sum > 0.3 * lit_sum);
  // Facing away: the stripe is on the hidden side.
  // Along the tube the picture is that of the plain rod; only a few pixels of the round end
  // the camera sees obliquely (the far side of its cap) may show the stripe.
  for (double x = -0.008; x <= 0.008; x += 0.002)
    CHECK(pixel_at(away, cam, opt, Vec3(x, 0.0, 0.0)) == pixel_at(without, cam, opt, Vec3(x, 0.0, 0.0)));
  int differing = 0;
  for (std::size_t i = 0; i < away.pixels.size(); ++i) differing += away.pixels[i] != without.pixels[i];
  CHECK(differing < 10);
  int striped_pixels = 0;
  for (std::size_t i = 0; i < facing.pixels.size(); ++i) striped_pixels += facing.pixels[i] != without.pixels[i];
  CHECK(striped_pixels > 200);
  // A twisting rod: the stripe turns from the eye to the back along the rod.
  const Image turning = with_directors([&](int j) {
    const double angle = kPi * j / 7.0;
    const Vec3 side = axis.cross(towards_eye).normalized();
    return Vec3(std::cos(angle) * towards_eye + std::sin(angle) * side);
  });
  const Rgb8 start = pixel_at(turning, cam, opt, Vec3(-0.009, 0.0, 0.0));
  const Rgb8 start_plain = pixel_at(without, cam, opt, Vec3(-0.009, 0.0, 0.0));
  CHECK(start.r + start.g + start.b < 0.75 * (start_plain.r + start_plain.g + start_plain.b));
  CHECK(pixel_at(turning, cam, opt, Vec3(0.009, 0.0, 0.0)) == pixel_at(without, cam, opt, Vec3(0.009, 0.0, 0.0)));
}

TEST_CASE("render: director_stripe is 1 on m1, 0 beyond its half angle, and ignores the tangent") {
  const Vec3 t = Vec3::UnitX();
  CHECK(director_stripe(Vec3::UnitY(), Vec3::UnitY(), t) == 1.0);
  CHECK(director_stripe(Vec3(0.3, 1.0, 0.0).normalized(), Vec3(-2.0, 1.0, 0.0), t) == doctest::Approx(1.0));
  CHECK(director_stripe(Vec3::UnitZ(), Vec3::UnitY(), t) == 0.0);
  CHECK(director_stripe(-Vec3::UnitY(), Vec3::UnitY(), t) == 0.0);
  const double edge = kStripeHalfAngle;
  CHECK(director_stripe(Vec3(0.0, std::cos(edge + 1e-9), std::sin(edge + 1e-9)), Vec3::UnitY(), t) == 0.0);
  const double half = director_stripe(Vec3(0.0, std::cos(0.75 * edge), std::sin(0.75 * edge)), Vec3::UnitY(), t);
  CHECK(half > 0.2);
  CHECK(half < 0.8);
  CHECK(director_stripe(Vec3::UnitY(), Vec3::UnitX(), t) == 0.0);  // a director along the tangent: no stripe
}
