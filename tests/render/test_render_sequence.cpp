#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "bristle/render/render_error.hpp"
#include "bristle/render/render_sequence.hpp"
#include "render/render_test_support.hpp"

using namespace bristle;

namespace {

// A small 3D animation: two rods swinging, one sphere collider.
struct Sequence {
  Manifest manifest;
  std::vector<Frame> frames;
};

Sequence swinging_rods(int count) {
  Sequence s;
  s.manifest = test::empty_manifest(3);
  s.manifest.frame_count = count;
  for (int k = 0; k < count; ++k) {
    Manifest m = test::empty_manifest(3);
    Frame f;
    f.index = k;
    f.time = 0.01 * k;
    const double a = 0.2 * k;
    test::add_straight_rod(m, f, "a", Vec3(0, 0, 0), Vec3(0.02 * std::cos(a), -0.02 * std::sin(a), 0.003), 8, 3e-4);
    test::add_straight_rod(m, f, "b", Vec3(0, 0, 0.004), Vec3(0.02, -0.002 * k, 0.006), 8, 1e-4);
    if (k == 0) s.manifest.rods = m.rods;
    s.frames.push_back(f);
  }
  return s;
}

std::string bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

RenderSetup setup_for(const Sequence& s, const FrameLoader& load) {
  RenderSetup setup;
  setup.options.width = 200;
  setup.options.height = 120;
  Collider sphere;
  sphere.type = ColliderType::Sphere;
  sphere.center = Vec3(0.01, -0.01, 0.0);
  sphere.radius = 0.004;
  setup.colliders.push_back(sphere);
  // A ground the rods' shadows and contact shadows fall on, and a handle carrying rod "a" (a
  // brush drawn at its root) and moving the sphere: every part of the ray tracer runs on
  // several threads at once.
  Collider ground;
  ground.type = ColliderType::Plane;
  ground.point = Vec3(0.0, -0.0215, 0.0);
  ground.normal = Vec3::UnitY();
  setup.colliders.push_back(ground);
  RenderHandle handle;
  handle.handle.keys = {HandleKey{}, HandleKey{0.1, Vec3(0.0, 0.0, 0.005)}};
  handle.rods = {0};
  handle.fixed = {{0, 1}};
  handle.colliders = {0};
  setup.handles.push_back(handle);
  setup.camera = fit_camera(sequence_bounds(s.manifest, static_cast<int>(s.frames.size()), load), 3, 200.0 / 120.0);
  return setup;
}

}  // namespace

TEST_CASE("render sequence: the images are byte-identical whatever the number of threads") {
  const Sequence s = swinging_rods(7);
  const FrameLoader load = [&s](int k) { return s.frames.at(static_cast<std::size_t>(k)); };
  const RenderSetup setup = setup_for(s, load);
  // The bounds do not depend on the threads either.
  const Bounds b1 = sequence_bounds(s.manifest, 7, load, 1), b3 = sequence_bounds(s.manifest, 7, load, 3);
  CHECK(b1.min == b3.min);
  CHECK(b1.max == b3.max);
  // The points for the camera fit come in frame order whatever the threads; beyond the cap,
  // none (the box is used).
  std::vector<PaddedPoint> p1, p3, capped = {PaddedPoint{}};
  sequence_bounds(s.manifest, 7, load, 1, &p1);
  sequence_bounds(s.manifest, 7, load, 3, &p3);
  REQUIRE(p1.size() == 7 * 16);
  REQUIRE(p3.size() == p1.size());
  for (std::size_t i = 0; i < p1.size(); ++i) CHECK(p1[i].point == p3[i].point);
  CHECK(p1[16].point == s.frames[1].rods[0].positions[0]);
  CHECK(p1[8].pad == 1e-4);
  sequence_bounds(s.manifest, 7, load, 2, &capped, 100);
  CHECK(capped.empty());

  const std::string one = test::render_scratch_dir("sequence_j1");
  const std::string three = test::render_scratch_dir("sequence_j3");
  int calls = 0, last = 0;
  render_sequence(s.manifest, 0, 7, load, setup, one, {}, 1);
  render_sequence(s.manifest, 0, 7, load, setup, three, [&](int done) { ++calls; last = done; }, 3);
  CHECK(calls == 7);
  CHECK(last == 7);
  for (int k = 0; k < 7; ++k) {
    CAPTURE(k);
    const std::string a = bytes(one + "/" + frame_image_name(k)), b = bytes(three + "/" + frame_image_name(k));
    REQUIRE(!a.empty());
    CHECK(a == b);
  }
  // Frames differ from each other (the test would pass trivially otherwise).
  CHECK(bytes(one + "/" + frame_image_name(0)) != bytes(one + "/" + frame_image_name(6)));
  // Only the images are left: no temporary files.
  CHECK(std::distance(std::filesystem::directory_iterator(three), std::filesystem::directory_iterator()) == 7);
}

TEST_CASE("render sequence: the first error stops the render and is reported") {
  const Sequence s = swinging_rods(6);
  const FrameLoader good = [&s](int k) { return s.frames.at(static_cast<std::size_t>(k)); };
  const RenderSetup setup = setup_for(s, good);
  const FrameLoader broken = [&s](int k) {
    if (k == 3) throw std::runtime_error("frame 3 is unreadable");
    return s.frames.at(static_cast<std::size_t>(k));
  };
  for (int jobs : {1, 2}) {
    CAPTURE(jobs);
    const std::string dir = test::render_scratch_dir("sequence_error" + std::to_string(jobs));
    CHECK_THROWS_WITH(render_sequence(s.manifest, 0, 6, broken, setup, dir, {}, jobs), "frame 3 is unreadable");
    CHECK_FALSE(std::filesystem::exists(dir + "/" + frame_image_name(3)));
  }
  // An unwritable folder is a RenderError naming the file.
  CHECK_THROWS_AS(render_sequence(s.manifest, 0, 6, good, setup, "/nonexistent-dir", {}, 2), RenderError);
}
