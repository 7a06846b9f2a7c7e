// Rod-rod contact pairs: a uniform grid over the segments' swept boxes (broad phase), the exact
// gap at the path's start (narrow phase), additive CCD for the step bound.

#include "bristle/contact/rod_contact.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bristle/contact/box_pairs.hpp"
#include "bristle/contact/contact_pairs.hpp"
#include "bristle/contact/capsule_ccd.hpp"
#include "bristle/contact/contact_check.hpp"
#include "bristle/contact/segment_distance.hpp"
#include "bristle/contact/segment_distance_derivatives.hpp"

namespace bristle {
namespace {

constexpr double kHalfGapSlope = kBarrierHalfGapSlope;  // rod_contact.hpp

}  // namespace

RodContact::RodContact(const Model& model, const VecX& masses)
    : enabled_(model.rod_contact.enabled), self_(model.rod_contact.self), friction_(model.rod_contact.friction),
      dimension_(model.dimension),
      gravity_(gravity_magnitude(model)) {
  if (!enabled_) return;
  const DofLayout& layout = model.layout;
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r) {
    const Rod& rod = model.rods[r];
    double arc = 0.0;
    for (int j = 0; j < rod.edge_count(); ++j) {
      Segment s;
      s.rod = r;
      s.index = j;
      s.dof0 = layout.vertex_dof(r, j);
      s.dof1 = layout.vertex_dof(r, j + 1);
      s.vertex0 = layout.global_vertex(r, j);
      s.radius = rod.material.radius;
      s.arc_start = arc;
      s.rest_length = rod.rest_lengths[j];
      s.mass = masses[s.dof0] + masses[s.dof1];
      s.fixed = layout.free_index(s.dof0) < 0 && layout.free_index(s.dof1) < 0;
      arc += s.rest_length;
      segments_.push_back(s);
    }
  }
}

namespace {
/// Whether a pair at gap `gap` at a path's start, whose segments' points move at most `travel`
/// relative to each other along it, stays clear of the barrier all the way (collect, below).
/// Monotone in gap: a lower bound on the gap that passes, the gap passes.
bool stays_clear_on_path(double gap, double travel, double gap_hat) {
  return travel <= 0.2 * gap && gap - travel >= 2.0 * gap_hat;
}

/// How far any point of segment P moves relative to any point of segment Q when their ends
/// move by dp0, dp1 and dq0, dq1: P(s) - Q(t) moves by a convex combination of the four
/// differences dp_k - dq_l (weights (1 - s or s)(1 - t or t)), so by at most the longest. At
/// most the sum of the two segments' travels, and far less for segments moving together.
double relative_travel(const Vec3& dp0, const Vec3& dp1, const Vec3& dq0, const Vec3& dq1) {
  return std::sqrt(std::max({(dp0 - dq0).squaredNorm(), (dp0 - dq1).squaredNorm(), (dp1 - dq0).squaredNorm(),
                             (dp1 - dq1).squaredNorm()}));
}
}  // namespace

bool RodContact::excluded(const Segment& a, const Segment& b) const { return contact_pair_excluded(a, b, self_); }

const std::vector<RodContactPair>& RodContact::find_pairs(const VecX& x_from, const VecX& x_to, PathMotion motion) {
  relatively_clear_.clear();
  if (motion == PathMotion::StraightLine) {
    // On the 1000-bristle tilted brush dragged 13 radii a step, clear_path's broad phase over
    // world-frame swept boxes gave 100,000 candidates a call, a tenth of the run. The frame is
    // taken where it shortens the segments' travels in all (rods held while others move:
    // the held ones would travel the mean in it). (Leaving out pairs clear by their relative
    // motion as well, as OneFraction does, gained nothing there: 9.5 and 9.8 us per
    // vertex-step against 9.8 and 9.8.)
    const Vec3 shift = mean_displacement(x_from, x_to);
    const bool moving_frame =
        shift.allFinite() && path_travel(x_from, x_to, shift) < path_travel(x_from, x_to, Vec3::Zero());
    collect(x_from, x_to, pairs_, overlapping_, 1.0, true, true, nullptr, moving_frame ? shift : Vec3::Zero());
    return pairs_;
  }
  collect(x_from, x_to, pairs_, overlapping_, 1.0, true, true,
          motion == PathMotion::OneFraction ? &relatively_clear_ : nullptr);
  return pairs_;
}

double RodContact::path_travel(const VecX& x_from, const VecX& x_to, const Vec3& shift) const {
  const int segment_count = static_cast<int>(segments_.size());
  constexpr int kChunk = 1024;
  const int chunks = (segment_count + kChunk - 1) / kChunk;
  std::vector<double> chunk_sums(chunks, 0.0);
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1 && chunks > 1)
  for (int chunk = 0; chunk < chunks; ++chunk)
    for (int k = chunk * kChunk; k < std::min(segment_count, (chunk + 1) * kChunk); ++k)
      chunk_sums[chunk] += vertex_travel(x_from, x_to, segments_[k].dof0, shift);
  double sum = 0.0;
  for (const double chunk_sum : chunk_sums) sum += chunk_sum;
  return sum;
}

Vec3 RodContact::mean_displacement(const VecX& x_from, const VecX& x_to) const {
  const int segment_count = static_cast<int>(segments_.size());
  if (segment_count == 0) return Vec3::Zero();
  constexpr int kChunk = 1024;
  const int chunks = (segment_count + kChunk - 1) / kChunk;
  std::vector<Vec3> chunk_sums(chunks, Vec3::Zero());
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1 && chunks > 1)
  for (int chunk = 0; chunk < chunks; ++chunk)
    for (int k = chunk * kChunk; k < std::min(segment_count, (chunk + 1) * kChunk); ++k)
      chunk_sums[chunk] += point(x_to, segments_[k].dof0) - point(x_from, segments_[k].dof0);
  Vec3 sum = Vec3::Zero();
  for (const Vec3& chunk_sum : chunk_sums) sum += chunk_sum;
  return sum / segment_count;
}

bool RodContact::clear_at_fractions(const VecX& x_from, const VecX& x_to, const RelativelyClearPair& pair,
                                    double scale_a, double scale_b) const {
  const Segment& a = segments_[pair.segment_a];
  const Segment& b = segments_[pair.segment_b];
  const double travel = relative_travel(scale_a * (point(x_to, a.dof0) - point(x_from, a.dof0)),
                                        scale_a * (point(x_to, a.dof1) - point(x_from, a.dof1)),
                                        scale_b * (point(x_to, b.dof0) - point(x_from, b.dof0)),
                                        scale_b * (point(x_to, b.dof1) - point(x_from, b.dof1)));
  return stays_clear_on_path(pair.gap, travel, kContactGapFraction * (a.radius + b.radius));
}

