#pragma once
/// Rod-rod contact in the step (docs/contact.md, "Rod-rod contact"): which pairs of segments
/// the barrier (energy/rod_contact.hpp) acts on, and how far a Newton step may go before two
/// capsules touch.
///
/// The step keeps every iterate feasible, as incremental potential contact does (Li et al.
/// 2020): its first iterate is the start of the step, and each Newton direction is searched
/// only up to the largest fraction CCD allows (contact/capsule_ccd.hpp). For that, the pairs
/// are gathered over the whole path of the search: every pair of segments whose capsules,
/// grown by the barrier's reach g^, come near each other anywhere on the straight path from
/// the iterate to the full Newton step (their swept bounding boxes overlap). The barrier is
/// zero beyond g^, so on that path the energy of these pairs is the energy of all pairs.
///
/// Which pairs: segments of different rods; and, with `self`, segments of one rod that share
/// no vertex and have more than pi r of the rod between them (the rule of
/// contact/rod_overlaps.hpp: closer along the rod they are joined by its material). A pair
/// whose capsules already overlap where the path starts (rods that start inside each other)
/// is left out until they separate: the barrier cannot push apart what it never kept apart.
///
/// Broad phase: a uniform grid over the swept boxes, cells processed on several threads, the
/// pairs sorted at the end: the same list for every thread count.

#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>
#include <functional>
#include <limits>
#include <vector>

#include "bristle/contact/box_pairs.hpp"
#include "bristle/contact/rod_contact_rows.hpp"
#include "bristle/energy/rod_contact.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// g^ as a fraction of R = r_a + r_b: the surfaces of resting rods end within this of each
/// other (a log barrier under a load F sits at about g^ min(1, kappa g^ / F)).
constexpr double kContactGapFraction = 0.01;

/// |b'(g^ / 2)| / g^ = 1/2 + ln 2: a barrier of stiffness kappa carries kappa g^ times this at
/// g^ / 2, where each pair's stiffness is sized to rest under the force it carries.
constexpr double kBarrierHalfGapSlope = 1.1931471805599453;
/// A path from the last instant listed takes that instant's pairs of still segments when at most
/// one segment in this many moves (RodContact::collect); otherwise the whole broad phase runs.
constexpr int kInstantMovingShare = 4;
/// The barrier's force scale where gravity is weak or absent [m/s^2].
constexpr double kBarrierMinimumAcceleration = 1.0;

/// The barrier's stiffness for a pair whose vertices weigh `mean_mass` [kg] on average under
/// gravity `gravity` [m/s^2] (taken as at least 1 m/s^2) and whose radii sum to `reach` [m]:
/// its force at half the gap g^ = kContactGapFraction reach is that weight (RodContact's
/// pairs start from it; scene loading checks it can be held). Inline: the loader uses it
/// without the contact module.
inline double rod_contact_weight_stiffness(double mean_mass, double gravity, double reach) {
  // The same operations, in the same order, as the pairs always took: the same bits.
  const double gap_hat = kContactGapFraction * reach;
  return mean_mass * std::max(gravity, kBarrierMinimumAcceleration) / (kBarrierHalfGapSlope * gap_hat);
}

/// A pair's force estimate counts as consistent with its barrier's force phi while it is at
/// most (1 + this) phi (RodContact::update_forces).
constexpr double kForceConsistency = 0.1;

/// One pair of segments: its stencil's first DOFs [p0, p1, q0, q1] (increasing) and constants.
struct RodContactPair {
  std::array<int, 4> dofs{};
  RodContactConstants constants;
  int segment_a = 0, segment_b = 0;  ///< indices into RodContact's segments, a < b
};

