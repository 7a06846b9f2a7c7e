#pragma once
/// Checking the frames of a run for rod-rod contact failures (`bristle check-contact`,
/// docs/contact.md, "Checking a run"): segments that overlap at a frame, and segments whose
/// centre lines pass through each other between two frames.
///
/// Which pairs count: exactly the pairs rod-rod contact acts on (contact/rod_contact.hpp):
/// segments of different rods; and, with `self`, segments of one rod that share no vertex
/// and have more than pi (r_a + r_b) / 2 = pi r of the rod's rest length between them.
///
/// Overlap at a frame: centre lines closer than r_a + r_b - tol min(r_a, r_b), measured as
/// the depth (r_a + r_b - d) / min(r_a, r_b), a fraction of the smaller radius.
///
/// Crossing between two frames: each vertex moves on the straight line from its position at
/// one frame to its position at the next (backward Euler's motion over a step: with
/// frame_dt == dt it is the step's own path, which the solver's CCD keeps clear). A pair
/// crosses when its centre lines meet somewhere on that motion: their distance d(t), t in
/// [0, 1], falls to `delta` (crossing_distance: 1e-6 of the smaller radius, or the rounding
/// of the coordinates if that is larger). d(t) is Lipschitz with the constant of additive CCD
/// (contact/capsule_ccd.hpp): no point of one segment approaches any point of the other faster
/// than L = max(|dp0|, |dp1|) + max(|dq0|, |dq1|) per unit t, the displacements' mean removed.
/// So on an interval [a, b], d >= (d(a) + d(b) - L (b - a)) / 2, and a branch-and-bound search
/// that splits an interval only while that bound is <= delta decides whether min d <= delta with
/// nothing but distances: it works for every configuration (skew, parallel, coplanar, 2D),
/// needs no root of a polynomial, and a pair that slides past at a gap is ruled out in one
/// evaluation.

#include <string>
#include <vector>

#include "bristle/contact/box_pairs.hpp"
#include "bristle/math/types.hpp"

namespace bristle {

/// How close the centre lines must come to count as meeting, as a fraction of the smaller
/// radius (crossing_distance).
constexpr double kCrossingDistanceFraction = 1e-6;

/// What the branch-and-bound search of one pair found.
struct CentreLineMeeting {
  bool met = false;       ///< d(t) <= delta somewhere in [0, 1] (or could not be ruled out)
  double t = 0.0;         ///< where: the first such t found; else where d was smallest
  double distance = 0.0;  ///< d(t) there [m]
  int evaluations = 0;    ///< distances computed
  /// The search stopped at its budget (kMaxMeetingEvaluations) with d between delta and a
  /// hair above it everywhere it looked: `met` is then true (not ruled out).
  bool undecided = false;
};

/// The search's budget of distance evaluations per pair.
constexpr int kMaxMeetingEvaluations = 1 << 16;

/// Whether segments p0-p1 and q0-q1, each end point moving on the straight line to its
/// displacement (p0 + t dp0, ...), have centre lines within `delta` of each other for some t
/// in [0, 1]. Inputs finite, delta > 0.
CentreLineMeeting centre_lines_meet(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, const Vec3& dp0,
                                    const Vec3& dp1, const Vec3& dq0, const Vec3& dq1, double delta);

/// delta for two segments of radii r_a, r_b whose end points (at both frames) have
/// coordinates up to `scale` in magnitude: max(kCrossingDistanceFraction min(r_a, r_b),
/// 64 eps scale), so that rounding in the distance never hides a meeting.
double crossing_distance(double r_a, double r_b, double scale);

/// The box a segment moving from (a, b) to (c, d) sweeps, grown so that a segment whose centre
/// line comes within crossing_distance of its own has a box that overlaps it: by
/// kCrossingDistanceFraction radius plus `rounding` (crossing_distance(0, 0, scale) with the
/// largest coordinate of all the segments checked), each of the pair's two boxes one share.
AxisBox crossing_box(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d, double radius, double rounding);

/// The crossing test of one pair of segments of radii r_a, r_b, moving on straight lines from
/// p0-p1 and q0-q1 to r0-r1 and s0-s1: centre_lines_meet with that pair's crossing_distance.
/// A crossing is a meeting that is not already one at the start (new_crossing).
CentreLineMeeting pair_crossing(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, const Vec3& r0,
                                const Vec3& r1, const Vec3& s0, const Vec3& s1, double r_a, double r_b);
inline bool new_crossing(const CentreLineMeeting& meeting) { return meeting.met && meeting.t > 0.0; }

/// A rod as the check needs it: its radius and rest lengths (which decide the pairs of one rod).
struct ContactCheckRod {
  double radius = 0.0;                ///< [m]
  std::vector<double> rest_lengths;   ///< one per edge [m]
};

/// Two segments at a frame whose capsules overlap: the depth as a fraction of the smaller
/// radius, (r_a + r_b - d) / min(r_a, r_b) (negative: a gap).
struct SegmentPairOverlap {
  int rod_a = 0, segment_a = 0, rod_b = 0, segment_b = 0;  ///< (rod_a, segment_a) < (rod_b, segment_b)
  double distance = 0.0;  ///< between the centre lines [m]
  double depth = 0.0;     ///< fraction of the smaller radius
};

/// Two segments whose centre lines meet between frame k and frame k + 1.
struct SegmentPairCrossing {
  int rod_a = 0, segment_a = 0, rod_b = 0, segment_b = 0;
  double t = 0.0;         ///< where along the motion, in [0, 1]
  double distance = 0.0;  ///< centre-line distance there [m]
  bool undecided = false; ///< CentreLineMeeting::undecided
};

struct FrameOverlaps {
  std::vector<SegmentPairOverlap> beyond;  ///< depth > tolerance, sorted by the segments
  /// The deepest pair among those whose capsules' boxes overlap (within tolerance or not);
  /// `has_deepest` false when there is none.
  SegmentPairOverlap deepest;
  bool has_deepest = false;
};

/// Centre lines: one list of vertices per rod, in the order of the rods given to the checker.
using CentreLines = std::vector<std::vector<Vec3>>;

class ContactChecker {
 public:
  /// `self`: pairs of one rod count (rod_contact.self). `threads` share the narrow phase; the
  /// results are the same for every count.
  ContactChecker(std::vector<ContactCheckRod> rods, bool self, int threads = 1);

  /// Whether rod contact acts on segment i of rod a and segment j of rod b (the rule of
  /// RodContact, contact/rod_contact.hpp).
  bool subject_to_contact(int rod_a, int segment_a, int rod_b, int segment_b) const;

  /// Pairs whose depth exceeds `tolerance` (a fraction of the smaller radius) at `x`.
  FrameOverlaps overlaps(const CentreLines& x, double tolerance) const;

  /// Pairs whose centre lines meet on the straight motion from `from` to `to`, sorted; not
  /// those that meet at `from` already (they met before, or started so: the overlap at that
  /// frame reports them).
  std::vector<SegmentPairCrossing> crossings(const CentreLines& from, const CentreLines& to) const;

  int segment_count() const { return static_cast<int>(segments_.size()); }

 private:
  struct Segment {
    int rod = 0, index = 0;
    double radius = 0.0, arc_start = 0.0, rest_length = 0.0;
  };
  bool excluded(const Segment& a, const Segment& b) const;
  void check_shape(const CentreLines& x) const;

  std::vector<Segment> segments_;
  std::vector<int> first_segment_;  // per rod
  bool self_ = true;
  int threads_ = 1;
};

}  // namespace bristle