double RodContact::energy(const VecX& x) const {
  std::vector<RodContactPair> pairs;
  int overlapping = 0;
  collect(x, x, pairs, overlapping, 1.0, true);
  // Each pair's energy on the threads, summed here in the pairs' order: the same sum as one
  // thread's, bit for bit.
  const int count = static_cast<int>(pairs.size());
  std::vector<double> energies(pairs.size());
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1 && count > 256)
  for (int p = 0; p < count; ++p) {
    const auto& d = pairs[p].dofs;
    if (dimension_ == 2) {
      Vec<8> local;
      for (int k = 0; k < 4; ++k) local.segment<2>(2 * k) = x.segment<2>(d[k]);
      energies[p] = rod_contact_energy<2>(local, pairs[p].constants);
    } else {
      Vec<12> local;
      for (int k = 0; k < 4; ++k) local.segment<3>(3 * k) = x.segment<3>(d[k]);
      energies[p] = rod_contact_energy<3>(local, pairs[p].constants);
    }
  }
  double sum = 0.0;
  for (const double energy : energies) sum += energy;
  return sum;
}

AxisBox RodContact::swept_box(const VecX& x_from, const VecX& x_to, int segment, const Vec3& shift) const {
  const Segment& s = segments_[segment];
  const Vec3 a = point(x_from, s.dof0), b = point(x_from, s.dof1), c = point(x_to, s.dof0) - shift,
             d = point(x_to, s.dof1) - shift;
  const Vec3 grow = Vec3::Constant(s.radius * (1.0 + kContactGapFraction));
  AxisBox box;
  box.lo = a.cwiseMin(b).cwiseMin(c).cwiseMin(d) - grow;
  box.hi = a.cwiseMax(b).cwiseMax(c).cwiseMax(d) + grow;
  return box;
}

AxisBox RodContact::shifted_box(const VecX& x, int segment, const Vec3& shift) const {
  const Segment& s = segments_[segment];
  const Vec3 c = point(x, s.dof0) - shift, d = point(x, s.dof1) - shift;
  const Vec3 grow = Vec3::Constant(s.radius * (1.0 + kContactGapFraction));
  AxisBox box;
  box.lo = c.cwiseMin(d) - grow;
  box.hi = c.cwiseMax(d) + grow;
  return box;
}

const std::vector<std::pair<int, int>>& RodContact::broad_phase(const VecX& x_from, const VecX& x_to,
                                                                const std::vector<char>* moving,
                                                                const Vec3& shift) const {
  // Swept boxes in the world's frame (unless `shift`: a straight line, PathMotion::StraightLine):
  // limit_step_by_ccd moves groups of rods by different fractions of the path, so a pair is
  // left out only if its boxes over the whole path are apart (a frame moving with the mean
  // displacement would leave out rods that move together, which meet when one group goes less
  // far than the other).
  const int segment_count = static_cast<int>(segments_.size());
  boxes_.resize(segments_.size());
  // The sums below in chunks of a fixed size, added in chunk order: the same for any thread
  // count (the list chosen depends on them, the pairs do not).
  constexpr int kChunk = 1024;
  const int chunks = (segment_count + kChunk - 1) / kChunk;
  struct ChunkSums {
    Vec3 anchor = Vec3::Zero();
    double moved = 0.0, radii = 0.0;
  };
  std::vector<ChunkSums> chunk_sums(chunks);
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1 && chunks > 1)
  for (int chunk = 0; chunk < chunks; ++chunk) {
    ChunkSums& sums = chunk_sums[chunk];
    for (int k = chunk * kChunk; k < std::min(segment_count, (chunk + 1) * kChunk); ++k) {
      const Segment& s = segments_[k];
      boxes_[k] = swept_box(x_from, x_to, k, shift);
      const Vec3 a = point(x_from, s.dof0);
      sums.anchor += a;
      sums.moved += vertex_travel(x_from, x_to, s.dof0, shift);
      sums.radii += s.radius;
    }
  }
  Vec3 anchor = Vec3::Zero();
  double moved = 0.0, radii = 0.0;
  for (const ChunkSums& sums : chunk_sums) {
    anchor += sums.anchor;
    moved += sums.moved;
    radii += sums.radii;
  }
  if (segment_count > 0) anchor /= segment_count;
  if (!anchor.allFinite()) anchor.setZero();
  // Two kept lists, each rebuilt when a box leaves its own grown by a radius, each in a frame
  // anchored at the segments' mean point at x_from (BoxPairList's shift), so that a brush
  // dragged along keeps its list from step to step. A step asks for pairs on long paths (from
  // its start to the prediction, a stroke's 13 radii on the benchmark's brush) and on short
  // ones (Newton's corrections), alternately: one list for each keeps both from being rebuilt
  // at each change. Either list gives the same pairs (BoxPairList::pairs); the choice only
  // decides which is kept.
  const bool long_path = moved > radii;
  // A path in a moving frame (clear_path's, once a step) has a list of its own: its boxes are
  // neither a short path's nor a long one's, and would have either rebuilt.
  const bool moving_frame = !(shift.array() == 0.0).all();
  BoxPairList& list = moving_frame ? straight_line_list_ : long_path ? long_path_list_ : candidate_list_;
  // On the 15 x 15 tilted brush one call in ten was a rebuild with a margin of a radius (a
  // third of a radius: one in five, three radii: one in twenty, with three times the listed
  // pairs to filter; all about as fast).
  const auto margin = [&](int k) { return segments_[k].radius; };
  const auto skip = [&](int i, int j) { return excluded(segments_[i], segments_[j]); };
  if (moving != nullptr) return list.pairs_touching(boxes_, *moving, margin, skip, threads_, anchor);
  return list.pairs(boxes_, margin, skip, threads_, anchor);
}

bool RodContact::within_last_path(const VecX& x) const {
  // A path in a moving frame (PathMotion::StraightLine) holds its end with the frame's shift
  // over it, and its start with none.
  if (within_last_path_shifted(x, last_path_shift_)) return true;
  return !(last_path_shift_.array() == 0.0).all() && within_last_path_shifted(x, Vec3::Zero());
}