/// How a caller moves along a path it asks find_pairs for.
enum class PathMotion {
  /// Each vertex may go any fraction of its own way (a carry whose free vertices are cut and
  /// fixed ones not): a pair is left out only where its segments' own travels cannot bring it
  /// near, whatever the other does.
  AnyFractions,
  /// Every vertex goes the same fraction of its way, or the caller checks
  /// relatively_clear_pairs() where rods go different fractions (limit_step_by_ccd): a pair is
  /// also left out where the two segments' motion relative to each other cannot bring it near
  /// (a dragged brush's neighbouring bristles, which move together).
  OneFraction,
  /// Every vertex goes the same fraction of its way, and nothing else (clear_path's check of a
  /// step's straight motion): the broad phase and the travels are taken in a frame moving with
  /// the segments' mean displacement, where the same pairs touch (a common translation changes
  /// no distance). A dragged brush's step then sweeps its bristles' boxes over how they move
  /// relative to each other, not over the stroke.
  StraightLine,
};

/// A pair find_pairs left out as clear of a OneFraction path by its segments' relative motion
/// and not shown clear by their own travels (with the gap as collect bounded it: some would be
/// with the exact distance): its segments (a < b) and a lower bound on its gap at the path's
/// start [m].
struct RelativelyClearPair {
  int segment_a = 0, segment_b = 0;
  double gap = 0.0;
};

/// What the last measure() found.
struct RodContactStats {
  int pairs = 0;       ///< pairs whose gap is below g^ (the barrier acts on them)
  int candidates = 0;  ///< pairs the broad phase kept
  /// The barrier: pairs left out because their capsules overlapped at the path's start.
  /// Constraints (measure_all): pairs overlapping by more than 1% of the smaller radius.
  int overlapping = 0;
  /// Smallest gap between the surfaces of two segments among the candidates [m], and the same
  /// relative to the smaller radius of the two; +inf without candidates.
  double min_gap = std::numeric_limits<double>::infinity();
  double min_gap_fraction = std::numeric_limits<double>::infinity();
};

class RodContact {
 public:
  /// `masses`: every DOF's lumped mass (Model::dof_masses), for the barrier's stiffness.
  RodContact(const Model& model, const VecX& masses);

  bool enabled() const { return enabled_; }
  void set_threads(int threads) { threads_ = threads < 1 ? 1 : threads; }

  /// The pairs near each other anywhere on the straight path from x_from to x_to (both
  /// finite), as the caller moves along it (`motion`). Pairs overlapping at x_from are left
  /// out (counted in overlapping()).
  const std::vector<RodContactPair>& find_pairs(const VecX& x_from, const VecX& x_to,
                                                PathMotion motion = PathMotion::AnyFractions);
  /// The pairs the last find_pairs left out as clear of its OneFraction path by their segments'
  /// relative motion, not shown clear by their own travels (none after an AnyFractions call),
  /// in segment order.
  const std::vector<RelativelyClearPair>& relatively_clear_pairs() const { return relatively_clear_; }
  /// Whether such a pair stays clear of the barrier (2 g^ apart, a fifth of its gap at most
  /// closed) when its first segment goes the fraction `scale_a` of its way from x_from to x_to
  /// and its second `scale_b` (two rods cut to different fractions by CCD).
  bool clear_at_fractions(const VecX& x_from, const VecX& x_to, const RelativelyClearPair& pair, double scale_a,
                          double scale_b) const;
  /// pair_step's bound for such a pair.
  double relatively_clear_step(const VecX& x_from, const VecX& x_to, const RelativelyClearPair& pair, double scale_a,
                               double scale_b, double keep) const;
  /// Appends such a pair to pairs() (where its rods go different fractions, it may come near)
  /// and returns it.
  const RodContactPair& list_relatively_clear(const RelativelyClearPair& pair);
  const std::vector<RodContactPair>& pairs() const { return pairs_; }
  /// The rod a segment belongs to (RodContactPair::segment_a, segment_b).
  int segment_rod(int segment) const { return segments_[segment].rod; }
  int overlapping() const { return overlapping_; }
  /// How many calls at one instant took their candidates from the last path's list
  /// (collect's keep_path) rather than the broad phase: for tests.
  int path_list_reuses() const { return path_list_reuses_; }
  /// How many paths took the pairs of their still segments from the last instant's list
  /// (collect): for tests.
  int instant_list_reuses() const { return instant_list_reuses_; }

