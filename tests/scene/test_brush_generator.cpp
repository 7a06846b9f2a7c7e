#include <cmath>
#include <set>

#include <doctest/doctest.h>

#include "bristle/contact/rod_overlaps.hpp"
#include "bristle/scene/generators.hpp"
#include "bristle/scene/random.hpp"

using namespace bristle;

namespace {

BrushSpec grid_brush() {
  BrushSpec spec;
  spec.layout = BrushLayout::Grid;
  spec.rows = 3;
  spec.columns = 4;
  spec.spacing = 0.001;
  spec.root = Vec3(0.1, -0.2, 0.3);
  spec.direction = Vec3(1, 2, 2).normalized();
  spec.length = 0.02;
  spec.segments = 5;
  return spec;
}

double angle_between(const Vec3& a, const Vec3& b) {
  return std::atan2(a.cross(b).norm(), a.dot(b));
}

}  // namespace

TEST_CASE("scene: SplitMix64 is the reference sequence and uniform() stays in [0, 1)") {
  // First outputs of splitmix64 seeded with 0 (the published reference values).
  SplitMix64 rng(0);
  CHECK(rng.next() == 0xE220A8397B1DCDAFull);
  CHECK(rng.next() == 0x6E789E6AA1B965F4ull);
  SplitMix64 u(42);
  for (int k = 0; k < 1000; ++k) {
    const double x = u.uniform();
    CHECK((x >= 0.0 && x < 1.0));
  }
}

TEST_CASE("scene: brush base axes are orthonormal and perpendicular to the direction") {
  for (const Vec3& d : {Vec3(0, 1, 0), Vec3(1, 0, 0), Vec3(0, 0, -1), Vec3(1, 2, 2).normalized(),
                        Vec3(0.95, 0.1, 0.3).normalized()}) {
    const auto [u, v] = brush_base_axes(d, 3);
    CHECK(u.norm() == doctest::Approx(1.0));
    CHECK(v.norm() == doctest::Approx(1.0));
    CHECK(std::abs(u.dot(d)) < 1e-14);
    CHECK(std::abs(v.dot(d)) < 1e-14);
    CHECK(std::abs(u.dot(v)) < 1e-14);
    CHECK((u.cross(v) - d).norm() < 1e-14);  // right-handed (u, v, d)
  }
  const auto [u2, v2] = brush_base_axes(Vec3(0, 1, 0), 2);
  CHECK(u2 == Vec3(-1, 0, 0));
  CHECK(v2 == Vec3::Zero());
}

TEST_CASE("scene: grid brush plants rows x columns bristles on the base plane") {
  const BrushSpec spec = grid_brush();
  const auto bristles = brush_bristles(spec);
  REQUIRE(bristles.size() == 12);
  Vec3 centroid = Vec3::Zero();
  for (const auto& bristle : bristles) {
    REQUIRE(bristle.size() == 6);
    const Vec3 root = bristle.front();
    centroid += root / 12.0;
    CHECK(std::abs((root - spec.root).dot(spec.direction)) < 1e-15);  // on the base plane
    CHECK(((bristle.back() - root) - spec.length * spec.direction).norm() < 1e-15);  // straight along d
  }
  CHECK((centroid - spec.root).norm() < 1e-15);  // centred on the root
  // Neighbours along a row and between rows are `spacing` apart.
  CHECK((bristles[1][0] - bristles[0][0]).norm() == doctest::Approx(spec.spacing));
  CHECK((bristles[4][0] - bristles[0][0]).norm() == doctest::Approx(spec.spacing));
  // The corners span (columns - 1) x (rows - 1) spacings.
  CHECK((bristles[11][0] - bristles[0][0]).norm() == doctest::Approx(std::hypot(3, 2) * spec.spacing));
}