bool RodContact::within_last_path_shifted(const VecX& x, const Vec3& shift) const {
  // Each segment at x (less the shift) inside its swept box of the last path, and each vertex
  // no further from the path's start than its segment's travel along it. Then the boxes at x
  // overlap only where the swept ones did, and a pair left out as clear of the path
  // (stays_clear_on_path: gap g0 at the start, g0 - T >= 2 g^ for travels T) is at least
  // g0 - T from x too: a common shift changes neither overlaps nor distances, and with it each
  // point of a segment is within the segment's travel of where it started.
  if (!last_path_valid_ || static_cast<int>(last_path_boxes_.size()) != static_cast<int>(segments_.size()) ||
      last_path_from_.size() != x.size())
    return false;
  const bool shifted = !(shift.array() == 0.0).all();
  const int segment_count = static_cast<int>(segments_.size());
  boxes_.resize(segments_.size());  // the boxes at x, for collect's filter of the path's list
  int outside = 0;
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1 && segment_count > 4096) reduction(+ : outside)
  for (int k = 0; k < segment_count; ++k) {
    const Segment& s = segments_[k];
    boxes_[k] = swept_box(x, x, k);
    // The shifted box as the path's were formed (points less the shift, then grown): at the
    // path's end, inside them bit for bit.
    const AxisBox box = shifted ? shifted_box(x, k, shift) : boxes_[k];
    const AxisBox& path = last_path_boxes_[k];
    const bool inside = (path.lo.array() <= box.lo.array()).all() && (box.hi.array() <= path.hi.array()).all() &&
                        vertex_travel(last_path_from_, x, s.dof0, shift) <= last_path_travel_[k] &&
                        vertex_travel(last_path_from_, x, s.dof1, shift) <= last_path_travel_[k];
    outside += inside ? 0 : 1;
  }
  return outside == 0;
}