  /// The pairs near each other on the straight path from x_from to x_to as constraint rows
  /// linearised at x_from, in find_pairs' order, with the scene's friction between rods: the
  /// rows of rod-rod contacts as constraints (contact/rod_contact_rows.hpp). Unlike
  /// find_pairs, pairs whose capsules overlap at x_from by less than half their radii are kept
  /// (a negative gap, which the constraint closes in one step: the linearisation's
  /// round-off from the steps before); only deeper ones are left out. Leaves pairs() as it is.
  std::vector<RodContactRow> constraint_rows(const VecX& x_from, const VecX& x_to) const;
  /// Relinearises `rows` (constraint_rows') about x = x^ + h v_lin, a Newton iterate's
  /// positions (v_lin null: about the start x^ itself), so that the end-of-step gap is
  /// gap(x) + h n . sum_k w_k (v1_k - v_lin_k) to first order: each frame is taken at x and its
  /// gap made that offset, gap(x) - h n . sum_k w_k v_lin_k (rod_contact_rows.hpp's u_n then is
  /// the end gap over h). A pair whose axes crossed in the iterate (its normal against its
  /// start normal, both closest points inside their segments) keeps the start's side: the
  /// normal turned back, the gap minus the distance.
  /// `v_lin` is over all DOFs.
  void linearise_rows(std::vector<RodContactRow>& rows, const VecX& x, const VecX* v_lin, double h) const;
  /// Gaps at x of every pair near each other there whose axes are apart (overlapping pairs
  /// included, with their negative gaps): the stats of the constraints method, which has no
  /// pairs() of its own; `overlapping` counts the pairs overlapping by more than 1% of the
  /// smaller radius, axes touching included. Leaves pairs() as it is.
  RodContactStats measure_all(const VecX& x) const;

  /// How many pairs of segments subject to contact have centre lines that meet on the straight
  /// motion from x_from to x_to without meeting at x_from: the crossings `bristle check-contact`
  /// finds between two frames (ContactChecker::crossings, the same test), here over one step.
  /// Leaves pairs() as it is. Not to be called on one RodContact from two threads at once: its
  /// broad phase's kept list (crossing_list_) is updated.
  int crossings(const VecX& x_from, const VecX& x_to) const;

  /// The largest t in [0, 1] such that every pair stays apart from x_from to
  /// x_from + t (x_to - x_from), with a margin (capsule_time_of_impact's `keep`).
  /// `checked`, when given, says which pairs count (all by default).
  double max_step(const VecX& x_from, const VecX& x_to, double keep = 0.1,
                  const std::function<bool(const RodContactPair&)>& checked = {}) const;

  /// How far one Newton iteration may take each current pair alone, in the order of pairs():
  /// max_step's bound, but with the floor a Newton iterate may close a gap to (from a gap g,
  /// min(0.8 g, max(keep g, g^ / 2)): `keep` of the gap from afar, not past g^ / 2 in one
  /// iteration, and at most a fifth of it inside; docs/contact.md, "How far an iteration may
  /// close a gap"). `active[k]` says whether pair k's gap at x_from is below g^ (the barrier
  /// couples its rods there).
  void pair_steps(const VecX& x_from, const VecX& x_to, double keep, std::vector<double>& steps,
                  std::vector<char>& active) const;
  /// pair_steps' bound for pair k alone when its first segment goes the fraction `scale_p` of
  /// its path and its second the fraction `scale_q`.
  double pair_step(const VecX& x_from, const VecX& x_to, int k, double scale_p, double scale_q, double keep) const;

  /// max_step over only the pairs whose closest-point direction P(s) - Q(t) reverses between
  /// x_from and x_to (their order swaps: one passed through, or around, the other). Pairs
  /// sliding along each other keep it and are left alone, where CCD's bound would creep.
  double max_step_reversed(const VecX& x_from, const VecX& x_to, double keep) const;

  /// The barrier energy of all pairs near each other at x, found afresh (the step's pairs are
  /// those of its last search path): the energy of a state outside a step.
  double energy(const VecX& x) const;

