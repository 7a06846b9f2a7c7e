#pragma once
/// Contact between rod vertices and rigid colliders, resolved inside the implicit step.
///
/// Design note (docs/contact.md has the full argument). Contact is a set of velocity
/// constraints on single vertices, imposed exactly in the step's linear solve (Baraff-Witkin
/// constraint filtering, here by change of basis and elimination: constraint_filter.hpp).
/// A vertex in contact with collider c must end the step with its surface on c's surface
/// (linearised at the predicted end position x~ = x0 + h v):
///
///   n . x1 = n . x~ - (phi(x~) - r),   x1 = x0 + h v1,   n = grad phi(x~)
///
/// so the normal velocity is prescribed and contact is anticipated within the step, however
/// fast the vertex arrives. Each contact is sticking (the whole velocity prescribed: the
/// surface's velocity, corrected along n) or sliding (only the normal prescribed, plus a
/// Coulomb friction impulse -mu lambda_n s, the bound lagged from the previous pass and the
/// direction s implicit: linearised about the last slip, build_constraints). An active-set
/// loop settles which constraints hold, one stage at a time (release_pulling):
///
///   predict x~ ---> contacts where phi(x~) - r < activation gap
///      |
///      v
///   build constraints + friction --> filtered solve --> dv --> impulses c = J dv - b
///      ^                                                          |
///      |  1. release    lambda_n < 0 (the constraint would pull)  v
///      |  2. friction   stick -> slide when |c_t| > mu lambda_n   changes? no -> done
///      +--              slide -> stick when the slip would reverse
///                       bound mu lambda_n (secant) and direction to a fixed point
///         3. add        new vertices predicted to penetrate
///                       relinearise curved colliders whose gap drifted
///
/// with anti-cycling rules (a pulling stick tries sliding first, a re-added vertex is held,
/// a vertex that cycled slides against its proximal trial impulse, a cap on returns to
/// sticking) and, should the set still not settle within max_iterations, a finish that
/// cannot cycle (finish_unsettled: every stage at once, no return to sticking, a vertex
/// released and added again held; friction bounded by the cone, not by a sticking constraint),
/// whose last solves leave each sliding vertex friction -B s against its slip, or none
/// (settle_friction_for_finish).
///
/// Nothing here adds energy: constraint impulses are exactly those that stop the normal
/// approach (inelastic contact), so a vertex leaves a surface only as fast as the other forces
/// carry it, never kicked out by a penalty.
///
/// Rod-rod contact can join later as a different source of constraints or as a barrier
/// energy with its own element Hessians (coupling two rods' blocks, which the per-rod
/// preconditioner leaves to CG); the solve/filter/impulse machinery does not assume that a
/// constraint's other side is a collider.

#include <functional>
#include <vector>

#include "bristle/contact/constraint_filter.hpp"
#include "bristle/contact/contact_report.hpp"
#include "bristle/contact/signed_distance.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

struct ContactSettings {
  /// Active-set passes (linear solves) per Newton iteration before giving up (the step then
  /// reports converged = false but keeps its result).
  int max_iterations = 50;
  /// At the start of a Newton iteration, a vertex whose predicted gap phi(x0 + h v) - r is
  /// below this fraction of its radius gets a contact (resting contact stays on).
  double activation_gap = 0.01;
  /// During the passes, a vertex predicted to penetrate deeper than this fraction of its
  /// radius gets a contact.
  double penetration_tolerance = 1e-2;
  /// A held vertex on a curved collider is relinearised while its gap exceeds this fraction
  /// of its radius.
  double gap_tolerance = 1e-3;
  /// A sliding contact counts as settled when its lagged friction bound changes by less than
  /// this relative amount and its slip direction by less than this angle [rad].
  double friction_tolerance = 1e-3;
  /// Stick/slide switches after which a vertex may no longer return to sticking within one
  /// solve (anti-cycling, see ContactSolver::release_pulling).
  int max_state_changes = 3;
};

enum class FrictionState { Stick, Slide };

/// One vertex against one collider.
struct ColliderContact {
  int collider = 0;
  Vec3 normal = Vec3::UnitY();    ///< outward unit normal at the linearisation point
  double target = 0.0;            ///< required n . x1 [m]
  Vec3 surface_velocity = Vec3::Zero();  ///< velocity of the collider's surface there [m/s]
  double normal_impulse = 0.0;    ///< lambda_n over the step [N s] from the last solve
  /// target - n . x0: how far the contact moves the vertex along n over the step [m]; negative
  /// when it draws a vertex that starts above the surface down onto it.
  double start_offset = 0.0;
};

