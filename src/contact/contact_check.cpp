// Overlaps at a frame and crossings between frames (contact/contact_check.hpp): a grid broad
// phase (contact/box_pairs.hpp), segment_distance as the narrow phase of both, and a
// branch-and-bound search over the motion for crossings.

#include "bristle/contact/contact_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "bristle/contact/box_pairs.hpp"
#include "bristle/contact/contact_pairs.hpp"
#include "bristle/contact/segment_distance.hpp"

namespace bristle {
namespace {

// Intervals of the motion narrower than this are not split further (about 1e-12 of it).
constexpr double kMinInterval = 1.0 / 1099511627776.0;  // 2^-40

struct Interval {
  double a, b, da, db;
};

double max_abs(const Vec3& x) { return x.cwiseAbs().maxCoeff(); }

}  // namespace

CentreLineMeeting centre_lines_meet(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, const Vec3& dp0,
                                    const Vec3& dp1, const Vec3& dq0, const Vec3& dq1, double delta) {
  CentreLineMeeting result;
  auto distance = [&](double t) {
    ++result.evaluations;
    return segment_distance(p0 + t * dp0, p1 + t * dp1, q0 + t * dq0, q1 + t * dq1).distance;
  };
  // The Lipschitz constant of d(t) (additive CCD's bound, contact/capsule_ccd.hpp).
  const Vec3 mean = 0.25 * (dp0 + dp1 + dq0 + dq1);
  const double speed = std::max((dp0 - mean).norm(), (dp1 - mean).norm()) +
                       std::max((dq0 - mean).norm(), (dq1 - mean).norm());

  const double d0 = distance(0.0);
  result.t = 0.0;
  result.distance = d0;
  if (d0 <= delta) {
    result.met = true;
    return result;
  }
  const double d1 = distance(1.0);
  if (d1 < result.distance) {
    result.t = 1.0;
    result.distance = d1;
  }
  if (d1 <= delta) result.met = true;  // at t = 1 at the latest; the search looks for earlier

  // Depth first, the earlier half first: the first meeting found is preceded by intervals
  // already ruled out, and once one is found only what lies before it is searched further.
  std::vector<Interval> stack{{0.0, 1.0, d0, d1}};
  bool unresolved = false;  // an interval left with its bound <= delta but too narrow to split
  while (!stack.empty()) {
    const Interval in = stack.back();
    stack.pop_back();
    const double width = in.b - in.a;
    if (0.5 * (in.da + in.db - speed * width) > delta) continue;  // d > delta all along
    if (width <= kMinInterval) {
      if (in.db > delta) unresolved = true;
      continue;
    }
    if (result.evaluations >= kMaxMeetingEvaluations) {
      unresolved = true;
      break;
    }
    const double m = in.a + 0.5 * width;
    const double dm = distance(m);
    if (dm <= delta) {
      // A meeting at m: everything on the stack lies after it.
      result.met = true;
      result.t = m;
      result.distance = dm;
      stack.clear();
      stack.push_back({in.a, m, in.da, dm});
      continue;
    }
    if (!result.met && dm < result.distance) {
      result.t = m;
      result.distance = dm;
    }
    stack.push_back({m, in.b, dm, in.db});
    stack.push_back({in.a, m, in.da, dm});
  }
  if (!result.met && unresolved) {
    // d came within a hair (speed x 2^-40) of delta and could not be ruled out.
    result.met = true;
    result.undecided = true;
  }
  return result;
}

double crossing_distance(double r_a, double r_b, double scale) {
  return std::max(kCrossingDistanceFraction * std::min(r_a, r_b),
                  64.0 * std::numeric_limits<double>::epsilon() * scale);
}

AxisBox crossing_box(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d, double radius, double rounding) {
  const Vec3 grow = Vec3::Constant(kCrossingDistanceFraction * radius + rounding);
  AxisBox box;
  box.lo = a.cwiseMin(b).cwiseMin(c).cwiseMin(d) - grow;
  box.hi = a.cwiseMax(b).cwiseMax(c).cwiseMax(d) + grow;
  return box;
}

CentreLineMeeting pair_crossing(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, const Vec3& r0,
                                const Vec3& r1, const Vec3& s0, const Vec3& s1, double r_a, double r_b) {
  const double scale = std::max({max_abs(p0), max_abs(p1), max_abs(q0), max_abs(q1), max_abs(r0), max_abs(r1),
                                 max_abs(s0), max_abs(s1)});
  return centre_lines_meet(p0, p1, q0, q1, r0 - p0, r1 - p1, s0 - q0, s1 - q1, crossing_distance(r_a, r_b, scale));
}

ContactChecker::ContactChecker(std::vector<ContactCheckRod> rods, bool self, int threads)
    : self_(self), threads_(std::max(threads, 1)) {
  for (int r = 0; r < static_cast<int>(rods.size()); ++r) {
    first_segment_.push_back(static_cast<int>(segments_.size()));
    double arc = 0.0;
    for (int j = 0; j < static_cast<int>(rods[r].rest_lengths.size()); ++j) {
      Segment s;
      s.rod = r;
      s.index = j;
      s.radius = rods[r].radius;
      s.arc_start = arc;
      s.rest_length = rods[r].rest_lengths[j];
      arc += s.rest_length;
      segments_.push_back(s);
    }
  }
  first_segment_.push_back(static_cast<int>(segments_.size()));
}

bool ContactChecker::excluded(const Segment& a, const Segment& b) const { return contact_pair_excluded(a, b, self_); }

bool ContactChecker::subject_to_contact(int rod_a, int segment_a, int rod_b, int segment_b) const {
  return !excluded(segments_.at(first_segment_.at(rod_a) + segment_a), segments_.at(first_segment_.at(rod_b) + segment_b));
}

void ContactChecker::check_shape(const CentreLines& x) const {
  if (x.size() + 1 != first_segment_.size()) throw std::invalid_argument("ContactChecker: wrong number of rods");
  for (std::size_t r = 0; r < x.size(); ++r) {
    const std::size_t edges = static_cast<std::size_t>(first_segment_[r + 1] - first_segment_[r]);
    if (edges > 0 ? x[r].size() != edges + 1 : x[r].size() > 1)
      throw std::invalid_argument("ContactChecker: a rod's vertex count does not match its rest lengths");
  }
}

FrameOverlaps ContactChecker::overlaps(const CentreLines& x, double tolerance) const {
  check_shape(x);
  const int n = segment_count();
  std::vector<AxisBox> boxes(n);
  for (int k = 0; k < n; ++k) {
    const Segment& s = segments_[k];
    const Vec3& a = x[s.rod][s.index];
    const Vec3& b = x[s.rod][s.index + 1];
    boxes[k].lo = a.cwiseMin(b) - Vec3::Constant(s.radius);
    boxes[k].hi = a.cwiseMax(b) + Vec3::Constant(s.radius);
  }
  const auto candidates =
      overlapping_box_pairs(boxes, [&](int i, int j) { return excluded(segments_[i], segments_[j]); });
  const int count = static_cast<int>(candidates.size());
  std::vector<SegmentPairOverlap> found(count);
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads_) if (threads_ > 1 && count > 256)
  for (int c = 0; c < count; ++c) {
    const Segment& p = segments_[candidates[c].first];
    const Segment& q = segments_[candidates[c].second];
    const double d = segment_distance(x[p.rod][p.index], x[p.rod][p.index + 1], x[q.rod][q.index],
                                      x[q.rod][q.index + 1])
                         .distance;
    found[c] = {p.rod, p.index, q.rod, q.index, d, (p.radius + q.radius - d) / std::min(p.radius, q.radius)};
  }
  FrameOverlaps result;
  for (const SegmentPairOverlap& o : found) {
    if (!result.has_deepest || o.depth > result.deepest.depth) {
      result.deepest = o;
      result.has_deepest = true;
    }
    if (o.depth > tolerance) result.beyond.push_back(o);
  }
  return result;
}