  /// Gaps of the current pairs at x.
  RodContactStats measure(const VecX& x) const;

  /// The primal-dual update of each current pair's force estimate (RodContactConstants::force)
  /// after a Newton iteration from x_lin whose full step goes to x_full: lambda takes its
  /// Newton value there, from the linearised complementarity lambda g = g phi(g)
  /// (docs/contact.md, "Primal-dual stiffness"). A pair at or beyond g^ at x_lin has no
  /// estimate, unless `x_taken` (the iterate a step cut short reached) has it inside g^ and the
  /// rest of the step, x_full - x_taken, closes its gap: then it gets the Newton value for that
  /// rest, formed at the taken gap, bounded to [phi, 10 phi] there. A pair pressed below 1% of
  /// g^ by more than twice the force its stiffness balances at g^ / 2 gets the stiffness for its
  /// estimate at once.
  struct ForceUpdate {
    bool raised = false;  ///< some pair's barrier stiffness was raised
    /// No pair's estimate at x_lin exceeded the barrier's force there by more than
    /// kForceConsistency, and no stiffness was raised: the iteration's system was no stiffer
    /// along any normal than the barrier's Hessian (within that), for the potential the next
    /// iteration minimises, so its correction measures the distance to the answer.
    bool consistent = true;
  };
  ForceUpdate update_forces(const VecX& x_lin, const VecX& x_full, const VecX* x_taken = nullptr);
  /// Keeps the estimates of the current pairs within g^ at x only (at the end of a step).
  void prune_forces(const VecX& x);
  /// At the start of a step: each pair's barrier stiffness for the step is sized to the force
  /// it is estimated to carry, kappa = max(kappa_weight, lambda / ((1/2 + ln 2) g^)), so that
  /// the barrier balances that force at g^ / 2 (IPC's adaptive kappa, per pair). Returns
  /// whether any pair's stiffness changed since the last commit_stiffness(): the barrier
  /// energy of a state changes with it. Keeps the estimates as they are for abandon_step().
  bool begin_step();
  /// A step attempt failed: the estimates and stiffnesses go back to where begin_step() found
  /// them, so that a retry (a split step) does not start from the failed iterates'.
  void abandon_step();
  /// The stiffnesses as they are now are those of the committed state's energies.
  void commit_stiffness() { stiffness_changed_ = false; }