TEST_CASE("scene: disk brush packs bristles hexagonally inside the radius") {
  BrushSpec spec = grid_brush();
  spec.layout = BrushLayout::Disk;
  spec.spacing = 0.001;
  spec.disk_radius = 0.001;  // the centre and its six neighbours
  CHECK(brush_bristles(spec).size() == 7);
  spec.disk_radius = 0.0009;
  CHECK(brush_bristles(spec).size() == 1);

  spec.disk_radius = 0.0052;
  const auto offsets = brush_root_offsets(spec);
  CHECK(offsets.size() > 90);
  CHECK(static_cast<double>(offsets.size()) <= brush_bristle_estimate(spec));
  double nearest_overall = 1.0;
  for (std::size_t a = 0; a < offsets.size(); ++a) {
    CHECK(offsets[a].norm() <= spec.disk_radius * (1 + 1e-9));
    CHECK(std::abs(offsets[a].dot(spec.direction)) < 1e-15);
    for (std::size_t b = a + 1; b < offsets.size(); ++b)
      nearest_overall = std::min(nearest_overall, (offsets[a] - offsets[b]).norm());
  }
  CHECK(nearest_overall == doctest::Approx(spec.spacing));
}

TEST_CASE("scene: 2D brushes are one row across the base line") {
  BrushSpec spec;
  spec.dimension = 2;
  spec.layout = BrushLayout::Grid;
  spec.rows = 1;
  spec.columns = 5;
  spec.spacing = 0.002;
  spec.root = Vec3(0.0, 0.0, 0.0);
  spec.direction = Vec3(0, 1, 0);
  spec.length = 0.01;
  spec.segments = 4;
  const auto grid = brush_bristles(spec);
  REQUIRE(grid.size() == 5);
  for (const auto& bristle : grid) {
    CHECK(bristle.front().y() == 0.0);
    CHECK(bristle.front().z() == 0.0);
    CHECK(bristle.back().z() == 0.0);
  }
  CHECK(grid.front().front().x() == doctest::Approx(0.004));  // u = (-1, 0): first at +x
  CHECK(grid.back().front().x() == doctest::Approx(-0.004));

  spec.layout = BrushLayout::Disk;
  spec.disk_radius = 0.005;  // offsets -0.004 ... 0.004
  CHECK(brush_bristles(spec).size() == 5);
}

TEST_CASE("scene: brush jitter is deterministic for a seed and stays within its bounds") {
  BrushSpec spec = grid_brush();
  spec.rows = 6;
  spec.columns = 6;
  spec.jitter = {0.05, 0.2, 1234};
  const auto a = brush_bristles(spec);
  const auto b = brush_bristles(spec);
  CHECK(a == b);  // bitwise the same

  spec.jitter.seed = 1235;
  CHECK(brush_bristles(spec) != a);
  spec.jitter.seed = 1234;

  double longest_tilt = 0.0, largest_stretch = 0.0;
  std::set<double> lengths;
  for (const auto& bristle : a) {
    const Vec3 axis = bristle.back() - bristle.front();
    const double relative = axis.norm() / spec.length - 1.0;
    CHECK(std::abs(relative) <= spec.jitter.length + 1e-12);
    const double tilt = angle_between(axis, spec.direction);
    CHECK(tilt <= spec.jitter.direction + 1e-12);
    CHECK(std::abs((bristle.front() - spec.root).dot(spec.direction)) < 1e-15);  // roots stay planted
    longest_tilt = std::max(longest_tilt, tilt);
    largest_stretch = std::max(largest_stretch, std::abs(relative));
    lengths.insert(axis.norm());
  }
  // The jitter is actually applied, and uses a good part of its range.
  CHECK(longest_tilt > 0.5 * spec.jitter.direction);
  CHECK(largest_stretch > 0.5 * spec.jitter.length);
  CHECK(lengths.size() == a.size());

  // Turning the direction jitter off leaves the length jitter as it was.
  spec.jitter.direction = 0.0;
  const auto straight = brush_bristles(spec);
  for (std::size_t k = 0; k < a.size(); ++k)
    CHECK((straight[k].back() - straight[k].front()).norm() ==
          doctest::Approx((a[k].back() - a[k].front()).norm()).epsilon(1e-14));
}

