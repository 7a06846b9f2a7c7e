// Overlapping rod segments: a uniform grid as broad phase, segment_distance as narrow phase.
//
//   1. Every segment's bounding box, grown by its rod's radius.
//   2. A grid of cubic cells of side h = the boxes' average largest side, anchored at the
//      lower corner of all boxes. Each segment is listed in every cell its box touches, as
//      (cell key, segment) entries sorted by key: a run of equal keys is one cell.
//   3. In each cell, every pair of its segments whose boxes overlap is a candidate, tested
//      only in the cell that holds the lower corner of the boxes' intersection (a cell both
//      boxes touch, and only one), so no pair is tested twice and no hash set is needed.
//   4. A segment touching more than kMaxCellsPerSegment cells (much longer than the average)
//      stays out of the grid and is tested against every segment's box directly.
//
// The grid depends only on the input, and candidates are tested in key order with the lower
// segment first, so the output is the same on every run; it is sorted at the end anyway.

#include "bristle/contact/rod_overlaps.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <utility>

#include "bristle/contact/segment_distance.hpp"
#include "bristle/contact/uniform_grid.hpp"

namespace bristle {
namespace {

constexpr std::int64_t kMaxCellsPerSegment = 64;
constexpr double kHalfPi = 1.57079632679489661923;

struct Segment {
  int rod = 0, index = 0;   // rod, and segment within it
  Vec3 a, b;                // end points [m]
  double radius = 0.0;      // [m]
  double arc_start = 0.0;   // the rod's centre-line length before a [m]
  double length = 0.0;      // |b - a| [m]
  Vec3 lo, hi;              // bounding box grown by the radius [m]
};

using Cell = UniformGrid::Cell;


bool boxes_overlap(const Segment& p, const Segment& q) {
  return (p.lo.array() <= q.hi.array()).all() && (q.lo.array() <= p.hi.array()).all();
}

// Pairs of one rod that share a vertex are joined, not overlapping.
bool adjacent(const Segment& p, const Segment& q) { return p.rod == q.rod && std::abs(p.index - q.index) < 2; }

class Search {
 public:
  Search(std::vector<Segment> segments, const OverlapLimits& limits) : segments_(std::move(segments)) {
    max_overlaps_ = limits.max_overlaps;
    max_candidates_ = limits.max_candidates > 0 ? limits.max_candidates
                                                : 256LL * static_cast<long long>(segments_.size()) + 10000000LL;
  }

  OverlapReport run() {
    const UniformGrid grid = make_grid();
    std::vector<std::pair<std::uint64_t, int>> entries;
    std::vector<int> large;
    for (int i = 0; i < static_cast<int>(segments_.size()); ++i) {
      const Cell lo = grid.cell(segments_[i].lo), hi = grid.cell(segments_[i].hi);
      std::int64_t cells = 1;
      for (int k = 0; k < 3; ++k) cells *= std::min(hi[k] - lo[k] + 1, kMaxCellsPerSegment + 1);
      if (cells > kMaxCellsPerSegment) {
        large.push_back(i);
        continue;
      }
      for (std::int64_t x = lo[0]; x <= hi[0]; ++x)
        for (std::int64_t y = lo[1]; y <= hi[1]; ++y)
          for (std::int64_t z = lo[2]; z <= hi[2]; ++z) entries.emplace_back(UniformGrid::key({x, y, z}), i);
    }
    std::sort(entries.begin(), entries.end());

    bool going = true;
    for (std::size_t begin = 0; going && begin < entries.size();) {
      std::size_t end = begin;
      while (end < entries.size() && entries[end].first == entries[begin].first) ++end;
      for (std::size_t i = begin; going && i < end; ++i)
        for (std::size_t j = i + 1; going && j < end; ++j) {
          const Segment& p = segments_[entries[i].second];
          const Segment& q = segments_[entries[j].second];
          if (adjacent(p, q) || !boxes_overlap(p, q)) continue;
          if (UniformGrid::key(grid.cell(p.lo.cwiseMax(q.lo))) != entries[begin].first) continue;
          going = test(entries[i].second, entries[j].second);
        }
      begin = end;
    }
    // Oversized segments against every other (each pair of two oversized ones once).
    std::vector<char> is_large(segments_.size(), 0);
    for (const int i : large) is_large[i] = 1;
    for (const int i : large)
      for (int j = 0; going && j < static_cast<int>(segments_.size()); ++j) {
        if (j == i || (is_large[j] && j < i)) continue;
        if (adjacent(segments_[i], segments_[j]) || !boxes_overlap(segments_[i], segments_[j])) continue;
        going = test(i, j);
      }
    return finish();
  }