std::vector<SegmentPairCrossing> ContactChecker::crossings(const CentreLines& from, const CentreLines& to) const {
  check_shape(from);
  check_shape(to);
  const int n = segment_count();
  double scale = 0.0;
  for (std::size_t r = 0; r < from.size(); ++r)
    for (std::size_t v = 0; v < from[r].size(); ++v) scale = std::max({scale, max_abs(from[r][v]), max_abs(to[r][v])});
  // Each box grown by its share of delta: the two growths add up to at least any pair's delta.
  const double rounding = crossing_distance(0.0, 0.0, scale);
  std::vector<AxisBox> boxes(n);
  for (int k = 0; k < n; ++k) {
    const Segment& s = segments_[k];
    boxes[k] = crossing_box(from[s.rod][s.index], from[s.rod][s.index + 1], to[s.rod][s.index],
                            to[s.rod][s.index + 1], s.radius, rounding);
  }
  const auto candidates =
      overlapping_box_pairs(boxes, [&](int i, int j) { return excluded(segments_[i], segments_[j]); });
  const int count = static_cast<int>(candidates.size());
  std::vector<CentreLineMeeting> met(count);
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_) if (threads_ > 1 && count > 64)
  for (int c = 0; c < count; ++c) {
    const Segment& p = segments_[candidates[c].first];
    const Segment& q = segments_[candidates[c].second];
    const Vec3 &p0 = from[p.rod][p.index], &p1 = from[p.rod][p.index + 1];
    const Vec3 &q0 = from[q.rod][q.index], &q1 = from[q.rod][q.index + 1];
    const Vec3 &r0 = to[p.rod][p.index], &r1 = to[p.rod][p.index + 1];
    const Vec3 &s0 = to[q.rod][q.index], &s1 = to[q.rod][q.index + 1];
    met[c] = pair_crossing(p0, p1, q0, q1, r0, r1, s0, s1, p.radius, q.radius);
  }
  std::vector<SegmentPairCrossing> result;
  for (int c = 0; c < count; ++c) {
    // Centre lines already meeting at `from` met before (or the run started so): the
    // overlap at that frame reports them, and they are no new crossing.
    if (!new_crossing(met[c])) continue;
    const Segment& p = segments_[candidates[c].first];
    const Segment& q = segments_[candidates[c].second];
    result.push_back({p.rod, p.index, q.rod, q.index, met[c].t, met[c].distance, met[c].undecided});
  }
  return result;
}

}  // namespace bristle