/// A vertex with its contacts (usually one; a vertex in a corner touches two or three).
struct VertexContact {
  int rod = 0, vertex = 0;    ///< which vertex
  int dof = 0, free = 0;      ///< its first DOF and first free index
  double radius = 0.0;        ///< the rod's radius [m]
  FrictionState state = FrictionState::Stick;
  Vec3 slip_direction = Vec3::Zero();  ///< unit, the relative sliding direction (Slide)
  double friction_bound = 0.0;         ///< sum mu lambda_n applied while sliding [N s]
  Vec3 friction_impulse = Vec3::Zero();  ///< tangential impulse from the colliders [N s]
  /// Held until the end of the solve, never released: set when a vertex released earlier in
  /// the same solve is added again (release and re-add would cycle; see ContactSolver::release_pulling).
  bool held = false;
  /// Sliding: c = friction_bound / |slip|, how the friction impulse turns with the slip (see
  /// build_constraints; impulse per velocity, [kg]), and its matrix c P on the vertex's block.
  double direction_stiffness = 0.0;
  Mat3 friction_matrix = Mat3::Zero();
  int state_changes = 0;  ///< stick/slide switches in this solve; capped to stop cycling
  /// Went from sliding back to sticking in this solve: if it slides again, its direction comes
  /// from the proximal trial impulse (ContactSolver::update_friction), not from the slip.
  bool cycled = false;
  /// The previous sliding pass's bound and the mu lambda_n it produced (secant_bound < 0:
  /// none yet), for the secant step on the bound's fixed point.
  double secant_bound = -1.0, secant_value = 0.0;
  std::vector<ColliderContact> contacts;
};

class ContactSolver {
 public:
  /// Solves `matrix` solution = rhs starting from `guess`; false when the solve failed.
  /// `same_rods`, when not null (one entry per rod), marks the rods whose own constraints,
  /// friction matrices and right-hand side rows are bitwise those of the solve's last call,
  /// whose entries of `solution` still hold that call's result: for a rod no entry of the
  /// system couples to another, its rows of `matrix` and `rhs` are then the last call's, and
  /// a solve may leave its solution as it is (ImplicitEuler::cg_over_coupled_rods). Given only
  /// between two whole-system passes of one ContactSolver::solve.
  using LinearSolve = std::function<bool(const SparseMatrix& matrix, const VecX& rhs, const VecX& guess,
                                         VecX& solution, const std::vector<char>* same_rods)>;
  /// Solves the listed rods' diagonal blocks of `matrix` exactly, each on its own, writing
  /// their entries of `solution` (the others are left as they are); false where it cannot.
  /// Offered only when no term couples two rods in the system: then a rod's solution depends on
  /// its own rows alone.
  using RodSolve = std::function<bool(const SparseMatrix& matrix, const VecX& rhs, const std::vector<int>& rods,
                                      VecX& solution)>;

  ContactSolver(const Model& model, ContactSettings settings = {});

  /// True when the model has colliders (otherwise the integrator never calls this class).
  bool enabled() const { return !disabled_ && !model_.colliders.empty(); }
  /// Leaves the colliders to another solver (rod contact as constraints, which puts them in
  /// its impulse solve): enabled() is false from now on.
  void disable() { disabled_ = true; }
  const ContactSettings& settings() const { return settings_; }
  /// Threads over rods (each rod's vertices on one thread: the same bits for any count).
  void set_threads(int threads) { threads_ = threads < 1 ? 1 : threads; }

  /// Starts a step: reads the colliders' current poses (handles may have moved them since
  /// the last step) and forgets the previous step's contacts, keeping only how each vertex
  /// ended it (sticking, or sliding with its direction and bound): the next step's contacts
  /// start from that (a warm start, see add_or_refresh).
  void begin_step();