void RodContact::collect(const VecX& x_from, const VecX& x_to, std::vector<RodContactPair>& pairs,
                         int& overlapping, double overlap_floor, bool only_near_path, bool keep_path,
                         std::vector<RelativelyClearPair>* relatively_clear, const Vec3& shift) const {
  pairs.clear();
  overlapping = 0;
  if (relatively_clear != nullptr) relatively_clear->clear();
  if (!enabled_) return;
  const int segment_count = static_cast<int>(segments_.size());
  const bool standard = only_near_path && overlap_floor == 1.0;  // the solver's list (find_pairs, energy)
  const bool instant = &x_from == &x_to;
  // At one instant nothing moves: no pair is clear by its relative motion alone.
  const bool relative = relatively_clear != nullptr && only_near_path && !instant;
  if (only_near_path) {
    // How far each segment's ends go on the path: no point of the segment goes further.
    segment_travel_.resize(segments_.size());
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1 && segment_count > 4096)
    for (int k = 0; k < segment_count; ++k) {
      const Segment& s = segments_[k];
      segment_travel_[k] =
          std::max(vertex_travel(x_from, x_to, s.dof0, shift), vertex_travel(x_from, x_to, s.dof1, shift));
    }
  }
  // The pairs at one instant x lying on the path of the last list kept (keep_path): the pairs
  // near that path, and those that overlapped at its start, are all the candidates there can
  // be (within_last_path). Newton's iterate after a line search lies on the path CCD searched,
  // and so does the step's end: their lists are that path's, checked afresh at x, without a
  // broad phase (the tilted 1000-bristle brush: a sixth of its step). The same pairs, in the
  // same order, as the broad phase's candidates give.
  const bool on_last_path = standard && instant && within_last_path(x_from);
  // A path from the last instant listed (instant_x_) on which few segments move (a Newton
  // iteration over the rods still moving, the others held): the pairs of two still segments
  // are that instant's (their swept boxes are their boxes there, their travel zero, and the
  // force estimates that decide the far ones unchanged since: forces_version_), and only the
  // pairs of a moving segment need the broad phase, through its own listed pairs
  // (BoxPairList::pairs_touching). The same pairs, in the same order, as the whole broad phase.
  bool from_instant = false;
  const bool moving_frame = !(shift.array() == 0.0).all();
  if (standard && !instant && keep_path && !moving_frame && instant_valid_ && instant_forces_version_ == forces_version_ &&
      instant_x_.size() == x_from.size() &&
      std::memcmp(instant_x_.data(), x_from.data(), sizeof(double) * static_cast<std::size_t>(x_from.size())) == 0) {
    segment_moving_.assign(segments_.size(), 0);
    int moving = 0;
    for (int k = 0; k < segment_count; ++k) {
      segment_moving_[k] = segment_travel_[k] > 0.0 ? 1 : 0;
      moving += segment_moving_[k];
    }
    from_instant = moving * kInstantMovingShare <= segment_count;
  }
  const std::vector<std::pair<int, int>>* candidate_list = nullptr;
  if (on_last_path) {
    ++path_list_reuses_;
    overlapping_listed_pairs(last_path_kept_, boxes_, on_path_candidates_, on_path_blocks_, threads_);
    candidate_list = &on_path_candidates_;
  } else if (from_instant) {
    ++instant_list_reuses_;
    candidate_list = &broad_phase(x_from, x_to, &segment_moving_);
  } else {
    candidate_list = &broad_phase(x_from, x_to, nullptr, shift);
  }
  const std::vector<std::pair<int, int>>& candidates = *candidate_list;
  const int count = static_cast<int>(candidates.size());
  // Each candidate's distance at x_from, or a lower bound on it where the bound already
  // decides what the loop below does with the pair (not overlapping, and, on a path, clear of
  // it): the loop's decisions are those of the exact distances. Most candidates of a tilted
  // brush are neighbours' segments side by side, where the bound is nearly exact and costs a
  // fifth of the distance.
  //
  // On a path at one fraction (relative) the bound decides a little more: whether a pair
  // clear by its relative travel is also clear by its own travels (dropped) or only
  // relatively (listed in relatively_clear with the bound's gap). A tighter bound may move a
  // pair from the second to the first, or raise its listed gap; either way its gap along
  // any fractions stays above 2 g^ (its own travels bound its motion at every fraction), so
  // it has no barrier energy and every CCD bound 1, and limit_step_by_ccd's result is the
  // same (the tilted 1000-bristle brush's positions, bit for bit, across the change that
  // tightened the bound).
  candidate_distances_.resize(count);
  if (relative) candidate_relative_travel_.resize(count);
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1 && count > 256)
  for (int c = 0; c < count; ++c) {
    const auto [i, j] = candidates[c];
    const Segment& a = segments_[i];
    const Segment& b = segments_[j];
    const Vec3 p0 = point(x_from, a.dof0), p1 = point(x_from, a.dof1), q0 = point(x_from, b.dof0),
               q1 = point(x_from, b.dof1);
    const double reach = a.radius + b.radius;
    const double gap_hat = kContactGapFraction * reach;
    const double bound = segment_distance_lower_bound(p0, p1, q0, q1);
    double travel = only_near_path ? segment_travel_[i] + segment_travel_[j] : 0.0;
    if (relative) {
      // Where the travels alone do not clear the pair, the motion of its segments relative to
      // each other may: at most the travels' sum, and for neighbours moving together (a
      // dragged brush) a small part of it.
      if (travel > 0.0 && !stays_clear_on_path(bound - reach, travel, gap_hat))
        travel = std::min(travel, relative_travel(point(x_to, a.dof0) - p0, point(x_to, a.dof1) - p1,
                                                  point(x_to, b.dof0) - q0, point(x_to, b.dof1) - q1));
      candidate_relative_travel_[c] = travel;
    }
    const bool decided =
        bound > overlap_floor * reach && (!only_near_path || stays_clear_on_path(bound - reach, travel, gap_hat));
    candidate_distances_[c] = decided ? bound : segment_distance(p0, p1, q0, q1).distance;
  }
  // The pairs in blocks of candidates on threads (forces_ is only read), joined in block order:
  // the same list for any thread count.
  constexpr int kBlock = 2048;
  const int blocks = (count + kBlock - 1) / kBlock;
  if (static_cast<int>(block_pairs_.size()) < blocks) block_pairs_.resize(blocks);
  // Which candidates were not shown clear by their own travels (listed, overlapping, or clear
  // only relatively: kept_state_), kept for the path's certificate (within_last_path) and for
  // the paths from this instant.
  const bool keeping = standard && (keep_path || instant);
  if (keeping && static_cast<int>(block_kept_.size()) < blocks) {
    block_kept_.resize(blocks);
    block_kept_state_.resize(blocks);
  }
  if (relative && static_cast<int>(block_relatively_clear_.size()) < blocks) block_relatively_clear_.resize(blocks);
  if (only_near_path) refresh_segment_forces();
  int overlapping_sum = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_) if (threads_ > 1 && blocks > 1) reduction(+ : overlapping_sum)
  for (int block = 0; block < blocks; ++block) {
    std::vector<RodContactPair>& out = block_pairs_[block];
    out.clear();
    if (keeping) {
      block_kept_[block].clear();
      block_kept_state_[block].clear();
    }
    if (relative) block_relatively_clear_[block].clear();
    int block_overlapping = 0;
    for (int c = block * kBlock; c < std::min(count, (block + 1) * kBlock); ++c) {
      const auto [i, j] = candidates[c];
      const Segment& a = segments_[i];
      const Segment& b = segments_[j];
      const double reach = a.radius + b.radius;
      const double distance = candidate_distances_[c];
      if (!(distance > overlap_floor * reach)) {
        ++block_overlapping;
        if (keeping) {
          block_kept_[block].push_back(candidates[c]);
          block_kept_state_[block].push_back(kKeptOverlapping);
        }
        continue;
      }
      if (only_near_path) {
        // A pair whose gap g0 at x_from no motion on the path can close below 2 g^, nor by a
        // fifth, is left out: any two of its points move relative to each other by at most the
        // two segments' travels T, so its gap stays above g0 - T >= max(2 g^, 0.8 g0) all the
        // way. Its barrier is zero there, and every CCD bound the step asks of it is 1: the
        // floors are at most half the start gap (iteration_keep, keep <= 0.5), and the additive
        // CCD's rate, at most twice T, reaches t = 1 in its first advance. So the list differs
        // from the broad phase's only by pairs that change nothing: the system, the barrier's
        // sums and each CCD bound are the same (the tilted brushes' positions, bit for bit).
        // One thing follows from it: a list left empty couples no rods, and such an iteration
        // is solved per rod, exactly, instead of by CG to its tolerance (hair_on_sphere and
        // overhand_knot then differ from before by round-off, 1e-19 m in the knot's first
        // differing frame). Pairs with a force estimate stay (update_forces_in clears it when
        // they leave g^). In a tilted brush the boxes of neighbouring bristles overlap along
        // their length: 10,900 candidates a call on the 15 x 15 brush, most of them far.
        //
        // On a path taken at one fraction (relatively_clear), T may be the bound on the two
        // segments' motion relative to each other instead (relative_travel): the argument is
        // the same. A pair so cleared that the travels do not clear (with the gap as bounded
        // here: the lower bound where it decided, so a few the exact distance would have
        // cleared by the travels count too) is listed in relatively_clear for the caller that
        // cuts rods to different fractions (limit_step_by_ccd), and kept for the path's
        // certificate (within_last_path bounds each vertex's own travel only): a call on the
        // path looks at it again.
        const double gap = distance - reach;
        const double travel = segment_travel_[i] + segment_travel_[j];
        const double gap_hat = kContactGapFraction * reach;
        const double path_travel = relative ? candidate_relative_travel_[c] : travel;
        if (stays_clear_on_path(gap, path_travel, gap_hat) && !has_force_estimate(i, j)) {
          if (relative && path_travel < travel && !stays_clear_on_path(gap, travel, gap_hat)) {
            block_relatively_clear_[block].push_back({i, j, gap});
            if (keeping) {
              block_kept_[block].push_back(candidates[c]);
              block_kept_state_[block].push_back(kKeptRelativelyClear);
            }
          }
          continue;
        }
      }
      if (keeping) {
        block_kept_[block].push_back(candidates[c]);
        block_kept_state_[block].push_back(kKeptListed);
      }
      out.push_back(make_pair(i, j));
    }
    overlapping_sum += block_overlapping;
  }
  overlapping = overlapping_sum;
  for (int block = 0; block < blocks; ++block) pairs.insert(pairs.end(), block_pairs_[block].begin(), block_pairs_[block].end());
  if (relative)
    for (int block = 0; block < blocks; ++block)
      relatively_clear->insert(relatively_clear->end(), block_relatively_clear_[block].begin(),
                               block_relatively_clear_[block].end());
  if (!keeping) return;
  kept_.clear();
  kept_state_.clear();
  for (int block = 0; block < blocks; ++block) {
    kept_.insert(kept_.end(), block_kept_[block].begin(), block_kept_[block].end());
    kept_state_.insert(kept_state_.end(), block_kept_state_[block].begin(), block_kept_state_[block].end());
  }
  if (from_instant) {
    // The pairs of two still segments from the instant's list, merged into the moving ones' in
    // the order of the segments (the broad phase's).
    // (Pairs of two still segments are never relatively clear: neither moves.)
    merged_pairs_.clear();
    merged_kept_.clear();
    merged_kept_state_.clear();
    std::size_t next_pair = 0, next_kept = 0;
    auto take_moving_before = [&](const std::pair<int, int>& key) {
      while (next_kept < kept_.size() && kept_[next_kept] < key) {
        if (kept_state_[next_kept] == kKeptListed) merged_pairs_.push_back(pairs[next_pair++]);
        merged_kept_state_.push_back(kept_state_[next_kept]);
        merged_kept_.push_back(kept_[next_kept++]);
      }
    };
    for (std::size_t k = 0; k < instant_kept_.size(); ++k) {
      const auto [i, j] = instant_kept_[k];
      if (segment_moving_[i] || segment_moving_[j]) continue;
      take_moving_before(instant_kept_[k]);
      merged_kept_.push_back(instant_kept_[k]);
      merged_kept_state_.push_back(instant_kept_state_[k]);
      // (An instant's list holds no relatively clear pair: nothing moves at an instant.)
      if (instant_kept_state_[k] == kKeptOverlapping)
        ++overlapping;
      else if (instant_kept_state_[k] == kKeptListed)
        merged_pairs_.push_back(make_pair(i, j));
    }
    take_moving_before({segment_count, segment_count});
    pairs.swap(merged_pairs_);
    kept_.swap(merged_kept_);
    kept_state_.swap(merged_kept_state_);
  }
  if (instant) {
    instant_kept_ = kept_;
    instant_kept_state_ = kept_state_;
    instant_x_ = x_from;
    instant_forces_version_ = forces_version_;
    instant_valid_ = true;
  }
  if (keep_path && !on_last_path) {
    // The path's certificate for within_last_path: its start, swept boxes and travels, and
    // every candidate not shown clear of it.
    last_path_kept_ = kept_;
    last_path_from_ = x_from;
    // The broad phase's boxes and the travels are scratch, each written in full before it is
    // read again: taken, not copied.
    last_path_boxes_.swap(boxes_);
    last_path_travel_.swap(segment_travel_);
    last_path_shift_ = shift;
    last_path_valid_ = true;
  }
}

