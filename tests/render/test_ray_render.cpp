// Properties of the ray-traced pictures (render_frame.hpp): shadows, true rod widths, the
// brush of a handle, the time stamp band, the contact shadow. Each checks what a picture
// must show, not stored bytes.
#include <doctest/doctest.h>

#include <cmath>

#include "bristle/render/camera.hpp"
#include "bristle/render/handle_shapes.hpp"
#include "bristle/render/image.hpp"
#include "bristle/render/ray_scene.hpp"
#include "bristle/render/render_error.hpp"
#include "bristle/render/render_frame.hpp"
#include "bristle/render/shading.hpp"
#include "render/render_test_support.hpp"

using namespace bristle;
using bristle::test::add_straight_rod;
using bristle::test::empty_manifest;

namespace {

double brightness(const Rgb8& c) { return (c.r + c.g + c.b) / (3.0 * 255.0); }

Rgb8 at_point(const Image& img, const Camera& cam, const RenderOptions& opt, const Vec3& p) {
  const Vec2 px = view_projector(cam, opt).project(p).pixel;
  return img.at(static_cast<int>(std::floor(px.x())), static_cast<int>(std::floor(px.y())));
}

Collider ground() {
  Collider c;
  c.type = ColliderType::Plane;
  c.point = Vec3::Zero();
  c.normal = Vec3::UnitY();
  return c;
}

// Looking down at the ground from above, a little from the front.
Camera top_camera() {
  Camera cam;
  cam.type = ProjectionType::Perspective;
  cam.position = Vec3(0.0, 0.1, 0.03);
  cam.target = Vec3::Zero();
  cam.fov_deg = 30.0;
  return cam;
}

}  // namespace

TEST_CASE("ray render: a rod above the ground casts a shadow along the key light") {
  Manifest m = empty_manifest(3);
  Frame f;
  add_straight_rod(m, f, "bar", Vec3(-0.01, 0.004, 0.0), Vec3(0.01, 0.004, 0.0), 5, 0.0008);
  RenderOptions opt;
  opt.width = 320;
  opt.height = 240;
  opt.time_stamp = false;
  const Camera cam = top_camera();
  const Image img = render_image(m, f, {ground()}, cam, opt);

  const Projector proj = view_projector(cam, opt);
  const WorldLights lights = world_lights(opt.lighting, proj.right(), proj.up(), proj.forward());
  REQUIRE(lights.key.y() > 0.1);
  // Where the key light's ray through the rod's axis meets the ground, and a point beside it.
  const Vec3 on_axis(0.002, 0.004, 0.0);
  const Vec3 shadow = on_axis - (on_axis.y() / lights.key.y()) * lights.key;
  const Vec3 beside = shadow + Vec3(0.0, 0.0, (shadow.z() > 0.0 ? 1.0 : -1.0) * 0.006);
  const double dark = brightness(at_point(img, cam, opt, shadow));
  const double lit = brightness(at_point(img, cam, opt, beside));
  CAPTURE(dark);
  CAPTURE(lit);
  CHECK(dark < lit - 0.1);
  // Without the rod, the same ground point is lit.
  const Image bare = render_image(empty_manifest(3), Frame(), {ground()}, cam, opt);
  CHECK(brightness(at_point(bare, cam, opt, shadow)) > dark + 0.1);
}