  /// The linear solve of one Newton iteration, with contact. `system` is J on the free DOFs
  /// (its values are restored on return), `rhs_free` the right-hand side -r, x0 the start
  /// positions, v the current velocity iterate (all DOFs, fixed ones prescribed), h the step,
  /// `guess` the start for the solve when no constraint is active. Writes the velocity change
  /// of the free DOFs. Returns false when a linear solve failed.
  /// With `rod_solve` (rods that do not couple), the active set is settled rod by rod: each
  /// pass solves only the rods whose constraints changed in the pass before (their own stages
  /// decide), with their blocks' direct solves; a rod whose solve fails turns the rest of the
  /// solve into the whole-system passes with `linear_solve`.
  /// With `active_rods` (one entry per rod), only the marked rods take part: the caller's
  /// right-hand side and guess are zero on the others' rows, no entry of the system ties a
  /// marked rod to an unmarked one, and the unmarked rods' contacts keep their states and
  /// impulses (a Newton iteration on the rods still moving; ImplicitEuler's active rods).
  bool solve(SparseMatrix& system, const VecX& rhs_free, const VecX& x0, const VecX& v, double h,
             const VecX& guess, const LinearSolve& linear_solve, VecX& dv_free, const RodSolve& rod_solve = {},
             const std::vector<char>* active_rods = nullptr);

  /// Per-collider stats of the last solve, penetration measured at the end positions x1.
  void report(const VecX& x1, double h, ContactReport& out) const;

  const std::vector<VertexContact>& contacts() const { return contacts_; }

  /// The deepest a free vertex's sphere at positions `x` reaches into a collider of this
  /// step, in its radius (<= 0: none touches). The measure of report()'s penetration.
  double max_penetration_fraction(const VecX& x) const;
  /// The same, rod by rod (-infinity for a rod with no free vertex), in `per_rod`.
  void max_penetration_fraction_by_rod(const VecX& x, std::vector<double>& per_rod) const;

 private:
  // The stages act on the vertices of the rods `rods` marks (per rod; all of them for
  // whole-system passes), and mark the rods they change in rod_changed_ (and rod_switched_: a
  // stick/slide switch). The pieces of a whole-system pass act on every contact; rods apart,
  // solve() runs their per-vertex parts rod by rod.
  bool add_or_refresh(const VecX& xp, double h, double add_below, bool refresh_all, const std::vector<char>& rods);
  void build_constraints(const VecX& x0, const VecX& v, double h, const VecX& rhs_free);
  void add_friction_matrices(SparseMatrix& system) const;
  void compute_impulses(const SparseMatrix& system, const VecX& dv_free, const VecX& rhs_free);
  struct FrictionChange {
    bool switched = false;  ///< a vertex went from sticking to sliding or back
    bool updated = false;   ///< a sliding vertex's bound or direction moved
  };
  bool release_pulling(const std::vector<char>& rods);
  FrictionChange update_friction(const VecX& v_trial, const std::vector<char>& rods);
  // One vertex's part of build_constraints (its rows of rhs_ included), compute_impulses and
  // update_friction: vertices of different rods may run on different threads.
  VelocityConstraint build_constraint(VertexContact& vc, const VecX& x0, const VecX& v, double h);
  void compute_impulse(VertexContact& vc, const SparseMatrix& system, const VecX& dv_free, const VecX& rhs_free) const;
  void update_friction_of(VertexContact& vc, const VecX& v_trial, FrictionChange& change);
  double coulomb_bound(const VertexContact& vc) const;
  static void add_friction_matrix(const VertexContact& vc, int D, const int* outer, const int* inner, double* values);
  /// A contact add_or_refresh is to add: vertex (global) and its linearised contact.
  struct PendingContact {
    int vertex = 0;
    ColliderContact contact;
  };
  bool scan_rod(int rod, const VecX& xp, double h, double add_below, bool refresh_all,
                std::vector<PendingContact>& pending);
  /// rod_contact_list_[rod_contact_offsets_[r] .. rod_contact_offsets_[r + 1]): rod r's
  /// contacts (indices into contacts_), in contacts_'s order.
  void index_contacts_by_rod();
  /// The DOFs of the marked rods: the work of a loop over them, for deciding on threads.
  int marked_dofs(const std::vector<char>& rods) const;
  void finish_unsettled(const std::vector<char>& rods);
  bool settle_friction_for_finish(const std::vector<char>& rods);
  /// xp_ = x0 + h v_trial_ on the marked rods' DOFs: where the stages look for new contacts.
  void predict_positions(const VecX& x0, double h, const std::vector<char>& rods);
  void linearise(ColliderContact& contact, const Vec3& x_predicted, double radius, double h) const;
  Vec3 position(const VecX& x, int global_vertex) const;
  /// Calls f(global vertex, depth) for every free vertex and collider of this step, depth the
  /// vertex's radius minus its distance to the collider (> 0: inside).
  template <class F>
  void for_each_vertex_depth(const VecX& x, F&& f) const {
    for (int gv = 0; gv < model_.layout.vertex_count(); ++gv) {
      if (model_.layout.free_index(model_.layout.vertex_dof(gv)) < 0) continue;
      const Vec3 p = position(x, gv);
      for (const Collider& c : colliders_) f(gv, vertex_radius_[gv] - collider_distance(c, p));
    }
  }
  void rebuild_slots();

