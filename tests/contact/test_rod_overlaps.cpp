// The overlap finder: known configurations (crossing rods, parallel rods touching or just
// apart, a folded rod, 2D), the grid against an all-pairs search on random scenes, its cost
// on a big brush, and its limits.

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

#include <doctest/doctest.h>

#include "bristle/contact/rod_overlaps.hpp"
#include "bristle/contact/segment_distance.hpp"
#include "bristle/scene/generators.hpp"

using namespace bristle;

namespace {

using Lines = std::vector<std::vector<Vec3>>;

std::vector<Vec3> line(const Vec3& from, const Vec3& to, int segments) { return straight_rod(from, to, segments); }

/// Every pair, by the rules of rod_overlaps.hpp, without a grid: the reference.
std::vector<std::tuple<int, int, int, int>> all_pairs(const Lines& lines, const std::vector<double>& radii) {
  struct Seg { int rod, index; Vec3 a, b; double arc; };
  std::vector<Seg> segs;
  for (int r = 0; r < static_cast<int>(lines.size()); ++r) {
    double arc = 0.0;
    for (int j = 0; j + 1 < static_cast<int>(lines[r].size()); ++j) {
      segs.push_back({r, j, lines[r][j], lines[r][j + 1], arc});
      arc += (lines[r][j + 1] - lines[r][j]).norm();
    }
  }
  std::vector<std::tuple<int, int, int, int>> found;
  for (std::size_t i = 0; i < segs.size(); ++i)
    for (std::size_t k = i + 1; k < segs.size(); ++k) {
      const Seg& p = segs[i];
      const Seg& q = segs[k];
      if (p.rod == q.rod && q.index - p.index < 2) continue;
      const SegmentDistance d = segment_distance(p.a, p.b, q.a, q.b);
      const double reach = radii[p.rod] + radii[q.rod];
      if (!(d.distance < reach * (1 - kOverlapSlack))) continue;
      if (p.rod == q.rod && q.arc - (p.arc + (p.b - p.a).norm()) <= 1.5707963267948966 * reach) continue;
      found.emplace_back(p.rod, p.index, q.rod, q.index);
    }
  return found;
}

std::vector<std::tuple<int, int, int, int>> keys(const OverlapReport& report) {
  std::vector<std::tuple<int, int, int, int>> out;
  for (const SegmentOverlap& o : report.overlaps) out.emplace_back(o.rod_a, o.segment_a, o.rod_b, o.segment_b);
  return out;
}

}  // namespace

TEST_CASE("rod overlaps: two rods crossing over each other") {
  // Rod 0 along x, rod 1 along y passing 0.15 mm above it at x = 0.0045 (inside segment 4
  // of rod 0) and y = 0 (the vertex between its segments 4 and 5). Radii 0.1 mm each.
  const double r = 1e-4;
  const Lines lines = {line(Vec3(0, 0, 0), Vec3(0.01, 0, 0), 10), line(Vec3(0.0045, -0.005, 1.5e-4), Vec3(0.0045, 0.005, 1.5e-4), 10)};
  const OverlapReport report = find_rod_overlaps(lines, {r, r});
  REQUIRE(report.overlaps.size() == 2);
  CHECK(report.complete);
  CHECK(report.rod_pairs == 1);
  CHECK(report.segments == 20);
  for (const SegmentOverlap& o : report.overlaps) {
    CHECK(o.rod_a == 0);
    CHECK(o.segment_a == 4);
    CHECK(o.rod_b == 1);
    CHECK(o.distance == doctest::Approx(1.5e-4));
    CHECK(o.depth == doctest::Approx(0.5e-4));
    CHECK(o.s == doctest::Approx(0.5));
  }
  CHECK(report.overlaps[0].segment_b == 4);
  CHECK(report.overlaps[0].t == doctest::Approx(1.0));
  CHECK(report.overlaps[1].segment_b == 5);
  CHECK(report.overlaps[1].t == doctest::Approx(0.0));

  // Lifted to 0.25 mm above: clear of each other.
  const Lines apart = {lines[0], line(Vec3(0.0045, -0.005, 2.5e-4), Vec3(0.0045, 0.005, 2.5e-4), 10)};
  CHECK(find_rod_overlaps(apart, {r, r}).overlaps.empty());
  // With a thicker second rod (0.2 mm) the same rods overlap again: the reach is r_a + r_b.
  CHECK(find_rod_overlaps(apart, {r, 2 * r}).overlaps.size() == 2);
}