 private:
  struct Segment {
    int rod = 0, index = 0;
    int dof0 = 0, dof1 = 0;     // first DOFs of its two vertices
    int vertex0 = 0;            // global index of its first vertex (the second is the next)
    double radius = 0.0;        // [m]
    double arc_start = 0.0;     // rest length of the rod before it [m]
    double rest_length = 0.0;   // [m]
    double mass = 0.0;          // of its two vertices [kg]
    bool fixed = false;         // both its vertices are held (no free DOF)
  };
  Vec3 point(const VecX& x, int dof) const {
    return dimension_ == 3 ? Vec3(x[dof], x[dof + 1], x[dof + 2]) : Vec3(x[dof], x[dof + 1], 0.0);
  }
  /// Pairs whose axes are further apart than `overlap_floor` times the sum of the radii at
  /// x_from are kept; the others are counted in `overlapping`.
  /// With `only_near_path`, pairs that cannot come within 2 g^ on the path, nor close a fifth of
  /// their gap, are left out too: the solver's list (find_pairs, energy).
  /// With `keep_path` (find_pairs), the path is kept for within_last_path. A call at one
  /// instant (x_from and x_to the same vector) on the last kept path takes its candidates from
  /// that path's list instead of the broad phase: the same pairs.
  /// With `relatively_clear` (only with `only_near_path`), pairs clear of the path by their
  /// segments' motion relative to each other are left out too, and listed there: the path is
  /// taken at one fraction (PathMotion::OneFraction).
  /// With a nonzero `shift` (only with `only_near_path`, on a path every vertex takes at one
  /// fraction: PathMotion::StraightLine), the path is taken in the frame that moves by `shift`
  /// over it: x_to's points less the shift.
  void collect(const VecX& x_from, const VecX& x_to, std::vector<RodContactPair>& pairs, int& overlapping,
               double overlap_floor = 1.0, bool only_near_path = false, bool keep_path = false,
               std::vector<RelativelyClearPair>* relatively_clear = nullptr, const Vec3& shift = Vec3::Zero()) const;
  /// The box of segment `segment` swept from x_from to x_to less `shift`, grown by its radius
  /// and g^ (a zero shift: the same bits as none).
  AxisBox swept_box(const VecX& x_from, const VecX& x_to, int segment, const Vec3& shift = Vec3::Zero()) const;
  /// The box of segment `segment` at x less `shift`, grown as swept_box's: inside the box swept
  /// to x in the frame moving by `shift`, bit for bit.
  AxisBox shifted_box(const VecX& x, int segment, const Vec3& shift) const;
  /// How far vertex `dof` goes from x_from to x_to less `shift`: the one expression for the
  /// travels a path keeps and for within_last_path's test against them.
  double vertex_travel(const VecX& x_from, const VecX& x_to, int dof, const Vec3& shift) const {
    return (point(x_to, dof) - shift - point(x_from, dof)).norm();
  }
  /// The sum of the segments' first vertices' travels from x_from to x_to less `shift`
  /// (vertex_travel), summed in chunks as mean_displacement.
  double path_travel(const VecX& x_from, const VecX& x_to, const Vec3& shift) const;
  /// The segments' mean displacement from x_from to x_to (their first vertices'), summed in
  /// chunks of a fixed size: the same bits for any thread count.
  Vec3 mean_displacement(const VecX& x_from, const VecX& x_to) const;
  /// The broad phase's candidate pairs over the swept boxes (left in boxes_ until a kept path
  /// takes them), sorted.
  /// With `moving` (one entry per segment), only the candidates with a moving segment.
  /// With a nonzero `shift`, over the boxes swept in the frame moving by it (collect).
  const std::vector<std::pair<int, int>>& broad_phase(const VecX& x_from, const VecX& x_to,
                                                      const std::vector<char>* moving = nullptr,
                                                      const Vec3& shift = Vec3::Zero()) const;
  /// The pair of segments i < j with its constants (its force estimate, if any).
  RodContactPair make_pair(int i, int j) const;
  /// Whether every segment at x lies on the last kept path as collect's list of it needs:
  /// inside its swept box, each vertex within its segment's travel of the path's start, in the
  /// path's frame moved by some common shift (the path's own, as at its end, or none).
  bool within_last_path(const VecX& x) const;
  /// within_last_path's test with x moved back by `shift`.
  bool within_last_path_shifted(const VecX& x, const Vec3& shift) const;
  /// Stats of `pairs` at x; `overlapping` is carried over, plus, with `overlap_fraction` >= 0,
  /// the pairs overlapping by more than that fraction of their smaller radius.
  RodContactStats measure_pairs(const VecX& x, const std::vector<RodContactPair>& pairs, int overlapping,
                                double overlap_fraction = -1.0) const;
  bool excluded(const Segment& a, const Segment& b) const;

  static std::uint64_t pair_key(int segment_a, int segment_b) {
    return (static_cast<std::uint64_t>(segment_a) << 32) | static_cast<std::uint32_t>(segment_b);
  }
  template <int D>
  ForceUpdate update_forces_in(const VecX& x_lin, const VecX& x_full, const VecX* x_taken);