void RodContact::refresh_segment_forces() const {
  if (segment_forces_valid_ && segment_forces_version_ == forces_version_ &&
      segment_has_force_.size() == segments_.size())
    return;
  segment_has_force_.assign(segments_.size(), 0);
  for (const auto& entry : forces_) {
    segment_has_force_[static_cast<std::size_t>(entry.first >> 32)] = 1;
    segment_has_force_[static_cast<std::uint32_t>(entry.first)] = 1;
  }
  segment_forces_version_ = forces_version_;
  segment_forces_valid_ = true;
}

RodContactPair RodContact::make_pair(int i, int j) const {
  const Segment& a = segments_[i];
  const Segment& b = segments_[j];
  const double reach = a.radius + b.radius;
  RodContactPair pair;
  pair.dofs = {a.dof0, a.dof1, b.dof0, b.dof1};
  pair.segment_a = i;
  pair.segment_b = j;
  pair.constants.reach = reach;
  pair.constants.gap_hat = kContactGapFraction * reach;
  // kappa: the barrier's force kappa |b'(g)| is the weight of the pair's mean vertex at
  // g = g^ / 2 (|b'(g^ / 2)| = (1/2 + ln 2) g^), and grows as g^2 / g closer in.
  pair.constants.stiffness = rod_contact_weight_stiffness(0.25 * (a.mass + b.mass), gravity_, reach);
  if (const auto found = forces_.find(pair_key(i, j)); found != forces_.end()) {
    pair.constants.force = found->second.force;
    pair.constants.stiffness =
        std::max(pair.constants.stiffness, found->second.step_force / (kHalfGapSlope * pair.constants.gap_hat));
  }
  return pair;
}

namespace {
// A pair a cut step left inside g^ gets an estimate for the rest of the step only where that
// rest closes its gap by more than this fraction of it (update_forces' x_taken): a smaller
// change is the round-off between the taken iterate and the full step.
constexpr double kTakenClosing = 1e-3;
// Rod contact as constraints: the frame stats' `overlapping` counts pairs overlapping by more
// than this fraction of the smaller radius (measure_all), `bristle check-contact`'s default.
constexpr double kReportedOverlap = 0.01;
// Rod-rod contacts as constraints: a pair overlapping at the step's start by less than this
// fraction of the sum of its radii is a constraint like the others (docs/contact.md, "Rod-rod
// contacts as constraints in the step").
constexpr double kConstraintOverlapFloor = 0.5;
// A pair is a row only if its gap at the step's start is within kConstraintTravelScale times
// what its two segments' vertices travel on the path, plus kConstraintGapMargin of its radii.
constexpr double kConstraintTravelScale = 1.5;
constexpr double kConstraintGapMargin = 0.5;
}  // namespace

std::vector<RodContactRow> RodContact::constraint_rows(const VecX& x_from, const VecX& x_to) const {
  std::vector<RodContactPair> pairs;
  int overlapping = 0;
  collect(x_from, x_to, pairs, overlapping, kConstraintOverlapFloor);
  std::vector<RodContactRow> rows;
  rows.reserve(pairs.size());
  for (const RodContactPair& pair : pairs) {
    const Segment& a = segments_[pair.segment_a];
    const Segment& b = segments_[pair.segment_b];
    RodContactRow row;
    row.vertices = {a.vertex0, a.vertex0 + 1, b.vertex0, b.vertex0 + 1};
    // The axes apart at x_from (collect left deeper overlaps out): the normal is the points'.
    row.frame = segment_contact_frame(point(x_from, a.dof0), point(x_from, a.dof1), point(x_from, b.dof0),
                                      point(x_from, b.dof1), a.radius, b.radius, Vec3::UnitZ(), dimension_);
    // A pair further apart than its segments can travel towards each other on the path (with
    // room for the iterates to stray from it) cannot touch in the step: no row. The broad
    // phase's boxes keep many such pairs among rods lying side by side.
    auto travel = [&](const Segment& s) {
      return std::max((point(x_to, s.dof0) - point(x_from, s.dof0)).norm(),
                      (point(x_to, s.dof1) - point(x_from, s.dof1)).norm());
    };
    if (row.frame.gap > kConstraintTravelScale * (travel(a) + travel(b)) + kConstraintGapMargin * (a.radius + b.radius))
      continue;
    // Nothing can move a pair of held segments: no row (its residual could never fall).
    if (a.fixed && b.fixed) continue;
    row.friction = friction_;
    row.segments = {pair.segment_a, pair.segment_b};
    row.start_normal = row.frame.normal;
    rows.push_back(row);
  }
  return rows;
}