 private:
  UniformGrid make_grid() const { return UniformGrid::over(segments_); }

  // Tests segments i and j exactly; false once a limit is reached.
  bool test(int i, int j) {
    if (j < i) std::swap(i, j);  // the lower segment first: the same rounding whatever the order
    if (++candidates_ > max_candidates_) {
      complete_ = false;
      return false;
    }
    const Segment& p = segments_[i];
    const Segment& q = segments_[j];
    const SegmentDistance d = segment_distance(p.a, p.b, q.a, q.b);
    const double reach = p.radius + q.radius;
    if (!(d.distance < reach * (1.0 - kOverlapSlack))) return true;
    // Segments of one rod with at most pi r of centre line between them are joined by the
    // rod's own material (rod_overlaps.hpp; p comes first along the rod).
    if (p.rod == q.rod && q.arc_start - (p.arc_start + p.length) <= kHalfPi * reach) return true;
    overlaps_.push_back({p.rod, p.index, q.rod, q.index, d.distance, reach - d.distance, d.s, d.t});
    if (overlaps_.size() >= max_overlaps_) {
      complete_ = false;
      return false;
    }
    return true;
  }

  OverlapReport finish() {
    OverlapReport report;
    auto order = [](const SegmentOverlap& x, const SegmentOverlap& y) {
      return std::tie(x.rod_a, x.segment_a, x.rod_b, x.segment_b) < std::tie(y.rod_a, y.segment_a, y.rod_b, y.segment_b);
    };
    std::sort(overlaps_.begin(), overlaps_.end(), order);
    std::vector<std::pair<int, int>> rods;
    rods.reserve(overlaps_.size());
    for (const SegmentOverlap& o : overlaps_) rods.emplace_back(o.rod_a, o.rod_b);
    std::sort(rods.begin(), rods.end());
    report.rod_pairs = static_cast<int>(std::unique(rods.begin(), rods.end()) - rods.begin());
    report.overlaps = std::move(overlaps_);
    report.segments = static_cast<int>(segments_.size());
    report.candidates = std::min(candidates_, max_candidates_);
    report.complete = complete_;
    return report;
  }

  std::vector<Segment> segments_;
  std::size_t max_overlaps_ = 0;
  long long max_candidates_ = 0;
  long long candidates_ = 0;
  bool complete_ = true;
  std::vector<SegmentOverlap> overlaps_;
};

}  // namespace

OverlapReport find_rod_overlaps(const std::vector<std::vector<Vec3>>& centre_lines,
                                const std::vector<double>& radii, const OverlapLimits& limits) {
  assert(centre_lines.size() == radii.size());
  std::vector<Segment> segments;
  for (int r = 0; r < static_cast<int>(centre_lines.size()); ++r) {
    const std::vector<Vec3>& line = centre_lines[r];
    const Vec3 grow = Vec3::Constant(radii[r]);
    double arc = 0.0;
    for (int j = 0; j + 1 < static_cast<int>(line.size()); ++j) {
      Segment s;
      s.rod = r;
      s.index = j;
      s.a = line[j];
      s.b = line[j + 1];
      s.radius = radii[r];
      s.arc_start = arc;
      s.length = (s.b - s.a).norm();
      s.lo = s.a.cwiseMin(s.b) - grow;
      s.hi = s.a.cwiseMax(s.b) + grow;
      arc += s.length;
      segments.push_back(s);
    }
  }
  return Search(std::move(segments), limits).run();
}

OverlapReport find_initial_overlaps(const Model& model, const OverlapLimits& limits) {
  std::vector<std::vector<Vec3>> centre_lines;
  std::vector<double> radii;
  centre_lines.reserve(model.rods.size());
  radii.reserve(model.rods.size());
  for (const Rod& rod : model.rods) {
    centre_lines.push_back(rod.initial_positions);
    radii.push_back(rod.material.radius);
  }
  return find_rod_overlaps(centre_lines, radii, limits);
}

}  // namespace bristle
