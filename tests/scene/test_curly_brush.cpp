// Curly brushes: the brush generator's `curl` (scene/generators.hpp, plant_brush;
// docs/scene-format.md, "Curly bristles"). The helices are measured from their vertices
// (distance to the axis, advance per turn, sense of rotation), not recomputed from the
// generator's formula.

#include <algorithm>
#include <cmath>
#include <string>

#include <doctest/doctest.h>

#include "bristle/contact/rod_overlaps.hpp"
#include "bristle/contact/segment_distance.hpp"
#include "bristle/scene/generators.hpp"
#include "bristle/scene/load_scene.hpp"
#include "bristle/scene/scene_error.hpp"

using namespace bristle;

namespace {

constexpr double kPi = 3.14159265358979323846;

// 6 x 6 hairs 1.2 mm apart, 20 mm long, 60 segments, coiled with radius 0.4 mm and pitch
// 4 mm (5 turns, 12 segments a turn), hair radius 0.05 mm.
BrushSpec curly_brush() {
  BrushSpec spec;
  spec.dimension = 3;
  spec.layout = BrushLayout::Grid;
  spec.rows = 6;
  spec.columns = 6;
  spec.spacing = 0.0012;
  spec.root = Vec3(0.01, 0.02, -0.03);
  spec.direction = Vec3(0.2, 1.0, 0.3).normalized();
  spec.length = 0.02;
  spec.segments = 60;
  spec.bristle_radius = 5e-5;
  spec.curl.enabled = true;
  spec.curl.radius = 4e-4;
  spec.curl.pitch = 4e-3;
  return spec;
}

// A helix measured about a known axis (base, unit d): its radius (mean distance of the
// vertices from the axis) and the spread of those distances, its pitch (axial advance per
// turn of the angle about the axis) and its sense (+1: every step turns counter-clockwise
// seen from the tip of d; -1: every step clockwise; 0: mixed).
struct Measured {
  double radius = 0.0, radius_spread = 0.0, pitch = 0.0, sense = 0.0;
  double axial_min = 0.0, axial_max = 0.0;
};

Measured measure(const std::vector<Vec3>& x, const Vec3& base, const Vec3& d) {
  Measured m;
  double lo = 1e300, hi = 0.0, turned = 0.0;
  int positive = 0, negative = 0;
  m.axial_min = 1e300;
  m.axial_max = -1e300;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double axial = (x[i] - base).dot(d);
    const Vec3 radial = (x[i] - base) - axial * d;
    lo = std::min(lo, radial.norm());
    hi = std::max(hi, radial.norm());
    m.radius += radial.norm() / static_cast<double>(x.size());
    m.axial_min = std::min(m.axial_min, axial);
    m.axial_max = std::max(m.axial_max, axial);
    if (i + 1 < x.size()) {
      const Vec3 next = (x[i + 1] - base) - (x[i + 1] - base).dot(d) * d;
      const double step = std::atan2(radial.cross(next).dot(d), radial.dot(next));
      turned += step;
      (step > 0.0 ? positive : negative)++;
    }
  }
  m.radius_spread = hi - lo;
  const double advance = (x.back() - x.front()).dot(d);
  m.pitch = 2.0 * kPi * advance / std::abs(turned);
  m.sense = negative == 0 ? 1.0 : positive == 0 ? -1.0 : 0.0;
  return m;
}

std::size_t overlaps(const std::vector<std::vector<Vec3>>& bristles, double radius) {
  return find_rod_overlaps(bristles, std::vector<double>(bristles.size(), radius)).overlaps.size();
}

}  // namespace