namespace {
constexpr double kNearKeep = 0.8;

// How far one Newton iteration may close a pair's gap, as a fraction of it (docs/contact.md,
// "How far an iteration may close a gap"): from afar to `keep` of the gap, but not past g^ / 2
// in one go, and below g^ / 2 to kNearKeep of it. A Newton step linearises the pair's motion:
// a segment that tilts towards the other while sliding along it closes the gap by the product
// of the two, which the linear model does not see. Cut to 0.1 of its gap each time, a pair
// pressed by its neighbours' motion lost a decade per iteration (hair lying across hair went
// from g^ / 4 to 1e-9 of the radius in 8 iterations) while the barrier's Newton step only
// about doubles a gap far below its rest value; at 0.8 the barrier wins.
double iteration_keep(double start_gap, double gap_hat, double keep) {
  if (!(start_gap > 0.0)) return keep;
  const double floor = std::min(kNearKeep * start_gap, std::max(keep * start_gap, 0.5 * gap_hat));
  return floor / start_gap;
}
}  // namespace

double RodContact::max_step(const VecX& x_from, const VecX& x_to, double keep,
                            const std::function<bool(const RodContactPair&)>& checked) const {
  const int count = static_cast<int>(pairs_.size());
  double step = 1.0;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_) if (threads_ > 1 && count > 64) reduction(min : step)
  for (int k = 0; k < count; ++k) {
    if (checked && !checked(pairs_[k])) continue;
    const auto& d = pairs_[k].dofs;
    const Vec3 p0 = point(x_from, d[0]), p1 = point(x_from, d[1]), q0 = point(x_from, d[2]), q1 = point(x_from, d[3]);
    step = std::min(step, capsule_time_of_impact(p0, p1, q0, q1, point(x_to, d[0]) - p0, point(x_to, d[1]) - p1,
                                                 point(x_to, d[2]) - q0, point(x_to, d[3]) - q1,
                                                 pairs_[k].constants.reach, keep));
  }
  return step;
}

void RodContact::pair_steps(const VecX& x_from, const VecX& x_to, double keep, std::vector<double>& steps,
                            std::vector<char>& active) const {
  const int count = static_cast<int>(pairs_.size());
  steps.assign(pairs_.size(), 1.0);
  active.assign(pairs_.size(), 0);
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_) if (threads_ > 1 && count > 64)
  for (int k = 0; k < count; ++k) {
    const auto& d = pairs_[k].dofs;
    const Vec3 p0 = point(x_from, d[0]), p1 = point(x_from, d[1]), q0 = point(x_from, d[2]), q1 = point(x_from, d[3]);
    const double gap = segment_distance(p0, p1, q0, q1).distance - pairs_[k].constants.reach;
    active[k] = gap < pairs_[k].constants.gap_hat;
    steps[k] = capsule_time_of_impact(p0, p1, q0, q1, point(x_to, d[0]) - p0, point(x_to, d[1]) - p1,
                                      point(x_to, d[2]) - q0, point(x_to, d[3]) - q1, pairs_[k].constants.reach,
                                      iteration_keep(gap, pairs_[k].constants.gap_hat, keep));
  }
}

double RodContact::pair_step(const VecX& x_from, const VecX& x_to, int k, double scale_p, double scale_q,
                             double keep) const {
  const auto& d = pairs_[k].dofs;
  const Vec3 p0 = point(x_from, d[0]), p1 = point(x_from, d[1]), q0 = point(x_from, d[2]), q1 = point(x_from, d[3]);
  const double gap = segment_distance(p0, p1, q0, q1).distance - pairs_[k].constants.reach;
  return capsule_time_of_impact(p0, p1, q0, q1, scale_p * (point(x_to, d[0]) - p0), scale_p * (point(x_to, d[1]) - p1),
                                scale_q * (point(x_to, d[2]) - q0), scale_q * (point(x_to, d[3]) - q1),
                                pairs_[k].constants.reach, iteration_keep(gap, pairs_[k].constants.gap_hat, keep));
}

double RodContact::relatively_clear_step(const VecX& x_from, const VecX& x_to, const RelativelyClearPair& pair,
                                         double scale_a, double scale_b, double keep) const {
  const Segment& a = segments_[pair.segment_a];
  const Segment& b = segments_[pair.segment_b];
  const double reach = a.radius + b.radius;
  const Vec3 p0 = point(x_from, a.dof0), p1 = point(x_from, a.dof1), q0 = point(x_from, b.dof0), q1 = point(x_from, b.dof1);
  const double gap = segment_distance(p0, p1, q0, q1).distance - reach;
  return capsule_time_of_impact(p0, p1, q0, q1, scale_a * (point(x_to, a.dof0) - p0), scale_a * (point(x_to, a.dof1) - p1),
                                scale_b * (point(x_to, b.dof0) - q0), scale_b * (point(x_to, b.dof1) - q1), reach,
                                iteration_keep(gap, kContactGapFraction * reach, keep));
}

const RodContactPair& RodContact::list_relatively_clear(const RelativelyClearPair& pair) {
  pairs_.push_back(make_pair(pair.segment_a, pair.segment_b));
  return pairs_.back();
}

double RodContact::max_step_reversed(const VecX& x_from, const VecX& x_to, double keep) const {
  double step = 1.0;
  const int count = static_cast<int>(pairs_.size());
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads_) if (threads_ > 1 && count > 256) reduction(min : step)
  for (int k = 0; k < count; ++k) {
    const RodContactPair& pair = pairs_[k];
    const auto& d = pair.dofs;
    const Vec3 p0 = point(x_from, d[0]), p1 = point(x_from, d[1]), q0 = point(x_from, d[2]), q1 = point(x_from, d[3]);
    const Vec3 r0 = point(x_to, d[0]), r1 = point(x_to, d[1]), s0 = point(x_to, d[2]), s1 = point(x_to, d[3]);
    const SegmentDistance a = segment_distance(p0, p1, q0, q1), b = segment_distance(r0, r1, s0, s1);
    const Vec3 before = (p0 + a.s * (p1 - p0)) - (q0 + a.t * (q1 - q0));
    const Vec3 after = (r0 + b.s * (r1 - r0)) - (s0 + b.t * (s1 - s0));
    if (before.dot(after) >= 0.0) continue;
    step = std::min(step, capsule_time_of_impact(p0, p1, q0, q1, r0 - p0, r1 - p1, s0 - q0, s1 - q1,
                                                 pair.constants.reach, keep));
  }
  return step;
}