// ---- Planting bristles clear of each other (issue 16, item 5) ---------------------------

namespace {

/// A brush of bristles 0.1 mm in radius 0.5 mm apart, 25 mm long, tilted up to 0.12 rad:
/// brush_stroke.json's tuft, dense enough that independent draws overlap.
BrushSpec dense_brush(int dimension, BrushLayout layout, std::uint64_t seed) {
  BrushSpec spec;
  spec.dimension = dimension;
  spec.layout = layout;
  spec.rows = dimension == 3 ? 8 : 1;
  spec.columns = dimension == 3 ? 9 : 30;
  spec.disk_radius = 0.003;
  spec.spacing = 0.0005;
  spec.root = Vec3(0.01, 0.028, 0.0);
  spec.direction = dimension == 3 ? Vec3(0.2, -1, 0.1).normalized() : Vec3(0, -1, 0);
  spec.length = 0.025;
  spec.segments = 10;
  spec.jitter = {0.05, 0.12, seed};
  spec.bristle_radius = 1e-4;
  return spec;
}

std::size_t overlaps(const std::vector<std::vector<Vec3>>& bristles, double radius) {
  return find_rod_overlaps(bristles, std::vector<double>(bristles.size(), radius)).overlaps.size();
}

}  // namespace

TEST_CASE("scene: brush bristles are planted clear of each other, for every seed and layout") {
  int overlapping_without_check = 0;
  for (const int dimension : {3, 2})
    for (const BrushLayout layout : {BrushLayout::Grid, BrushLayout::Disk})
      for (std::uint64_t seed = 0; seed < 6; ++seed) {
        CAPTURE(dimension);
        CAPTURE(static_cast<int>(layout));
        CAPTURE(seed);
        const BrushSpec spec = dense_brush(dimension, layout, seed);
        const BrushPlanting planting = plant_brush(spec);
        REQUIRE_FALSE(planting.failed);
        REQUIRE(planting.bristles.size() == brush_root_offsets(spec).size());
        CHECK(overlaps(planting.bristles, spec.bristle_radius) == 0);
        for (const auto& bristle : planting.bristles)
          for (const Vec3& x : bristle) CHECK((dimension == 3 || x.z() == 0.0));

        // The same draws without the check: the layout is dense enough to need it.
        BrushSpec unchecked = spec;
        unchecked.bristle_radius = 0.0;
        const std::vector<std::vector<Vec3>> drawn = brush_bristles(unchecked);
        if (overlaps(drawn, spec.bristle_radius) > 0) ++overlapping_without_check;
        // Bristles whose first draw fits are those drawn without the check, bit for bit; the
        // others were redrawn. Redraws keep each bristle's length, root and tilt bound.
        int same = 0;
        for (std::size_t k = 0; k < drawn.size(); ++k) {
          const auto& a = planting.bristles[k];
          const auto& b = drawn[k];
          if (a == b) ++same;
          CHECK(a.front() == b.front());
          CHECK((a.back() - a.front()).norm() == doctest::Approx((b.back() - b.front()).norm()).epsilon(1e-13));
          CHECK(angle_between(a.back() - a.front(), spec.direction) <= spec.jitter.direction + 1e-12);
        }
        CHECK(same == static_cast<int>(drawn.size()) - planting.redrawn);
        CHECK(planting.redrawn > 0);
      }
  CHECK(overlapping_without_check == 24);
}