TEST_CASE("ray render: a rod covers as many pixels as it is wide, down to a fraction of one, unbroken") {
  // Orthographic, looking down -z; 1000 pixels per metre... per 1/100 m: a rod along x.
  Camera cam;
  cam.type = ProjectionType::Orthographic;
  cam.position = Vec3(0.0, 0.0, 1.0);
  cam.target = Vec3::Zero();
  cam.ortho_height = 0.02;  // 200 px tall: 10 000 px per metre
  RenderOptions opt;
  opt.width = 200;
  opt.height = 200;
  opt.time_stamp = false;
  opt.background = Color{0.0, 0.0, 0.0};
  opt.palette = {Color{1.0, 1.0, 1.0}};
  opt.lighting.ambient = 1.0;  // flat white but for the tube's darker silhouettes (0.7 to 1)
  opt.lighting.diffuse = 0.0;
  opt.lighting.fill = 0.0;
  opt.lighting.specular = 0.0;
  for (double width_px : {0.2, 0.4, 1.0, 3.0, 8.0}) {
    CAPTURE(width_px);
    Manifest m = empty_manifest(3);
    Frame f;
    const double r = 0.5 * width_px / 10000.0;
    // Slightly slanted, so the line crosses the sample rows: a thin line sampled too sparsely
    // would break into dots, columns with no sample on it.
    add_straight_rod(m, f, "rod", Vec3(-0.02, -0.0011, 0.0), Vec3(0.02, 0.0013, 0.0), 3, r);
    const Image img = render_image(m, f, {}, cam, opt);
    // The summed brightness of a column is the covered height times the mean shade (0.7..1).
    for (int x = 20; x < 180; ++x) {
      CAPTURE(x);
      double sum = 0.0;
      for (int y = 0; y < img.height; ++y) sum += brightness(img.at(x, y));
      CHECK(sum >= 0.65 * width_px - 0.15);
      CHECK(sum > 0.4 * width_px);  // no gaps: every column sees part of the fibre
      CHECK(sum <= 1.0 * width_px + 0.15);
    }
  }
}

TEST_CASE("ray render: a fibre thinner than a pixel lets the rod behind it show through") {
  // A 0.4 px white fibre across a 6 px red rod, on black: where the fibre crosses the rod a
  // pixel is mostly red with a share of white (the coverage ray goes on behind the fibre);
  // beside the rod the fibre is a faint grey over black. Drawing the fibre as an opaque hit
  // would turn its pixels white, stopping at the first hit without its coverage would drop it.
  Camera cam;
  cam.type = ProjectionType::Orthographic;
  cam.position = Vec3(0.0, 0.0, 1.0);
  cam.target = Vec3::Zero();
  cam.ortho_height = 0.02;  // 10 000 px per metre
  RenderOptions opt;
  opt.width = 200;
  opt.height = 200;
  opt.time_stamp = false;
  opt.background = Color{0.0, 0.0, 0.0};
  opt.palette = {Color{1.0, 0.0, 0.0}, Color{1.0, 1.0, 1.0}};
  opt.lighting.ambient = 1.0;
  opt.lighting.diffuse = 0.0;
  opt.lighting.fill = 0.0;
  opt.lighting.specular = 0.0;
  Manifest m = empty_manifest(3);
  Frame f;
  add_straight_rod(m, f, "rod", Vec3(-0.008, 0.0, 0.0), Vec3(0.008, 0.0, 0.0), 3, 3.0e-4);     // along x
  add_straight_rod(m, f, "fibre", Vec3(0.00002, -0.008, 0.001), Vec3(0.00002, 0.008, 0.001), 3, 0.2e-4);  // along y, in front
  const Image img = render_image(m, f, {}, cam, opt);
  double green_on_rod = 0.0, red_on_rod = 0.0, grey_beside = 0.0;
  for (int x = 95; x <= 105; ++x) {
    green_on_rod += img.at(x, 100).g / 255.0;  // only the white fibre has green
    red_on_rod = std::max(red_on_rod, img.at(x, 100).r / 255.0);
    grey_beside += img.at(x, 150).g / 255.0;
  }
  CHECK(green_on_rod > 0.2);   // the fibre's 0.4 px, at 0.7 to 1 of white
  CHECK(green_on_rod < 0.45);
  CHECK(red_on_rod > 0.6);     // the rod behind it shows in the fibre's pixel
  CHECK(grey_beside > 0.2);
  CHECK(grey_beside < 0.45);
}