void RodContact::linearise_rows(std::vector<RodContactRow>& rows, const VecX& x, const VecX* v_lin, double h) const {
  const int count = static_cast<int>(rows.size());
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1 && count > 256)
  for (int k = 0; k < count; ++k) {
    RodContactRow& row = rows[k];
    const Segment& a = segments_[row.segments[0]];
    const Segment& b = segments_[row.segments[1]];
    SegmentContactFrame frame = segment_contact_frame(point(x, a.dof0), point(x, a.dof1), point(x, b.dof0),
                                                      point(x, b.dof1), a.radius, b.radius, row.start_normal, dimension_);
    // Crossed: the direction turned against the start's with both closest points inside their
    // segments. At an end it also turns past 90 degrees without crossing, as a segment slides
    // off another's end and around it: that is the contact's own normal.
    const bool inside = frame.s > 0.0 && frame.s < 1.0 && frame.t > 0.0 && frame.t < 1.0;
    if (inside && frame.normal.dot(row.start_normal) < 0.0) {
      // Crossed in the iterate: the signed distance along the start's side is -|P(s) - Q(t)|.
      const double reach = a.radius + b.radius;
      frame.gap = -(frame.gap + reach) - reach;
      frame.normal = -frame.normal;
      tangent_basis(frame.normal, frame.tangent1, frame.tangent2);
    }
    if (v_lin != nullptr) {
      const int dofs[4] = {a.dof0, a.dof1, b.dof0, b.dof1};
      Vec3 relative = Vec3::Zero();
      for (int j = 0; j < 4; ++j) relative += frame.weights[j] * point(*v_lin, dofs[j]);
      frame.gap -= h * frame.normal.dot(relative);
    }
    row.frame = frame;
  }
}

RodContactStats RodContact::measure(const VecX& x) const { return measure_pairs(x, pairs_, overlapping_); }

RodContactStats RodContact::measure_all(const VecX& x) const {
  std::vector<RodContactPair> pairs;
  int axes_touching = 0;
  collect(x, x, pairs, axes_touching, 0.0);
  // No pair is left out of the constraints for good, so `overlapping` counts the pairs whose
  // capsules overlap here beyond `bristle check-contact`'s default tolerance (their axes
  // touching included): the ones the step left inside each other.
  return measure_pairs(x, pairs, axes_touching, kReportedOverlap);
}

int RodContact::crossings(const VecX& x_from, const VecX& x_to) const {
  if (!enabled_) return 0;
  // ContactChecker::crossings' test, over this step: the same narrow phase, over boxes swept in
  // the frame moving with the segments (below).
  double scale = 0.0;
  for (const Segment& s : segments_)
    for (const int dof : {s.dof0, s.dof1})
      scale = std::max({scale, point(x_from, dof).cwiseAbs().maxCoeff(), point(x_to, dof).cwiseAbs().maxCoeff()});
  // The boxes are swept in the frame moving with the segments' mean displacement: the step's
  // motion is the straight line x_from -> x_to, every vertex at one fraction, and a common
  // translation changes no distance (as clear_path's pairs, PathMotion::StraightLine). A
  // dragged brush's boxes then cover how its bristles move relative to each other, not the
  // stroke (the tilted 1000-bristle brush: 6% of its run was this count). Their points less
  // the shift are rounded by less than an ulp of 3 scale each: the boxes grow by that too.
  const Vec3 shift = mean_displacement(x_from, x_to);
  const bool shifted = shift.allFinite();
  const double rounding =
      crossing_distance(0.0, 0.0, scale) +
      (shifted ? 8.0 * std::numeric_limits<double>::epsilon() * (scale + shift.cwiseAbs().maxCoeff()) : 0.0);
  const Vec3 frame = shifted ? shift : Vec3::Zero();
  std::vector<AxisBox> boxes(segments_.size());
  Vec3 anchor = Vec3::Zero();
  for (std::size_t k = 0; k < segments_.size(); ++k) {
    const Segment& s = segments_[k];
    boxes[k] = crossing_box(point(x_from, s.dof0), point(x_from, s.dof1), point(x_to, s.dof0) - frame,
                            point(x_to, s.dof1) - frame, s.radius, rounding);
    anchor += point(x_from, s.dof0);
  }
  if (!segments_.empty()) anchor /= static_cast<double>(segments_.size());
  if (!anchor.allFinite()) anchor.setZero();
  // A kept list, in a frame moving with the segments' mean (BoxPairList): the pairs of a fresh
  // broad phase, which each step's report ran on every box (a step's boxes are most of them
  // near the last step's, relative to that mean).
  const auto& candidates = crossing_list_.pairs(
      boxes, [&](int k) { return segments_[k].radius; },
      [&](int i, int j) { return excluded(segments_[i], segments_[j]); }, threads_, anchor);
  const int count = static_cast<int>(candidates.size());
  int crossed = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : crossed) num_threads(threads_) if (threads_ > 1 && count > 256)
  for (int c = 0; c < count; ++c) {
    const Segment& a = segments_[candidates[c].first];
    const Segment& b = segments_[candidates[c].second];
    const CentreLineMeeting meeting =
        pair_crossing(point(x_from, a.dof0), point(x_from, a.dof1), point(x_from, b.dof0), point(x_from, b.dof1),
                      point(x_to, a.dof0), point(x_to, a.dof1), point(x_to, b.dof0), point(x_to, b.dof1), a.radius,
                      b.radius);
    if (new_crossing(meeting)) ++crossed;
  }
  return crossed;
}

RodContactStats RodContact::measure_pairs(const VecX& x, const std::vector<RodContactPair>& pairs,
                                          int overlapping, double overlap_fraction) const {
  RodContactStats stats;
  stats.candidates = static_cast<int>(pairs.size());
  stats.overlapping = overlapping;
  for (const RodContactPair& pair : pairs) {
    const auto& d = pair.dofs;
    const double gap =
        segment_distance(point(x, d[0]), point(x, d[1]), point(x, d[2]), point(x, d[3])).distance - pair.constants.reach;
    if (gap < pair.constants.gap_hat) ++stats.pairs;
    const double radius = std::min(segments_[pair.segment_a].radius, segments_[pair.segment_b].radius);
    if (overlap_fraction >= 0.0 && gap < -overlap_fraction * radius) ++stats.overlapping;
    if (gap < stats.min_gap) {
      stats.min_gap = gap;
      stats.min_gap_fraction = radius > 0.0 ? gap / radius : stats.min_gap_fraction;
    }
  }
  return stats;
}

bool RodContact::begin_step() {
  saved_forces_ = forces_;
  saved_stiffness_changed_ = stiffness_changed_;
  for (auto& [key, entry] : forces_) {
    const double step_force = std::max(entry.force, 0.0);
    stiffness_changed_ = stiffness_changed_ || entry.step_force != step_force;
    entry.step_force = step_force;
  }
  return stiffness_changed_;
}

void RodContact::abandon_step() {
  forces_ = saved_forces_;
  ++forces_version_;
  // What the failed attempt raised was undone here; a change since the last commit stays one.
  stiffness_changed_ = saved_stiffness_changed_ || stiffness_changed_;
}