TEST_CASE("scene: planting a brush is deterministic: the same seed gives the same bristles, bit for bit") {
  const BrushSpec spec = dense_brush(3, BrushLayout::Disk, 42);
  const BrushPlanting a = plant_brush(spec);
  const BrushPlanting b = plant_brush(spec);
  REQUIRE_FALSE(a.failed);
  CHECK(a.bristles == b.bristles);
  CHECK(a.redrawn == b.redrawn);
  BrushSpec other = spec;
  other.jitter.seed = 43;
  CHECK(plant_brush(other).bristles != a.bristles);
  // Parallel bristles are never checked: without direction jitter nothing is redrawn, and
  // bristles exactly a diameter apart fit.
  BrushSpec straight = spec;
  straight.jitter.direction = 0.0;
  straight.spacing = 2.0 * straight.bristle_radius;
  const BrushPlanting parallel = plant_brush(straight);
  CHECK(parallel.redrawn == 0);
  CHECK(overlaps(parallel.bristles, straight.bristle_radius) == 0);
}

TEST_CASE("scene: a brush too dense for its tilt fails to plant, naming the bristle that did not fit") {
  BrushSpec spec = dense_brush(3, BrushLayout::Grid, 1);
  spec.spacing = 0.00025;
  spec.jitter.direction = 0.5;
  const BrushPlanting planting = plant_brush(spec);
  REQUIRE(planting.failed);
  CHECK(planting.bristles.empty());
  CHECK(brush_bristles(spec).empty());
  CHECK(planting.conflict.draws == kMaxBristleDraws);
  CHECK(planting.conflict.bristle > 0);
  CHECK(planting.conflict.neighbour >= 0);
  CHECK(planting.conflict.neighbour < planting.conflict.bristle);
  // A tilt small enough that no two bristles can reach each other always fits:
  // sin(tilt) <= (spacing - 2 r) / (2 L_max).
  spec.jitter.direction = std::asin((spec.spacing - 2 * spec.bristle_radius) / (2 * spec.length * 1.05));
  const BrushPlanting safe = plant_brush(spec);
  CHECK_FALSE(safe.failed);
  CHECK(safe.redrawn == 0);
}

TEST_CASE("scene: strongly tilted long bristles, whose shadows cross many grid cells, are planted clear of each other") {
  // Shadows on the base plane up to 0.025 sin(1.2) = 23 mm long, 47 spacings: the grid
  // samples each over many cells, and a missed neighbour would show as an overlap here.
  for (const int dimension : {3, 2}) {
    CAPTURE(dimension);
    BrushSpec spec = dense_brush(dimension, BrushLayout::Disk, 5);
    spec.jitter.direction = 1.2;
    spec.bristle_radius = 2e-5;
    const BrushPlanting planting = plant_brush(spec);
    REQUIRE_FALSE(planting.failed);
    CHECK(planting.redrawn > 0);
    CHECK(overlaps(planting.bristles, spec.bristle_radius) == 0);
    BrushSpec unchecked = spec;
    unchecked.bristle_radius = 0.0;
    CHECK(overlaps(brush_bristles(unchecked), spec.bristle_radius) > 0);
  }
}

TEST_CASE("scene: a brush whose overlap check would take unbounded time is refused, not checked for ever") {
  // 10 000 bristles 1 m long, 0.5 mm apart, tilted up to 1.5 rad: each reaches thousands of
  // others, about 5 10^7 candidate tests in all, beyond kMaxBrushOverlapWork.
  BrushSpec spec = dense_brush(3, BrushLayout::Grid, 2);
  spec.rows = spec.columns = 100;
  spec.length = 1.0;
  spec.segments = 1;
  spec.bristle_radius = 1e-6;
  spec.jitter.direction = 1.5;
  const BrushPlanting planting = plant_brush(spec);
  REQUIRE(planting.failed);
  CHECK(planting.conflict.out_of_work);
  CHECK(planting.conflict.bristle > 100);
  CHECK(planting.conflict.bristle < spec.rows * spec.columns);
  CHECK(planting.bristles.empty());
  // The same layout with bristles 25 mm long, tilted up to 0.5 rad, is checked within it.
  spec.length = 0.025;
  spec.jitter.direction = 0.5;
  const BrushPlanting fitted = plant_brush(spec);
  CHECK_FALSE(fitted.failed);
  CHECK(fitted.bristles.size() == 10000);
}