TEST_CASE("scene: curly bristles are helices of the asked radius and pitch about their straight axes") {
  for (const bool right : {true, false}) {
    CAPTURE(right);
    BrushSpec spec = curly_brush();
    spec.curl.handedness = right ? CurlHandedness::Right : CurlHandedness::Left;
    const BrushPlanting planting = plant_brush(spec);
    REQUIRE_FALSE(planting.failed);
    const std::vector<Vec3> offsets = brush_root_offsets(spec);
    REQUIRE(planting.bristles.size() == offsets.size());
    REQUIRE(planting.axes.size() == offsets.size());
    const Vec3 d = spec.direction.normalized();
    for (std::size_t k = 0; k < offsets.size(); ++k) {
      CAPTURE(k);
      const std::vector<Vec3>& hair = planting.bristles[k];
      REQUIRE(hair.size() == static_cast<std::size_t>(spec.segments) + 1);
      // Without direction jitter the axis is the straight bristle: from the lattice point
      // along `direction`, `length` long.
      const Vec3 base = spec.root + offsets[k];
      CHECK((planting.axes[k].first - base).norm() < 1e-15);
      CHECK((planting.axes[k].second - (base + spec.length * d)).norm() < 1e-15);
      const Measured m = measure(hair, base, d);
      CHECK(m.radius == doctest::Approx(spec.curl.radius).epsilon(1e-12));
      CHECK(m.radius_spread < 1e-12 * spec.curl.radius);
      CHECK(m.pitch == doctest::Approx(spec.curl.pitch).epsilon(1e-12));
      CHECK(m.sense == (right ? 1.0 : -1.0));
      CHECK(m.axial_min == doctest::Approx(0.0).scale(spec.length).epsilon(1e-14));
      CHECK(m.axial_max == doctest::Approx(spec.length).epsilon(1e-14));
      // Equal edges: the helix is sampled evenly along its arc.
      const double edge = (hair[1] - hair[0]).norm();
      for (std::size_t i = 1; i < hair.size(); ++i) CHECK((hair[i] - hair[i - 1]).norm() == doctest::Approx(edge).epsilon(1e-12));
    }
  }
}

TEST_CASE("scene: curly bristles get random phases, and random handedness picks both senses") {
  BrushSpec spec = curly_brush();
  spec.curl.handedness = CurlHandedness::Random;
  const BrushPlanting planting = plant_brush(spec);
  REQUIRE_FALSE(planting.failed);
  const Vec3 d = spec.direction.normalized();
  const auto [u, v] = brush_base_axes(d, 3);
  int right = 0, left = 0;
  double phase_lo = 10.0, phase_hi = -10.0;
  for (std::size_t k = 0; k < planting.bristles.size(); ++k) {
    const Measured m = measure(planting.bristles[k], planting.axes[k].first, d);
    CHECK(m.sense != 0.0);  // each hair turns one way all along
    (m.sense > 0.0 ? right : left)++;
    const Vec3 r0 = planting.bristles[k].front() - planting.axes[k].first;
    const double phase = std::atan2(r0.dot(v), r0.dot(u));
    phase_lo = std::min(phase_lo, phase);
    phase_hi = std::max(phase_hi, phase);
  }
  // 36 fair coin flips: each side at least 8 times (probability of fewer below 10^-4).
  CHECK(right >= 8);
  CHECK(left >= 8);
  CHECK(phase_hi - phase_lo > kPi);
}

TEST_CASE("scene: curl jitter keeps each bristle's radius and pitch within their bounds") {
  BrushSpec spec = curly_brush();
  spec.curl.jitter = 0.3;
  spec.jitter.length = 0.1;
  spec.jitter.direction = 0.05;
  spec.jitter.seed = 11;
  const BrushPlanting planting = plant_brush(spec);
  REQUIRE_FALSE(planting.failed);
  double radius_lo = 1.0, radius_hi = 0.0, pitch_lo = 1.0, pitch_hi = 0.0;
  for (std::size_t k = 0; k < planting.bristles.size(); ++k) {
    CAPTURE(k);
    // Tilted axes: each hair is measured about its own axis, whose tilt and length are those
    // of the straight brush's jitter.
    const Vec3 base = planting.axes[k].first, axis = planting.axes[k].second - base;
    const double length = axis.norm();
    CHECK(length >= spec.length * (1.0 - spec.jitter.length) * (1.0 - 1e-14));
    CHECK(length <= spec.length * (1.0 + spec.jitter.length) * (1.0 + 1e-14));
    CHECK(std::acos(std::min(1.0, axis.normalized().dot(spec.direction.normalized()))) <= spec.jitter.direction + 1e-12);
    const Measured m = measure(planting.bristles[k], base, axis.normalized());
    CHECK(m.radius_spread < 1e-11 * spec.curl.radius);
    CHECK(m.radius >= spec.curl.radius * (1.0 - spec.curl.jitter) * (1.0 - 1e-12));
    CHECK(m.radius <= spec.curl.radius * (1.0 + spec.curl.jitter) * (1.0 + 1e-12));
    CHECK(m.pitch >= spec.curl.pitch * (1.0 - spec.curl.jitter) * (1.0 - 1e-12));
    CHECK(m.pitch <= spec.curl.pitch * (1.0 + spec.curl.jitter) * (1.0 + 1e-12));
    CHECK(m.axial_max == doctest::Approx(length).epsilon(1e-12));
    radius_lo = std::min(radius_lo, m.radius);
    radius_hi = std::max(radius_hi, m.radius);
    pitch_lo = std::min(pitch_lo, m.pitch);
    pitch_hi = std::max(pitch_hi, m.pitch);
  }
  // The draws spread over most of the range (36 draws of each).
  CHECK(radius_hi - radius_lo > spec.curl.radius * spec.curl.jitter);
  CHECK(pitch_hi - pitch_lo > spec.curl.pitch * spec.curl.jitter);
}