template <int D>
RodContact::ForceUpdate RodContact::update_forces_in(const VecX& x_lin, const VecX& x_full, const VecX* x_taken) {
  ForceUpdate update;
  for (const RodContactPair& pair : pairs_) {
    const std::uint64_t key = pair_key(pair.segment_a, pair.segment_b);
    Vec<4 * D> x, step;
    for (int k = 0; k < 4; ++k) {
      x.template segment<D>(k * D) = x_lin.template segment<D>(pair.dofs[k]);
      step.template segment<D>(k * D) = x_full.template segment<D>(pair.dofs[k]) - x.template segment<D>(k * D);
    }
    const SegmentDistanceSquared<D> squared = segment_distance_squared<D>(x, false);
    const double d = std::sqrt(squared.value);
    const RodContactConstants& c = pair.constants;
    const double gap = d - c.reach;
    const BarrierValue b = barrier_function(gap, c.gap_hat);
    if (b.db == 0.0 || !(gap > 0.0)) {
      // Beyond g^ the barrier carries no force: the pair has no estimate (should it come back,
      // it starts from the barrier's force, as a new pair does). Its entry stays until the
      // step ends (prune_forces), so that its stiffness is the step's, whatever the iterates do.
      if (const auto found = forces_.find(key); found != forces_.end()) found->second.force = -1.0;
      if (x_taken != nullptr && gap > 0.0) {
        // Outside g^ at x_lin, the system had no term for it, and the step, cut short, left it
        // inside g^ at the iterate taken: the Newton value there for the part of the step not
        // taken, where that part closes the gap by more than round-off (the next iteration's
        // direction repeats it: without an estimate it goes as deep again and is cut once
        // more; docs/contact.md, "Primal-dual stiffness"), bounded to [phi, 10 phi].
        Vec<4 * D> xt, rest;
        for (int k = 0; k < 4; ++k) {
          xt.template segment<D>(k * D) = x_taken->template segment<D>(pair.dofs[k]);
          rest.template segment<D>(k * D) = x_full.template segment<D>(pair.dofs[k]) - xt.template segment<D>(k * D);
        }
        const SegmentDistanceSquared<D> sq_t = segment_distance_squared<D>(xt, false);
        const double d_t = std::sqrt(sq_t.value);
        const double gap_t = d_t - c.reach;
        const BarrierValue b_t = barrier_function(gap_t, c.gap_hat);
        if (b_t.db != 0.0 && gap_t > 0.0) {
          const double dg_t = (sq_t.gradient / (2.0 * d_t)).dot(rest);
          const double phi_t = -c.stiffness * b_t.db;
          const double newton_t = phi_t + (barrier_force_slope(gap_t, c.gap_hat, c.stiffness) - phi_t) * (dg_t / gap_t);
          if (dg_t < -kTakenClosing * gap_t && std::isfinite(newton_t) && phi_t > 0.0) {
            if (forces_.find(key) == forces_.end()) ++forces_version_;
            PairForce& entry = forces_[key];
            entry.force = std::clamp(newton_t, phi_t, 10.0 * phi_t);
          }
        }
      }
      continue;
    }
    // Primal-dual Newton on lambda g = g phi(g), phi = -kappa b'(g) (Nocedal and Wright,
    // "Numerical Optimization", 2nd ed., section 19.3): with the gap's linearised change dg,
    // d lambda = (phi - lambda) + ((phi - lambda) / g + phi') dg.
    const double phi = -c.stiffness * b.db;
    const double lambda = c.force >= 0.0 ? c.force : phi;
    // The stiffness this iteration's system had along the normal exceeds the barrier's own
    // where lambda > phi: Newton's correction then understates the distance to the answer.
    if (lambda > (1.0 + kForceConsistency) * phi) update.consistent = false;
    const double dg = (squared.gradient / (2.0 * d)).dot(step);
    // phi + ((phi - lambda) / g + phi') dg = phi + (psi - lambda) dg / g, psi = phi + g phi'
    // (barrier_force_slope): the second form has no cancellation where phi >> lambda.
    const double newton = phi + (barrier_force_slope(gap, c.gap_hat, c.stiffness) - lambda) * (dg / gap);
    // The dual step is taken whole, whatever fraction of the primal one the line search took
    // (primal-dual interior-point methods step the two separately), bounded as they bound it:
    // lambda keeps at least 1% of itself, and grows by at most 1000 times in one iteration.
    // A step that opens the gap (dg >= 0) does not raise lambda: the force at a wider gap is
    // smaller. The linearisation says otherwise where lambda < psi (psi > 0 for this barrier
    // near contact, about 5 kappa g^ at g = g^ / 100) and the step is many gaps long: lambda
    // then came out hundreds of times larger from a step that opened the gap 100-fold. Since
    // a pressed pair's kappa follows lambda (below), its phi grew with it, and so did the next
    // lambda: the vertical 5 x 5 brush of bench --brush reached kappa = 1e32 within one step
    // and CG failed (docs/contact.md, "The coupled rods factored together").
    const double upper = dg >= 0.0 ? lambda : 1000.0 * std::max(lambda, phi);
    if (forces_.find(key) == forces_.end()) ++forces_version_;
    PairForce& entry = forces_[key];
    entry.force = std::clamp(newton, std::min(0.01 * lambda, upper), upper);
    // Within the step, a pair pressed by more than twice the force its stiffness balances
    // at g^ / 2 gets the stiffness for its force at once (IPC raises kappa inside the
    // Newton loop too): otherwise it is pressed to a gap where the system's stiffness,
    // lambda / g, is beyond what CG resolves.
    if (gap < 0.01 * c.gap_hat && entry.force > 2.0 * kHalfGapSlope * c.gap_hat * c.stiffness) {
      entry.step_force = entry.force;
      update.raised = true;
      update.consistent = false;  // the next iteration's potential is not this one's
      stiffness_changed_ = true;
    }
  }
  return update;
}

RodContact::ForceUpdate RodContact::update_forces(const VecX& x_lin, const VecX& x_full, const VecX* x_taken) {
  return dimension_ == 2 ? update_forces_in<2>(x_lin, x_full, x_taken) : update_forces_in<3>(x_lin, x_full, x_taken);
}

void RodContact::prune_forces(const VecX& x) {
  std::unordered_map<std::uint64_t, PairForce> kept;
  for (const RodContactPair& pair : pairs_) {
    const auto found = forces_.find(pair_key(pair.segment_a, pair.segment_b));
    if (found == forces_.end()) continue;
    const auto& d = pair.dofs;
    const double distance = segment_distance(point(x, d[0]), point(x, d[1]), point(x, d[2]), point(x, d[3])).distance;
    if (distance - pair.constants.reach < pair.constants.gap_hat) kept.insert(*found);
  }
  forces_.swap(kept);
  ++forces_version_;
}

}  // namespace bristle
