#pragma once
/// Rods that interpenetrate: pairs of segments whose capsules (the segment swept by a ball of
/// the rod's radius) overlap. `bristle validate` reports them at the initial positions
/// (docs/contact.md, "Rods that start inside each other"); rod-rod contact
/// (contact/rod_contact.hpp) uses the same distance between segments.
///
/// Which pairs count. Segment j of a rod joins its vertices j and j + 1. Two segments overlap
/// when their centre lines pass closer than r_a + r_b (contact/segment_distance.hpp), by more
/// than the relative slack kOverlapSlack (touching within rounding is not overlapping):
///   - segments of different rods, always;
///   - segments of the same rod (one radius r) when they share no vertex (|j - k| >= 2) and
///     the rod's centre line between them (its edges strictly between the two) is longer
///     than pi r, half the circumference of its cross-section. Closer along the rod, the two
///     are joined by the rod's own material. A rod bent to a radius of curvature rho
///     has its points g apart along it 2 rho sin(g / (2 rho)) apart in space, which is at
///     least 2 r for every g >= pi r exactly when rho >= r: so a straight rod whose edges are
///     shorter than its diameter, or any rod bent no tighter than its own radius, does not
///     overlap itself, while one folded back onto itself does (and so does a corner sharper
///     than about 80 degrees: legs g / 2 from the corner are g sin(angle / 2) apart).
///
/// Broad phase: a uniform grid over the segments' bounding boxes (grown by their radii),
/// cells about the size of the average box; each pair sharing a cell is tested once, in the
/// cell holding the lower corner of the two boxes' intersection. A segment covering too many
/// cells is tested against every other instead. The cost is linear in the segments for
/// scenes of evenly sized segments, and bounded in any case by OverlapLimits.

#include <cstddef>
#include <vector>

#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// Capsules whose centre lines are at least (r_a + r_b) (1 - kOverlapSlack) apart touch
/// but do not overlap: bristles planted exactly a diameter apart (a spacing of 2 r, which
/// the brush generator accepts) stay clear of the check despite rounding.
constexpr double kOverlapSlack = 1e-9;

/// Two overlapping segments: segment `segment_a` of rod `rod_a` and segment `segment_b` of
/// rod `rod_b`, with (rod_a, segment_a) < (rod_b, segment_b).
struct SegmentOverlap {
  int rod_a = 0, segment_a = 0;
  int rod_b = 0, segment_b = 0;
  double distance = 0.0;  ///< between the centre lines [m]
  double depth = 0.0;     ///< r_a + r_b - distance [m], > 0
  double s = 0.0;         ///< closest point along segment a, in [0, 1]
  double t = 0.0;         ///< closest point along segment b, in [0, 1]
};

/// Bounds on the search, for pathological scenes (thousands of segments in one place).
struct OverlapLimits {
  std::size_t max_overlaps = 1000000;  ///< stop after finding this many
  /// Stop after testing this many candidate pairs; 0: 256 per segment + 10^7 (a tenth of a
  /// second to a few seconds; a brush tests a few dozen per segment).
  long long max_candidates = 0;
};

struct OverlapReport {
  /// Sorted by (rod_a, segment_a, rod_b, segment_b).
  std::vector<SegmentOverlap> overlaps;
  /// Distinct (rod_a, rod_b) among `overlaps` (rod_a == rod_b: a rod overlapping itself).
  int rod_pairs = 0;
  int segments = 0;               ///< segments searched
  long long candidates = 0;       ///< pairs whose grown boxes overlap, tested exactly
  /// False when the search stopped at a limit: `overlaps` is then only part of them.
  bool complete = true;
};

/// Overlaps among rods given by their centre lines (each at least 2 vertices, finite;
/// z = 0 for 2D scenes) and radii [m].
OverlapReport find_rod_overlaps(const std::vector<std::vector<Vec3>>& centre_lines,
                                const std::vector<double>& radii, const OverlapLimits& limits = {});

/// Overlaps among a model's rods at their initial positions, each rod's radius its
/// material's.
OverlapReport find_initial_overlaps(const Model& model, const OverlapLimits& limits = {});

}  // namespace bristle
