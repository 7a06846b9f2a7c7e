#pragma once
/// Pairs of overlapping axis-aligned boxes: a broad phase on the uniform grid of
/// contact/uniform_grid.hpp, for any set of boxes (segments at one instant, or swept over a
/// motion). Rod contact's broad phase (contact/rod_contact.hpp) and `check-contact`'s; the
/// same algorithm as contact/rod_overlaps.hpp's:
///
///   - cells of side h = the boxes' average largest side (at least the extent over the grid's
///     cell range, so clamping only catches overflow), anchored at the lower corner of all;
///   - each box listed in every cell it touches, (cell key, box) grouped by key (a counting
///     sort on a hash of the key);
///   - each pair of boxes that overlap taken once, in the one cell holding the lower corner of
///     their intersection;
///   - a box touching more than 64 cells (much longer than the average) stays out of the grid
///     and is tested against every box directly.
///
/// Deterministic: the result depends only on the boxes, and is sorted, for any `threads` (cells
/// are shared among them; `skip` must then be safe to call from several threads).

#include <functional>
#include <utility>
#include <vector>

#include "bristle/math/types.hpp"

namespace bristle {

struct AxisBox {
  Vec3 lo = Vec3::Zero(), hi = Vec3::Zero();
};

inline bool boxes_overlap(const AxisBox& a, const AxisBox& b) {
  return (a.lo.array() <= b.hi.array()).all() && (b.lo.array() <= a.hi.array()).all();
}

/// Every pair (i, j), i < j, of overlapping boxes for which `skip(i, j)` is false (or every
/// overlapping pair without `skip`), once each, sorted.
std::vector<std::pair<int, int>> overlapping_box_pairs(const std::vector<AxisBox>& boxes,
                                                       const std::function<bool(int, int)>& skip = {},
                                                       int threads = 1);

/// The pairs of `listed` whose boxes overlap, in the order listed, into `found`; blocks of the
/// list on threads (`block_found` their scratch), joined in order: the same for any `threads`.
void overlapping_listed_pairs(const std::vector<std::pair<int, int>>& listed, const std::vector<AxisBox>& boxes,
                              std::vector<std::pair<int, int>>& found,
                              std::vector<std::vector<std::pair<int, int>>>& block_found, int threads);

/// overlapping_box_pairs over and over for boxes that move a little between calls (a Verlet
/// list): the grid is built over boxes grown by a margin, and while every box lies within the
/// grown box it was listed with, the pairs are those listed then whose boxes overlap now. Any
/// pair overlapping now overlapped grown, so the result is exactly overlapping_box_pairs'
/// (same pairs, same order) whatever the margin; the margin only trades longer lists against
/// fewer rebuilds. A Newton step of rod contact gathers its pairs a dozen times over nearly the
/// same boxes; building the grid each time was a sixth of a pressed brush's step and ran on
/// one thread (docs/performance.md, "The broad phase's list kept across a step").
///
/// `skip` must give the same answers on every call (a fixed exclusion rule).
class BoxPairList {
 public:
  /// The overlapping pairs of `boxes` not skipped, sorted; `margin(i)` is how far box i is grown
  /// when the list is rebuilt.
  ///
  /// `shift` is subtracted from every box before it is compared with its grown box, and the
  /// list is built over boxes so shifted: boxes that move together (a brush dragged along) keep
  /// their list when the caller's shift moves with them. The result is the same for any shift:
  /// rounding is monotone, so boxes that overlap still overlap after the same subtraction, and
  /// the pairs returned are tested on the boxes as given.
  const std::vector<std::pair<int, int>>& pairs(const std::vector<AxisBox>& boxes,
                                                const std::function<double(int)>& margin,
                                                const std::function<bool(int, int)>& skip, int threads,
                                                const Vec3& shift = Vec3::Zero());
  /// pairs()' result restricted to the pairs with at least one box marked in `moving` (one
  /// entry per box), sorted: the same pairs pairs() would return among those, found through
  /// the list's pairs of each marked box only. Where few boxes move, the rest of the list is
  /// not read.
  const std::vector<std::pair<int, int>>& pairs_touching(const std::vector<AxisBox>& boxes,
                                                         const std::vector<char>& moving,
                                                         const std::function<double(int)>& margin,
                                                         const std::function<bool(int, int)>& skip, int threads,
                                                         const Vec3& shift = Vec3::Zero());
  /// Rebuild on the next call (the boxes changed in number or by a jump).
  void forget() { listed_valid_ = false; }
  /// Full rebuilds of the list, and updates where only the boxes that left their grown boxes
  /// were grown again and their pairs found anew.
  int rebuilds() const { return rebuilds_; }
  int regrowths() const { return regrowths_; }
  /// Of the updates, those that found the regrown boxes' pairs through the sweep index.
  int indexed_updates() const { return indexed_updates_; }

 private:
  std::vector<AxisBox> grown_;
  std::vector<std::pair<int, int>> listed_;
  // For each box, the positions in listed_ of its pairs (built when first needed after a
  // rebuild): box i's are box_pairs_[box_pairs_start_[i] .. box_pairs_start_[i + 1]).
  std::vector<int> box_pairs_start_, box_pairs_;
  bool box_pairs_valid_ = false;
  /// Whether every box lies in its grown box; otherwise grows again those that left it and
  /// finds their pairs (regrow_boxes), or where many left, rebuilds the list.
  void keep_list_valid(const std::vector<AxisBox>& boxes, const std::function<double(int)>& margin,
                       const std::function<bool(int, int)>& skip, int threads, const Vec3& shift);
  /// The list's pairs of the boxes of regrown_ (their grown_ already updated) found anew.
  void regrow_boxes(const std::function<bool(int, int)>& skip, int threads);
  /// regrow_boxes' pairs into found_ (unsorted) by testing each regrown box against every box.
  void regrow_against_all(const std::function<bool(int, int)>& skip, int threads);
  std::vector<int> regrown_;
  std::vector<char> regrown_mark_;
  // The grown boxes by their lower bound along one axis (a sweep index, built at the first
  // update after a rebuild and kept through the updates): a regrown box is tested only against
  // the boxes whose lower bound lies within the widest box's width below its own range, not
  // against every box. sweep_lo_[k] is grown_[sweep_order_[k]].lo[sweep_axis_].
  std::vector<int> sweep_order_;
  std::vector<double> sweep_lo_;
  int sweep_axis_ = 0;
  double sweep_width_ = 0.0;  // at least every grown box's width along the axis
  bool sweep_valid_ = false;
  int indexed_updates_ = 0;
  /// Whether the sweep index holds grown_ (building it, or moving the regrown boxes in it);
  /// false where a bound is not finite (the boxes are then tested against all).
  bool update_sweep();
  std::vector<std::pair<int, int>> merged_;
  int regrowths_ = 0;
  std::vector<std::pair<int, int>> found_;
  std::vector<std::vector<std::pair<int, int>>> block_found_;
  bool listed_valid_ = false;
  int rebuilds_ = 0;
};

}  // namespace bristle