TEST_CASE("ray render: the time stamp has its own band above the picture") {
  Manifest m = empty_manifest(3);
  Frame f;
  f.time = 0.5;
  // A rod straight up through the whole view and beyond.
  add_straight_rod(m, f, "pole", Vec3(0.0, -1.0, 0.0), Vec3(0.0, 1.0, 0.0), 3, 0.002);
  Camera cam;
  cam.type = ProjectionType::Orthographic;
  cam.position = Vec3(0.0, 0.0, 1.0);
  cam.target = Vec3::Zero();
  cam.ortho_height = 0.1;
  RenderOptions opt;
  opt.width = 300;
  opt.height = 200;
  const int band = time_stamp_band(opt);
  REQUIRE(band > 0);
  const Image img = render_image(m, f, {}, cam, opt);
  const Rgb8 band_ink = img.at(img.width / 2, band / 2);
  const Rgb8 rod = img.at(img.width / 2, band + 5);
  CHECK(rod != band_ink);
  // The band's background is one colour across its width at the rod's column and away from the
  // text; the rod starts at the first row below it.
  CHECK(img.at(img.width / 2, 1) == img.at(img.width - 2, 1));
  CHECK(img.at(img.width / 2, band) != img.at(img.width - 2, band));
  // Without a time stamp the picture fills the image.
  opt.time_stamp = false;
  CHECK(time_stamp_band(opt) == 0);
  const Image full = render_image(m, f, {}, cam, opt);
  CHECK(full.at(full.width / 2, 1) == full.at(full.width / 2, full.height / 2));  // the rod, to the top
  CHECK(full.at(full.width / 2, 1) != Rgb8{0xf5, 0xf3, 0xef});
  CHECK(view_aspect(opt) == doctest::Approx(1.5));
}

TEST_CASE("ray render: a handle carrying rods draws its brush; its colliders move with it") {
  Manifest m = empty_manifest(3);
  Frame f;
  f.time = 1.0;
  // A 3 x 1 tuft hanging down from y = 0.03, clamped by its two top vertices.
  for (int i = 0; i < 3; ++i)
    add_straight_rod(m, f, "tuft_" + std::to_string(i), Vec3(0.002 * (i - 1), 0.03, 0.0),
                     Vec3(0.002 * (i - 1), 0.0, 0.0), 11, 0.0002);
  m.scene = nlohmann::json::parse(R"({
    "rods": [{"name": "tuft_0", "fixed": [0, 1]}, {"name": "tuft_1", "fixed": [0, 1]},
             {"name": "tuft_2", "fixed": [0, 1]}],
    "colliders": [{"type": "sphere", "center": [0, 0, 0], "radius": 0.003}],
    "handles": [
      {"name": "grip", "rods": ["tuft"], "pivot": [0, 0, 0], "interpolation": "linear",
       "colliders": [0],
       "keys": [{"time": 0, "translation": [0, 0, 0]}, {"time": 2, "translation": [0.04, 0, 0]}]}]})");
  const std::vector<RenderHandle> handles = handles_from_scene(m.scene, m);
  REQUIRE(handles.size() == 1);
  CHECK(handles[0].rods == std::vector<int>{0, 1, 2});
  CHECK(handles[0].fixed[1] == std::vector<int>{0, 1});

  const std::vector<BrushPart> parts = brush_parts(m, f, handles);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].kind == BrushPart::Kind::Ferrule);
  CHECK(parts[1].kind == BrushPart::Kind::Handle);
  // The brush rises from the clamp (y = 0.027) upwards, around the tuft.
  CHECK(parts[0].points.front().y() > 0.026);
  CHECK(parts[1].points.back().y() > parts[0].points.back().y());
  CHECK(parts[0].radii[0] > 0.002);

  // The collider at t = 1 is halfway along its keys.
  std::vector<Collider> sphere(1);
  sphere[0].type = ColliderType::Sphere;
  sphere[0].radius = 0.003;
  const std::vector<Collider> moved = colliders_at(sphere, handles, 1.0);
  CHECK(moved[0].center.x() == doctest::Approx(0.02));

  Camera cam;
  cam.type = ProjectionType::Orthographic;
  cam.position = Vec3(0.0, 0.03, 1.0);
  cam.target = Vec3(0.0, 0.03, 0.0);
  cam.ortho_height = 0.12;
  RenderOptions opt;
  opt.width = 240;
  opt.height = 240;
  opt.time_stamp = false;
  const Image with = render_image(m, f, sphere, cam, opt, handles);
  const Image without = render_image(m, f, sphere, cam, opt);
  const Vec3 handle_point = 0.5 * (parts[1].points.front() + parts[1].points.back());
  const Rgb8 wood = at_point(with, cam, opt, handle_point);
  CHECK(wood.r > wood.b + 30);  // the handle's brown
  CHECK(at_point(without, cam, opt, handle_point) == Rgb8{0xf5, 0xf3, 0xef});
  // The sphere is drawn where its handle has taken it, not where the scene put it.
  CHECK(at_point(with, cam, opt, Vec3(0.02, 0.0, 0.0)) != Rgb8{0xf5, 0xf3, 0xef});
  CHECK(at_point(without, cam, opt, Vec3(0.0, 0.0, 0.0)) != at_point(with, cam, opt, Vec3(0.0, 0.0, 0.0)));

  // A malformed handle is refused with its pointer.
  Manifest bad = m;
  bad.scene["handles"][0]["rods"] = {"nobody"};
  CHECK_THROWS_WITH_AS(handles_from_scene(bad.scene, bad), doctest::Contains("/scene/handles/0/rods/0"), RenderError);
  bad.scene["handles"][0]["rods"] = nlohmann::json::array();
  bad.scene["handles"][0]["keys"] = nlohmann::json::array();
  CHECK_THROWS_WITH_AS(handles_from_scene(bad.scene, bad), doctest::Contains("/scene/handles/0/keys"), RenderError);
}