TEST_CASE("scene: a curly brush is deterministic, and its curl draws leave the straight axes alone") {
  BrushSpec spec = curly_brush();
  spec.curl.jitter = 0.2;
  spec.curl.handedness = CurlHandedness::Random;
  spec.jitter = {0.1, 0.002, 5};
  const BrushPlanting a = plant_brush(spec);
  const BrushPlanting b = plant_brush(spec);
  REQUIRE_FALSE(a.failed);
  CHECK(a.bristles == b.bristles);
  CHECK(a.axes == b.axes);
  BrushSpec other = spec;
  other.jitter.seed = 6;
  CHECK(plant_brush(other).bristles != a.bristles);
  // The curl takes its numbers from its own stream: the straight brush of the same seed has
  // the axes as bristles (none redrawn here, the tilt being too small to reach a neighbour).
  BrushSpec straight = spec;
  straight.curl = BrushCurl{};
  const BrushPlanting s = plant_brush(straight);
  REQUIRE(a.redrawn == 0);
  REQUIRE(s.redrawn == 0);
  for (std::size_t k = 0; k < s.bristles.size(); ++k) {
    CHECK(s.axes[k].first == s.bristles[k].front());
    CHECK(s.axes[k].second == s.bristles[k].back());
    CHECK(a.axes[k] == s.axes[k]);
  }
}

TEST_CASE("scene: curly bristles are planted clear of each other, checked as their axes inflated by the coil") {
  // Hairs 0.1 mm thick coiled with radius up to 0.36 mm, axes 1 mm apart (the least the
  // spacing check allows is 2 (0.05 + 0.36) = 0.82 mm), 30 mm long and tilted up to 0.02 rad:
  // tilted axes reach their neighbours, so the check has work to do.
  int overlapping_without_check = 0;
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    CAPTURE(seed);
    BrushSpec spec = curly_brush();
    spec.layout = BrushLayout::Disk;
    spec.disk_radius = 0.004;
    spec.spacing = 0.001;
    spec.length = 0.03;
    spec.curl.radius = 3e-4;
    spec.curl.jitter = 0.2;
    spec.curl.handedness = CurlHandedness::Random;
    spec.segments = 90;
    spec.jitter = {0.05, 0.02, seed};
    const BrushPlanting planting = plant_brush(spec);
    REQUIRE_FALSE(planting.failed);
    CHECK(planting.redrawn > 0);
    // No hair overlaps another or itself (the overlap report counts both).
    CHECK(overlaps(planting.bristles, spec.bristle_radius) == 0);
    // Each hair lies inside its axis's capsule of radius r + R_max: what the check assumes.
    for (std::size_t k = 0; k < planting.bristles.size(); ++k)
      for (const Vec3& x : planting.bristles[k])
        CHECK(segment_distance(x, x, planting.axes[k].first, planting.axes[k].second).distance <=
              spec.curl.max_radius() * (1.0 + 1e-12));
    BrushSpec unchecked = spec;
    unchecked.bristle_radius = 0.0;
    if (overlaps(brush_bristles(unchecked), spec.bristle_radius) > 0) ++overlapping_without_check;
  }
  CHECK(overlapping_without_check == 6);
}