  bool enabled_ = false;
  bool self_ = true;
  double friction_ = 0.0;  // Coulomb's mu between rods
  struct PairForce {
    double force = 0.0;       // the current estimate [N]
    double step_force = 0.0;  // the estimate at the step's start: sizes kappa for the step [N]
  };
  std::unordered_map<std::uint64_t, PairForce> forces_;  // pairs within g^
  std::unordered_map<std::uint64_t, PairForce> saved_forces_;  // as begin_step() found them
  bool stiffness_changed_ = false;  // since commit_stiffness()
  bool saved_stiffness_changed_ = false;
  int dimension_ = 3;
  int threads_ = 1;
  double gravity_ = 0.0;  // |g| [m/s^2]
  std::vector<Segment> segments_;
  std::vector<RodContactPair> pairs_;
  std::vector<RelativelyClearPair> relatively_clear_;
  int overlapping_ = 0;
  // collect()'s broad phase, kept across calls (a cache: collect stays const to its callers).
  mutable BoxPairList candidate_list_;   // kept for short paths (RodContact::collect)
  mutable BoxPairList long_path_list_;   // and for paths longer than the radii
  mutable BoxPairList straight_line_list_;  // and for paths in a moving frame (PathMotion::StraightLine)
  mutable BoxPairList crossing_list_;    // crossings()' over each step
  mutable std::vector<double> candidate_distances_;
  // Per candidate: a bound on how far any point of one segment moves relative to any point of
  // the other on the path (collect's relatively_clear).
  mutable std::vector<double> candidate_relative_travel_;
  mutable std::vector<std::vector<RelativelyClearPair>> block_relatively_clear_;
  mutable std::vector<double> segment_travel_;
  mutable std::vector<std::vector<RodContactPair>> block_pairs_;  // collect's pairs, per block of candidates
  mutable std::vector<AxisBox> boxes_;  // scratch: the broad phase's swept boxes, within_last_path's at x
  // The last kept path (collect's keep_path): its start, swept boxes, each segment's travel,
  // and its candidates that were not shown clear of it (overlapping at the start, or listed),
  // sorted.
  mutable bool last_path_valid_ = false;
  // The last instant listed (a call with x_from and x_to the same vector): its positions, the
  // candidates not shown clear there (sorted) and which of them overlapped, and the force
  // estimates' version then (forces_version_ counts changes in which pairs have one).
  mutable bool instant_valid_ = false;
  mutable VecX instant_x_;
  mutable std::vector<std::pair<int, int>> instant_kept_;
  // What collect did with each kept candidate: listed, overlapping at the start, or left out as
  // clear only relative to the two segments' common motion (kept for the path's certificate).
  enum KeptState : char { kKeptListed = 0, kKeptOverlapping = 1, kKeptRelativelyClear = 2 };
  mutable std::vector<char> instant_kept_state_;
  mutable std::uint64_t instant_forces_version_ = 0;
  std::uint64_t forces_version_ = 0;
  // Per segment: whether a pair of it has a force estimate (is a key of forces_), as of
  // forces_version_ == segment_forces_version_: most of collect's candidates then need no
  // look-up in forces_ (has_force_estimate).
  mutable std::vector<char> segment_has_force_;
  mutable std::uint64_t segment_forces_version_ = 0;
  mutable bool segment_forces_valid_ = false;
  void refresh_segment_forces() const;
  bool has_force_estimate(int i, int j) const {
    return segment_has_force_[i] && segment_has_force_[j] && forces_.find(pair_key(i, j)) != forces_.end();
  }
  mutable int instant_list_reuses_ = 0;
  mutable std::vector<char> segment_moving_;
  mutable std::vector<std::pair<int, int>> kept_, merged_kept_;
  mutable std::vector<char> kept_state_, merged_kept_state_;
  mutable std::vector<RodContactPair> merged_pairs_;
  mutable std::vector<std::vector<char>> block_kept_state_;
  mutable int path_list_reuses_ = 0;
  mutable VecX last_path_from_;
  mutable std::vector<AxisBox> last_path_boxes_;
  mutable std::vector<double> last_path_travel_;
  mutable Vec3 last_path_shift_ = Vec3::Zero();  // the frame's shift over the path (collect's `shift`)
  mutable std::vector<std::pair<int, int>> last_path_kept_;
  mutable std::vector<std::vector<std::pair<int, int>>> block_kept_;
  mutable std::vector<std::pair<int, int>> on_path_candidates_;
  mutable std::vector<std::vector<std::pair<int, int>>> on_path_blocks_;
};

}  // namespace bristle