TEST_CASE("ray render: a rod lying on the ground darkens the ground next to it (contact shadow)") {
  RayScene scene(Vec3::Zero(), 0.05);
  const double r = 0.0002;
  scene.add_tube(SurfaceKind::Rod, 0, {Vec3(-0.01, r, 0.0), Vec3(0.01, r, 0.0)}, {r, r}, true);
  scene.commit(10.0 * scene.max_occluder_radius());
  const Vec3 n = Vec3::UnitY();
  const double near = scene.contact_occlusion(Vec3(0.0, 0.0, 1.5 * r), n);
  const double farther = scene.contact_occlusion(Vec3(0.0, 0.0, 5.0 * r), n);
  CHECK(near > 0.2);
  CHECK(farther < near);
  CHECK(farther > 0.0);
  CHECK(scene.contact_occlusion(Vec3(0.0, 0.0, 0.01), n) == 0.0);  // beyond the reach
  // The same query on the first hit: a ray down onto the ground beside the rod hits nothing
  // (no ground in this scene); a ray onto the rod hits it, with a normal facing the ray.
  const SurfaceHit hit = scene.intersect(Vec3(0.0, 0.01, 0.0), -Vec3::UnitY());
  REQUIRE(hit.hit());
  CHECK(hit.kind == SurfaceKind::Rod);
  CHECK(hit.point.y() == doctest::Approx(2.0 * r).epsilon(1e-3));
  CHECK(hit.normal.y() > 0.99);
  CHECK_FALSE(scene.intersect(Vec3(0.0, 0.01, 0.001), -Vec3::UnitY()).hit());
  CHECK(scene.occluded(Vec3(0.0, 0.01, 0.0), -Vec3::UnitY(), 0.0, 1.0));
  CHECK_FALSE(scene.occluded(Vec3(0.0, 0.01, 0.0), Vec3::UnitY(), 0.0, 1.0));
}