namespace {

std::string curly_scene(const std::string& rod_extra, const std::string& curl, double spacing = 0.0012,
                        int dimension = 3) {
  const std::string vec = dimension == 3 ? "[0, 0, 0]" : "[0, 0]";
  const std::string dir = dimension == 3 ? "[0, 1, 0]" : "[0, 1]";
  return R"({ "format": "bristle-scene/1", "dimension": )" + std::to_string(dimension) + R"(,
    "time": { "dt": 0.001, "duration": 0.002 },
    "materials": { "hair": { "density": 1300, "radius": 0.00005, "youngs_modulus": 4e9 } },
    "rods": [ { "name": "tuft", "material": "hair")" + rod_extra + R"(,
      "generator": { "type": "brush", "layout": { "type": "grid", )" + (dimension == 3 ? R"("rows": 2, )" : "") +
         R"("columns": 2, "spacing": )" + std::to_string(spacing) + R"( },
                     "root": )" + vec + R"(, "direction": )" + dir + R"(, "length": 0.01, "segments": 30,
                     "curl": )" + curl + R"( } } ] })";
}

std::string refusal(const std::string& text) {
  try {
    load_scene_from_string(text, "curly.json");
  } catch (const SceneError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("scene: a curly brush's bristles twist and keep their initial shape at rest, unless the entry says otherwise") {
  const std::string curl = R"({ "radius": 0.0004, "pitch": 0.003, "handedness": "left" })";
  const Scene scene = load_scene_from_string(curly_scene("", curl), "curly.json");
  REQUIRE(scene.model.rods.size() == 4);
  for (const Rod& rod : scene.model.rods) {
    CHECK(rod.twist);
    CHECK(rod.fixed == std::vector<int>{0, 1});
  }
  for (const auto& rod : scene.expanded["rods"]) {
    CHECK(rod["twist"] == true);
    CHECK(rod["rest"] == "initial");
  }
  // The expanded scene (explicit vertices, twist recorded) reloads to the same rods.
  const Scene again = load_scene_from_string(scene.expanded.dump(), "expanded.json");
  REQUIRE(again.model.rods.size() == 4);
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(again.model.rods[k].twist);
    CHECK(again.model.rods[k].initial_positions == scene.model.rods[k].initial_positions);
  }
  const Scene untwisted = load_scene_from_string(curly_scene(R"(, "twist": false, "rest": "straight")", curl), "c.json");
  for (const Rod& rod : untwisted.model.rods) CHECK_FALSE(rod.twist);
  for (const auto& rod : untwisted.expanded["rods"]) CHECK(rod["rest"] == "straight");
  // A material normal needs a twisting rod: a curly brush is one by default.
  CHECK(refusal(curly_scene(R"(, "material_normal": [1, 0, 0])", curl)) == "");
  CHECK(refusal(curly_scene(R"(, "twist": false, "material_normal": [1, 0, 0])", curl)) != "");
}

TEST_CASE("scene: a curl is refused in 2D, with bad values, and on a spacing its coils could overlap across") {
  const std::string good = R"({ "radius": 0.0004, "pitch": 0.003, "jitter": 0.25 })";
  CHECK(refusal(curly_scene("", good)) == "");
  CHECK(refusal(curly_scene("", good, 0.0012, 2)).find("/rods/0/generator/curl: ") != std::string::npos);
  CHECK(refusal(curly_scene("", R"({ "radius": 0, "pitch": 0.003 })")).find("/generator/curl/radius: ") !=
        std::string::npos);
  CHECK(refusal(curly_scene("", R"({ "radius": 0.0004, "pitch": -1 })")).find("/generator/curl/pitch: ") !=
        std::string::npos);
  CHECK(refusal(curly_scene("", R"({ "radius": 0.0004 })")).find("/generator/curl/pitch: missing") != std::string::npos);
  CHECK(refusal(curly_scene("", R"({ "radius": 0.0004, "pitch": 0.003, "jitter": 1 })"))
            .find("/generator/curl/jitter: ") != std::string::npos);
  CHECK(refusal(curly_scene("", R"({ "radius": 0.0004, "pitch": 0.003, "handedness": "both" })"))
            .find("/generator/curl/handedness: ") != std::string::npos);
  // Axes at least 2 (r + R (1 + jitter)) apart: 2 (0.05 + 0.5) mm = 1.1 mm.
  CHECK(refusal(curly_scene("", good, 0.0011)) == "");
  const std::string close = refusal(curly_scene("", good, 0.00109));
  CHECK(close.find("/generator/layout/spacing: ") != std::string::npos);
  CHECK(close.find("curly") != std::string::npos);
}