TEST_CASE("rod overlaps: parallel rods just touching do not overlap, just closer do") {
  const double r = 1e-4;
  auto pair_at = [&](double gap) {
    return Lines{line(Vec3(0, 0, 0), Vec3(0, 0.02, 0), 8), line(Vec3(gap, 0, 0), Vec3(gap, 0.02, 0), 8)};
  };
  CHECK(find_rod_overlaps(pair_at(2 * r), {r, r}).overlaps.empty());            // touching
  CHECK(find_rod_overlaps(pair_at(2 * r * (1 + 1e-6)), {r, r}).overlaps.empty());  // just apart
  const OverlapReport close = find_rod_overlaps(pair_at(2 * r * (1 - 1e-6)), {r, r});
  // Side by side, each segment overlaps its twin and the two next to it (at their shared
  // end points): 8 + 2 * 7.
  CHECK(close.overlaps.size() == 8 + 2 * 7);
  CHECK(close.rod_pairs == 1);
  for (const SegmentOverlap& o : close.overlaps) {
    CHECK(std::abs(o.segment_a - o.segment_b) <= 1);
    CHECK(o.depth == doctest::Approx(2 * r * 1e-6).epsilon(1e-6));
  }
}

TEST_CASE("rod overlaps: a rod folded onto itself overlaps itself; a straight one never does") {
  const double r = 1e-4;
  // A hairpin: 10 segments out along x, a 0.1 mm step up, 10 segments back, 0.1 mm above
  // the first leg (closer than the diameter 0.2 mm).
  std::vector<Vec3> hairpin = line(Vec3(0, 0, 0), Vec3(0.01, 0, 0), 10);
  const std::vector<Vec3> back = line(Vec3(0.01, 1e-4, 0), Vec3(0, 1e-4, 0), 10);
  hairpin.insert(hairpin.end(), back.begin(), back.end());
  const OverlapReport folded = find_rod_overlaps({hairpin}, {r});
  CHECK(!folded.overlaps.empty());
  CHECK(folded.rod_pairs == 1);
  for (const SegmentOverlap& o : folded.overlaps) {
    CHECK(o.rod_a == 0);
    CHECK(o.rod_b == 0);
    CHECK(o.segment_b - o.segment_a >= 2);  // never neighbours
  }
  // The first segment lies under the last one.
  const bool ends = std::any_of(folded.overlaps.begin(), folded.overlaps.end(),
                                [](const SegmentOverlap& o) { return o.segment_a == 0 && o.segment_b == 20; });
  CHECK(ends);
  CHECK(keys(folded) == all_pairs({hairpin}, {r}));

  // A straight rod whose edges (0.05 mm) are much shorter than its diameter: segments two
  // to four apart are within a diameter of each other, but along the rod too: no overlap.
  CHECK(find_rod_overlaps({line(Vec3(0, 0, 0), Vec3(0.005, 0, 0), 100)}, {r}).overlaps.empty());
  // Nor does a rod bent into a half circle of radius 5 mm (50 r), or of 1.05 r, just
  // looser than its own radius, in fine segments.
  auto half_circle = [](double radius, int segments) {
    std::vector<Vec3> arc;
    for (int k = 0; k <= segments; ++k) {
      const double phi = 3.141592653589793 * k / segments;
      arc.push_back(Vec3(radius * std::cos(phi), radius * std::sin(phi), 0));
    }
    return arc;
  };
  CHECK(find_rod_overlaps({half_circle(0.005, 400)}, {r}).overlaps.empty());
  CHECK(find_rod_overlaps({half_circle(1.05 * r, 400)}, {r}).overlaps.empty());
}

TEST_CASE("rod overlaps: 2D scenes, all in the plane z = 0") {
  const double r = 1e-4;
  // An X of two rods in the plane crossing at their middle vertex; a third rod far away.
  const Lines lines = {line(Vec3(-0.01, -0.01, 0), Vec3(0.01, 0.01, 0), 4), line(Vec3(-0.01, 0.01, 0), Vec3(0.01, -0.01, 0), 4),
                       line(Vec3(0.05, 0, 0), Vec3(0.06, 0, 0), 4)};
  const OverlapReport report = find_rod_overlaps(lines, {r, r, r});
  CHECK(report.rod_pairs == 1);
  REQUIRE(report.overlaps.size() == 4);  // segments 1 and 2 of each meet at the crossing
  for (const SegmentOverlap& o : report.overlaps) {
    CHECK(o.rod_a == 0);
    CHECK(o.rod_b == 1);
    CHECK(o.distance == doctest::Approx(0.0).scale(1.0));
    CHECK(o.depth == doctest::Approx(2 * r));
  }
  CHECK(keys(report) == all_pairs(lines, {r, r, r}));
}