  const Model& model_;
  bool disabled_ = false;
  ContactSettings settings_;
  std::vector<Collider> colliders_;  // this step's poses (boxes made infinite along z in 2D)
  // Per global vertex (indices come from model_.layout): radius and mass.
  std::vector<double> vertex_radius_, vertex_mass_;

  std::vector<VertexContact> contacts_;
  std::vector<int> slot_;  // global vertex -> index in contacts_, or -1
  std::vector<int> released_;  // global vertex -> releases in the current solve
  // Global vertex -> how it ended the previous step: -1 free, 0 sticking, 1 sliding (with its
  // slip direction and bound), for warm-starting the friction state.
  std::vector<int> previous_state_;
  std::vector<Vec3> previous_slip_;
  std::vector<double> previous_bound_;
  int solves_ = 0;
  long long rod_solves_ = 0;
  bool converged_ = true;

  bool finishing_ = false;  // in the passes after finish_unsettled (new contacts switch once at most)
  // Per rod: every rod (whole-system passes), the rods the next pass solves, those a stage
  // changed or switched in this pass, and a stage's eligible rods.
  std::vector<char> all_rods_, rod_active_, rod_changed_, rod_switched_, rod_stage_;
  /// The rods of the current solve, or null for all (solve's active_rods).
  const std::vector<char>* pass_rods_ = nullptr;
  bool in_pass(const VertexContact& vc) const { return pass_rods_ == nullptr || (*pass_rods_)[vc.rod] != 0; }
  std::vector<int> active_rods_;

  // Scratch.
  std::vector<VelocityConstraint> constraints_;
  std::vector<int> filter_scratch_;  // filter_system's, kept between passes
  std::vector<int> changed_columns_;  // the columns a whole-system pass's filter changed
  std::vector<std::vector<int>> thread_filter_scratch_;  // the same, per thread (rods apart)
  std::vector<std::vector<VelocityConstraint>> rod_constraints_;  // rods apart: per rod
  std::vector<std::vector<PendingContact>> rod_pending_;
  // What a whole-system pass's filtered system takes from one vertex's contact: its
  // constraint, the friction matrix added to its block, its right-hand side rows before the
  // filter. Equal records for every contact of a rod, pass to pass, leave that rod's own rows
  // of the filtered system as they were (LinearSolve's same_rods).
  struct PassRecord {
    int rod = 0;
    VelocityConstraint constraint;
    Mat3 friction = Mat3::Zero();
    Vec3 rhs = Vec3::Zero();
  };
  std::vector<PassRecord> pass_records_, last_pass_records_;
  std::vector<char> same_rods_;
  bool last_whole_pass_solved_ = false;  // the last pass was a whole-system one and was solved
  void record_pass();
  /// Marks in same_rods_ the rods of `rods` whose records equal the last solved pass's.
  void mark_same_rods(const std::vector<char>& rods);
  std::vector<int> rod_contact_offsets_, rod_contact_list_;
  int threads_ = 1;
  VecX saved_values_, rhs_, v_trial_, xp_, pass_guess_;
  // The filtered system's solution: per rod (rods apart), or of the last whole-system pass,
  // kept for the next (LinearSolve's same_rods).
  VecX y_;
  // The system's values as solve() received them, copied a rod's columns at a time, on the
  // threads, when a pass first changes them (rod_values_saved_); the columns a whole-system
  // pass changes, before it changes them (filtered_columns).
  std::vector<char> rod_values_saved_;
  void save_rod_values(const SparseMatrix& system, int rod);
};

}  // namespace bristle