TEST_CASE("rod overlaps: the grid finds exactly what an all-pairs search finds") {
  std::mt19937_64 rng(16);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int scene = 0; scene < 12; ++scene) {
    CAPTURE(scene);
    const int dimension = scene % 3 == 2 ? 2 : 3;
    Lines lines;
    std::vector<double> radii;
    const int rods = 5 + scene * 3;
    for (int r = 0; r < rods; ++r) {
      // Random walks in a 2 cm box, steps of about 1 mm, some rods with one long segment
      // (the grid's oversized path), radii 0.05 to 0.5 mm.
      Vec3 x(0.01 * unit(rng), 0.01 * unit(rng), dimension == 3 ? 0.01 * unit(rng) : 0.0);
      std::vector<Vec3> walk{x};
      const bool long_segment = r % 7 == 3;
      const int steps = long_segment ? 1 : 3 + static_cast<int>(10 * (unit(rng) + 1));
      const double step = long_segment ? 0.03 : 0.001;
      for (int k = 0; k < steps; ++k) {
        Vec3 d(unit(rng), unit(rng), dimension == 3 ? unit(rng) : 0.0);
        x += step * d.normalized();
        walk.push_back(x);
      }
      lines.push_back(walk);
      radii.push_back(5e-5 * (1 + 4.5 * (unit(rng) + 1)));
    }
    const OverlapReport report = find_rod_overlaps(lines, radii);
    CHECK(report.complete);
    const auto expected = all_pairs(lines, radii);
    CHECK(!expected.empty());
    CHECK(keys(report) == expected);
    // Sorted, lower segment first, depths consistent.
    for (const SegmentOverlap& o : report.overlaps) {
      CHECK(std::tie(o.rod_a, o.segment_a) < std::tie(o.rod_b, o.segment_b));
      CHECK(o.depth == doctest::Approx(radii[o.rod_a] + radii[o.rod_b] - o.distance));
      CHECK(o.depth > 0.0);
    }
  }
}

TEST_CASE("rod overlaps: a 1000-bristle brush of 20 segments costs a few dozen tests per segment") {
  // 1000 parallel bristles 0.5 mm apart, radius 0.1 mm, 25 mm long: none overlap. An
  // all-pairs search would test 2 * 10^8 pairs; the grid tests only neighbours.
  BrushSpec spec;
  spec.layout = BrushLayout::Grid;
  spec.rows = 25;
  spec.columns = 40;
  spec.spacing = 5e-4;
  spec.direction = Vec3(0, -1, 0);
  spec.length = 0.025;
  spec.segments = 20;
  const Lines bristles = brush_bristles(spec);
  const std::vector<double> radii(bristles.size(), 1e-4);
  const OverlapReport clear = find_rod_overlaps(bristles, radii);
  CHECK(clear.overlaps.empty());
  CHECK(clear.segments == 20000);
  CHECK(clear.candidates < 20LL * clear.segments);
  // Thicker bristles (0.3 mm radius) overlap their neighbours in rows and columns (0.5 mm <
  // 0.6 mm apart), not those across the diagonals (0.71 mm).
  const OverlapReport thick = find_rod_overlaps(bristles, std::vector<double>(bristles.size(), 3e-4));
  CHECK(thick.complete);
  // Neighbouring bristle pairs: 25 rows x 39 + 24 x 40 columns; each overlapping pair of
  // bristles has 20 + 2 * 19 overlapping segment pairs.
  CHECK(thick.rod_pairs == 25 * 39 + 24 * 40);
  CHECK(thick.overlaps.size() == static_cast<std::size_t>(thick.rod_pairs) * (20 + 2 * 19));
}

TEST_CASE("rod overlaps: limits stop the search and say so") {
  // 200 copies of the same rod: every pair of rods overlaps everywhere.
  const Lines lines(200, line(Vec3(0, 0, 0), Vec3(0.01, 0, 0), 5));
  const std::vector<double> radii(lines.size(), 1e-4);
  OverlapLimits limits;
  limits.max_overlaps = 1000;
  const OverlapReport capped = find_rod_overlaps(lines, radii, limits);
  CHECK(!capped.complete);
  CHECK(capped.overlaps.size() == 1000);
  limits = {};
  limits.max_candidates = 500;
  const OverlapReport budget = find_rod_overlaps(lines, radii, limits);
  CHECK(!budget.complete);
  CHECK(budget.candidates == 500);
  CHECK(budget.overlaps.size() <= 500);
  const OverlapReport full = find_rod_overlaps(lines, radii);
  CHECK(full.complete);
  CHECK(full.rod_pairs == 200 * 199 / 2);
  // Each pair of rods: 5 twins + 2 * 4 neighbours sharing an end point.
  CHECK(full.overlaps.size() == static_cast<std::size_t>(200 * 199 / 2) * (5 + 2 * 4));
}
