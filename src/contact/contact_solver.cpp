#include "bristle/contact/contact_solver.hpp"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>

#include <Eigen/QR>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bristle/contact/signed_distance.hpp"

namespace bristle {
namespace {

// Cap of a sliding vertex's friction direction stiffness (impulse per velocity, [kg]), as a
// multiple of the vertex's mass: large enough to hold the direction of a nearly stopped slip,
// small enough to keep the vertex's block well scaled next to its mass.
constexpr double kMaxDirectionStiffness = 1e6;

// Solves after finish_unsettled() while only bounds, directions and linearisations still change
// (each pass may add vertices that still penetrate; see ContactSolver::solve).
constexpr int kFinishSolves = 4;

// Solves at most after the finish that make its friction admissible and dissipative
// (ContactSolver::settle_friction_for_finish): each drops a vertex's friction for good.
constexpr int kDissipationSolves = 8;

// Below this much work (the DOFs of the rods a loop visits) a loop over rods stays on one
// thread: a pass over a few short rods costs less than waking the others (hair_on_sphere's 24
// strands ran 15% slower on two threads than on one without it).
constexpr int kParallelRodDofs = 4096;
// Below this many DOFs a loop over DOFs stays on one thread.
constexpr int kParallelDofs = 16384;

/// The vertex's contact normals as the columns of a 3 x m matrix.
Eigen::MatrixXd normals_of(const VertexContact& vc) {
  Eigen::MatrixXd n(3, static_cast<int>(vc.contacts.size()));
  for (int k = 0; k < n.cols(); ++k) n.col(k) = vc.contacts[k].normal;
  return n;
}

// A vertex touches one collider almost always (a brush's tips on the paper): its normals'
// least-squares problems are then closed forms over fixed-size vectors, where the general
// path (a dynamic matrix and its decomposition per call) would allocate on every contact of
// every pass (a tenth of the pressed brush's time went to malloc and free).

/// The coefficient c minimising |n c - vector|: n.vector / n.n, 0 for a zero n (the
/// minimum-norm answer, as CompleteOrthogonalDecomposition gives for a rank-0 matrix).
double along_normal(const Vec3& n, const Vec3& vector) {
  const double nn = n.squaredNorm();
  return nn > 0.0 ? n.dot(vector) / nn : 0.0;
}

/// The component of `vector` orthogonal to the span of the vertex's contact normals.
Vec3 tangential_part(const VertexContact& vc, const Vec3& vector) {
  if (vc.contacts.size() == 1) {
    const Vec3& n = vc.contacts.front().normal;
    return vector - n * along_normal(n, vector);
  }
  const Eigen::MatrixXd normals = normals_of(vc);
  const Eigen::VectorXd coefficients = normals.completeOrthogonalDecomposition().solve(vector);
  return vector - normals * coefficients;
}

/// An orthonormal basis of R^D (columns of the top-left D x D block) whose first column is
/// n / |n|, n != 0 and D = 2 or 3.
Mat3 frame_from_normal(const Vec3& n, int dimension) {
  Mat3 frame = Mat3::Identity();
  const Vec3 q = n / n.norm();
  frame.col(0) = q;
  if (dimension == 2) {
    frame.col(1) = Vec3(-q.y(), q.x(), 0.0);
  } else {
    // The axis least aligned with q, made orthogonal to it (|q_axis| <= 1/sqrt(3)).
    Eigen::Index axis = 0;
    q.cwiseAbs().minCoeff(&axis);
    Vec3 t = -q[axis] * q;
    t[axis] += 1.0;
    t.normalize();
    frame.col(1) = t;
    frame.col(2) = q.cross(t);
  }
  return frame;
}

}  // namespace

ContactSolver::ContactSolver(const Model& model, ContactSettings settings)
    : model_(model), settings_(settings) {
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r)
    for (int i = 0; i < model.rods[r].vertex_count(); ++i) vertex_radius_.push_back(model.rods[r].material.radius);
  const std::size_t vertices = vertex_radius_.size();
  slot_.assign(vertices, -1);
  released_.assign(vertices, 0);
  previous_state_.assign(vertices, -1);
  previous_slip_.assign(vertices, Vec3::Zero());
  previous_bound_.assign(vertices, 0.0);
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r)
    for (int i = 0; i < model.rods[r].vertex_count(); ++i) vertex_mass_.push_back(model.rods[r].vertex_mass(i));
  const std::size_t rods = model.rods.size();
  all_rods_.assign(rods, 1);
  rod_active_.assign(rods, 1);
  rod_changed_.assign(rods, 0);
  rod_switched_.assign(rods, 0);
  rod_stage_.assign(rods, 0);
}

Vec3 ContactSolver::position(const VecX& x, int global_vertex) const {
  Vec3 p = Vec3::Zero();
  p.head(model_.dimension) = x.segment(model_.layout.vertex_dof(global_vertex), model_.dimension);
  return p;
}

void ContactSolver::rebuild_slots() {
  std::fill(slot_.begin(), slot_.end(), -1);
  for (int k = 0; k < static_cast<int>(contacts_.size()); ++k)
    slot_[model_.layout.global_vertex(contacts_[k].rod, contacts_[k].vertex)] = k;
}

void ContactSolver::begin_step() {
  colliders_ = model_.colliders;
  if (model_.dimension == 2)  // the z extent of a box means nothing in the xy-plane
    for (Collider& c : colliders_)
      if (c.type == ColliderType::Box) c.half_extents.z() = std::numeric_limits<double>::infinity();
  // Warm start: how each vertex ended the last step (see add_or_refresh).
  std::fill(previous_state_.begin(), previous_state_.end(), -1);
  for (const VertexContact& vc : contacts_) {
    const int gv = model_.layout.global_vertex(vc.rod, vc.vertex);
    previous_state_[gv] = vc.state == FrictionState::Stick ? 0 : 1;
    previous_slip_[gv] = vc.slip_direction;
    previous_bound_[gv] = vc.friction_bound;
  }
  contacts_.clear();
  rebuild_slots();
  solves_ = 0;
  rod_solves_ = 0;
  converged_ = true;
}

// Linearises phi about the predicted end position x~: n = grad phi(x~), and the vertex must
// end on the tangent plane n . x1 = n . x~ - (phi(x~) - r). The surface point below x~ is
// p = x~ - phi_0(x~) n (phi_0 the distance to the collider itself); its velocity over the
// step is (p - M^-1 p) / h, M the collider's rigid motion over the step.
void ContactSolver::linearise(ColliderContact& contact, const Vec3& x_predicted, double radius,
                              double h) const {
  const Collider& collider = colliders_[contact.collider];
  const double distance = collider_distance(collider, x_predicted);
  contact.normal = collider_distance_gradient(collider, x_predicted);
  if (model_.dimension == 2) {
    contact.normal.z() = 0.0;
    contact.normal.normalize();
  }
  contact.target = contact.normal.dot(x_predicted) - (distance - radius);
  const Vec3 surface = x_predicted - distance * contact.normal;
  const Vec3 start = collider.step_rotation.transpose() * (surface - collider.step_translation);
  contact.surface_velocity = (surface - start) / h;
  if (model_.dimension == 2) contact.surface_velocity.z() = 0.0;
}

// Adds a contact for every free vertex whose predicted gap is below `add_below` and that has
// none with that collider yet; relinearises existing contacts (all of them, or only those
// whose gap drifted beyond gap_tolerance). Returns whether anything changed.
bool ContactSolver::add_or_refresh(const VecX& xp, double h, double add_below, bool refresh_all,
                                   const std::vector<char>& rods) {
  // Each rod's vertices are scanned on one thread (a contact's relinearisation is its own);
  // the new contacts are then appended in the order of the vertices, as one loop would.
  const DofLayout& layout = model_.layout;
  const int rod_count = layout.rod_count();
  rod_pending_.resize(rod_count);
  std::vector<char> refreshed(rod_count, 0);
  const bool parallel = threads_ > 1 && marked_dofs(rods) >= kParallelRodDofs;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_) if (parallel)
  for (int r = 0; r < rod_count; ++r) {
    rod_pending_[r].clear();
    if (rods[r]) refreshed[r] = scan_rod(r, xp, h, add_below, refresh_all, rod_pending_[r]);
  }
  bool changed = false;
  for (int r = 0; r < rod_count; ++r) {
    if (refreshed[r]) {
      rod_changed_[r] = 1;
      changed = true;
    }
    for (const PendingContact& pending : rod_pending_[r]) {
      const int gv = pending.vertex;
      if (slot_[gv] < 0) {
        VertexContact vc;
        vc.rod = r;
        vc.vertex = layout.vertex_in_rod(gv);
        vc.dof = layout.vertex_dof(gv);
        vc.free = layout.free_index(vc.dof);
        vc.radius = vertex_radius_[gv];
        // Warm start from how the vertex ended the last step: sticking, it starts sticking;
        // sliding, it starts sliding the same way with the same bound; a new contact starts
        // sliding without friction for one pass (its first normal impulse then sets the
        // bound and the slide -> stick test decides). Resting contact thus settles in one
        // pass, and an arriving vertex does not first stick, pull and cascade.
        const double friction = colliders_[pending.contact.collider].friction;
        vc.state = friction > 0.0 && previous_state_[gv] == 0 ? FrictionState::Stick : FrictionState::Slide;
        if (previous_state_[gv] == 1 && friction > 0.0) {
          vc.state = FrictionState::Slide;
          vc.slip_direction = previous_slip_[gv];
          vc.friction_bound = previous_bound_[gv];
        }
        // A contact made in the finish slides or sticks as it starts, never back and forth.
        vc.state_changes = finishing_ ? settings_.max_state_changes : 0;
        slot_[gv] = static_cast<int>(contacts_.size());
        contacts_.push_back(vc);
      }
      // Anti-cycling (see release_pulling): a vertex released earlier in this solve and now
      // added again is held, whether its other contacts kept it in the list or not.
      if (released_[gv] > 0) contacts_[slot_[gv]].held = true;
      contacts_[slot_[gv]].contacts.push_back(pending.contact);
      rod_changed_[r] = 1;
      changed = true;
    }
  }
  return changed;
}

// add_or_refresh's part for one rod: relinearises its existing contacts (all, or those whose
// gap drifted; true if any of those), and lists the contacts to add, linearised.
bool ContactSolver::scan_rod(int rod, const VecX& xp, double h, double add_below, bool refresh_all,
                             std::vector<PendingContact>& pending) {
  const DofLayout& layout = model_.layout;
  bool refreshed = false;
  const int first = layout.global_vertex(rod, 0);
  const int end = first + model_.rods[rod].vertex_count();
  for (int gv = first; gv < end; ++gv) {
    if (layout.free_index(layout.vertex_dof(gv)) < 0) continue;  // prescribed: contact cannot act on it
    const Vec3 x = position(xp, gv);
    const double radius = vertex_radius_[gv];
    for (int c = 0; c < static_cast<int>(colliders_.size()); ++c) {
      const double gap = collider_distance(colliders_[c], x) - radius;
      ColliderContact* existing = nullptr;
      if (slot_[gv] >= 0)
        for (ColliderContact& cc : contacts_[slot_[gv]].contacts)
          if (cc.collider == c) existing = &cc;
      if (existing) {
        if (refresh_all || std::abs(gap) > settings_.gap_tolerance * radius) {
          linearise(*existing, x, radius, h);
          if (!refresh_all) refreshed = true;
        }
        continue;
      }
      if (!(gap < add_below * radius)) continue;
      PendingContact added;
      added.vertex = gv;
      added.contact.collider = c;
      linearise(added.contact, x, radius, h);
      pending.push_back(added);
    }
  }
  return refreshed;
}

// Turns every vertex contact into a velocity constraint, and sliding friction into impulses
// on the right-hand side.
//   b_k = (target_k - n_k . x0) / h       the normal velocity each contact needs
//   stick: v1 = u + w, w the least-norm solution of N^T w = b - N^T u (u the surface velocity):
//          the whole velocity change prescribed, frame = I
//   slide: frame = Q of N's QR (its first rank(N) columns span the normals), the normal
//          components y solve (N^T B) y = b; kinetic friction -B s(w), B = friction_bound, s the
//          unit slip direction of the end-of-step slip w = T (v1 - u) (T the tangent projector).
//
// Sliding friction is implicit in its direction. s(w) = w / |w| is linearised about the last
// pass's slip w_k (s_k = w_k / |w_k|): s(w) ~ s_k + P (w - w_k) / |w_k| with P = T - s_k s_k^T,
// so the friction impulse is
//   f = -B s_k - c P (v1 - u),   c = B / |w_k|      (P w_k = 0)
// c P joins the vertex's diagonal block of J and -B s_k - c P (v - u) the right-hand side. It
// is Newton's method on the slip direction: a lagged direction alone (f = -B s_k) converges
// only while the driving impulse exceeds 2 B and oscillates below that, which is exactly the
// nearly-stuck sliding of a bristle tip. The first pass after a stick -> slide switch has no
// slip to linearise about: it uses c = 0 and s_0 against the static impulse that was too large.
void ContactSolver::build_constraints(const VecX& x0, const VecX& v, double h, const VecX& rhs_free) {
  constraints_.clear();
  rhs_ = rhs_free;
  for (VertexContact& vc : contacts_)
    if (in_pass(vc)) constraints_.push_back(build_constraint(vc, x0, v, h));
}

void ContactSolver::record_pass() {
  const int D = model_.dimension;
  pass_records_.clear();
  std::size_t k = 0;
  for (const VertexContact& vc : contacts_) {
    if (!in_pass(vc)) continue;
    PassRecord& record = pass_records_.emplace_back();
    record.rod = vc.rod;
    record.constraint = constraints_[k++];
    if (vc.state == FrictionState::Slide && vc.direction_stiffness != 0.0) record.friction = vc.friction_matrix;
    record.rhs.head(D) = rhs_.segment(vc.free, D);
  }
  std::sort(pass_records_.begin(), pass_records_.end(), [](const PassRecord& a, const PassRecord& b) {
    return a.rod != b.rod ? a.rod < b.rod : a.constraint.free < b.constraint.free;
  });
}

void ContactSolver::mark_same_rods(const std::vector<char>& rods) {
  same_rods_.assign(rods.begin(), rods.end());
  // Bit for bit: a -0 for a 0 may already change a result's bits.
  const auto same_bits = [](const PassRecord& a, const PassRecord& b) {
    const VelocityConstraint &ca = a.constraint, &cb = b.constraint;
    return ca.free == cb.free && ca.count == cb.count &&
           std::memcmp(ca.frame.data(), cb.frame.data(), sizeof(double) * 9) == 0 &&
           std::memcmp(ca.value.data(), cb.value.data(), sizeof(double) * 3) == 0 &&
           std::memcmp(a.friction.data(), b.friction.data(), sizeof(double) * 9) == 0 &&
           std::memcmp(a.rhs.data(), b.rhs.data(), sizeof(double) * 3) == 0;
  };
  const std::vector<PassRecord>& now = pass_records_;
  const std::vector<PassRecord>& last = last_pass_records_;
  std::size_t i = 0, j = 0;
  while (i < now.size() || j < last.size()) {
    const int rod = std::min(i < now.size() ? now[i].rod : INT_MAX, j < last.size() ? last[j].rod : INT_MAX);
    std::size_t i_end = i, j_end = j;
    while (i_end < now.size() && now[i_end].rod == rod) ++i_end;
    while (j_end < last.size() && last[j_end].rod == rod) ++j_end;
    bool same = i_end - i == j_end - j;
    for (std::size_t k = 0; same && k < i_end - i; ++k) same = same_bits(now[i + k], last[j + k]);
    if (!same) same_rods_[rod] = 0;
    i = i_end;
    j = j_end;
  }
}

VelocityConstraint ContactSolver::build_constraint(VertexContact& vc, const VecX& x0, const VecX& v, double h) {
  const int D = model_.dimension;
  const int gv = model_.layout.global_vertex(vc.rod, vc.vertex);
  const Vec3 x_start = position(x0, gv), v_now = position(v, gv);
  for (ColliderContact& cc : vc.contacts) cc.start_offset = cc.target - cc.normal.dot(x_start);
  const Vec3 u = vc.contacts.front().surface_velocity;

  VelocityConstraint constraint;
  constraint.free = vc.free;
  vc.friction_matrix.setZero();
  if (vc.contacts.size() == 1) {
    // One normal n, the common case in closed form (the general path below computes the same
    // with decompositions of 3 x m matrices). Sticking: the minimum-norm correction c with
    // n.(u + c) = b, c = n (b - n.u) / n.n.
    const Vec3& n = vc.contacts.front().normal;
    const double b = vc.contacts.front().start_offset / h;
    if (vc.state == FrictionState::Stick) {
      const double nn = n.squaredNorm();
      const Vec3 v_target = u + (nn > 0.0 ? Vec3(n * ((b - n.dot(u)) / nn)) : Vec3::Zero());
      constraint.frame = Mat3::Identity();
      constraint.count = D;
      constraint.value.head(D) = (v_target - v_now).head(D);
      return constraint;
    }
    // Sliding: the velocity along n's in-plane part q = n_D / |n_D| is prescribed,
    // q.v = b / (n_D.q) = b / |n_D|; the rest of the frame is free, with friction's matrix
    // on it. An n with no in-plane part prescribes nothing.
    Vec3 n_in_plane = Vec3::Zero();
    n_in_plane.head(D) = n.head(D);
    const double in_plane = n_in_plane.norm();
    Mat3 tangent = Mat3::Zero();
    tangent.topLeftCorner(D, D).setIdentity();
    if (in_plane > 0.0) {
      constraint.frame = frame_from_normal(n_in_plane, D);
      constraint.count = 1;
      const Vec3 q = constraint.frame.col(0);
      constraint.value[0] = b / in_plane - q.dot(v_now);
      tangent -= q * q.transpose();
    } else {
      constraint.frame = Mat3::Identity();
      constraint.count = 0;
    }
    const Vec3 s = vc.slip_direction;
    vc.friction_matrix = vc.direction_stiffness * (tangent - s * s.transpose());
    const Vec3 f0 = -vc.friction_bound * s - vc.friction_matrix * (v_now - u);
    rhs_.segment(vc.free, D) += f0.head(D);
    return constraint;
  }
  const Eigen::MatrixXd N = normals_of(vc);
  Eigen::VectorXd b(N.cols());
  for (int k = 0; k < N.cols(); ++k) b[k] = vc.contacts[k].start_offset / h;
  if (vc.state == FrictionState::Stick) {
    const Eigen::VectorXd correction =
        N.transpose().completeOrthogonalDecomposition().solve(b - N.transpose() * u);
    const Vec3 v_target = u + Vec3(correction);
    constraint.frame = Mat3::Identity();
    constraint.count = D;
    constraint.value.head(D) = (v_target - v_now).head(D);
  } else {
    const Eigen::MatrixXd Nd = N.topRows(D);
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Nd);
    qr.setThreshold(1e-8);
    const int rank = static_cast<int>(qr.rank());
    const Eigen::MatrixXd Q = qr.householderQ();
    const Eigen::MatrixXd B = Q.leftCols(rank);
    // No normal with a component in the scene's plane (rank 0): nothing to prescribe, and
    // Eigen's decompositions do not take a matrix without columns.
    const Eigen::VectorXd y = rank > 0 ? Eigen::VectorXd((Nd.transpose() * B).completeOrthogonalDecomposition().solve(b))
                                       : Eigen::VectorXd(0);
    const Eigen::VectorXd v_local = v_now.head(D);
    const Eigen::VectorXd y_now = B.transpose() * v_local;
    constraint.frame.topLeftCorner(D, D) = Q;
    constraint.count = rank;
    constraint.value.head(rank) = y - y_now;
    // P = T - s s^T on the free (tangential) columns of Q.
    Mat3 tangent = Mat3::Zero();
    for (int j = rank; j < D; ++j) {
      Vec3 q = Vec3::Zero();
      q.head(D) = Q.col(j);
      tangent += q * q.transpose();
    }
    const Vec3 s = vc.slip_direction;
    const Mat3 P = tangent - s * s.transpose();
    vc.friction_matrix = vc.direction_stiffness * P;
    const Vec3 f0 = -vc.friction_bound * s - vc.friction_matrix * (v_now - u);
    rhs_.segment(vc.free, D) += f0.head(D);
  }
  return constraint;
}

// The way out when the active set did not settle within max_iterations, for the rods marked
// (all of them for whole-system passes; rods apart, those still changing): pulling contacts
// whose vertex starts more than a radius clear of the surface are dropped (held, they would
// drag it down), and no vertex may return to sticking (its stick/slide switches are used up).
// ContactSolver::solve then runs a few more passes with every stage at once: pulling
// contacts are released (a vertex added again is held), sticking vertices whose impulse
// leaves the friction cone slide, sliding vertices update their bound and direction, and any
// vertex still predicted to penetrate is added (sticking or sliding as it starts, for good).
// No vertex returns to sticking or is released twice, so these passes do not cycle, and a
// vertex's friction is bounded by the cone, not by a sticking constraint (up to the sliding
// direction's Newton term where that direction has not settled). Until 2026-11-29 every such
// contact stuck instead: hair on a sphere, whose slow tips' friction swings by a fraction of
// a degree from pass to pass, was held with friction up to 200 times mu lambda_n
// (docs/contact.md, "The active set").
void ContactSolver::finish_unsettled(const std::vector<char>& rods) {
  for (VertexContact& vc : contacts_) {
    if (!rods[vc.rod]) continue;
    vc.contacts.erase(std::remove_if(vc.contacts.begin(), vc.contacts.end(),
                                     [&](const ColliderContact& cc) {
                                       return cc.normal_impulse < 0.0 && cc.start_offset < -vc.radius;
                                     }),
                      vc.contacts.end());
    vc.state_changes = std::max(vc.state_changes, settings_.max_state_changes);
  }
  const auto end = std::remove_if(contacts_.begin(), contacts_.end(),
                                  [](const VertexContact& vc) { return vc.contacts.empty(); });
  if (end != contacts_.end()) {
    contacts_.erase(end, contacts_.end());
    rebuild_slots();
  }
}

// The finish's last solves. The finish stops when switches and adds stop, not when sliding
// directions settle, so its last pass left two kinds of friction behind: the direction's
// Newton term -c P w, unbounded where the slip turned (up to 1.2 times mu lambda_n on the
// pivoting rod cut to two passes), and friction -B s against a slip w that turned past its
// lagged direction s (s . w < 0), which pushes along the slip and does positive work (80
// vertices in each finish of hair_on_sphere.json on average; the energy gains seen when the
// finish came sooner). Here every sliding vertex of the finished rods drops its Newton term
// (c = 0: friction exactly -B s, within the cone), and one whose slip runs against s drops
// its friction (B = 0: zero is in the cone and does no work); the caller solves again while
// anything changed, each vertex dropping at most once. Then a sliding vertex's friction is
// -B s with s . w >= 0, or zero: bounded and dissipative (unless kDissipationSolves runs out
// first, a backstop; the rods are those the finish's last pass solved). Measured in
// docs/contact.md, "The active set". Returns whether anything changed; marks those rods in
// rod_changed_.
bool ContactSolver::settle_friction_for_finish(const std::vector<char>& rods) {
  std::fill(rod_changed_.begin(), rod_changed_.end(), 0);
  bool changed = false;
  for (VertexContact& vc : contacts_) {
    if (!rods[vc.rod] || vc.state != FrictionState::Slide) continue;
    const int gv = model_.layout.global_vertex(vc.rod, vc.vertex);
    const Vec3 slip = tangential_part(vc, position(v_trial_, gv) - vc.contacts.front().surface_velocity);
    bool drop = false;
    if (vc.direction_stiffness != 0.0) {
      vc.direction_stiffness = 0.0;
      drop = true;
    }
    if (vc.friction_bound > 0.0 && vc.slip_direction.dot(slip) < 0.0) {
      vc.friction_bound = 0.0;
      drop = true;
    }
    if (!drop) continue;
    rod_changed_[vc.rod] = 1;
    changed = true;
  }
  return changed;
}

// Adds each sliding vertex's friction matrix c P into its diagonal block of J (full D x D
// blocks, consecutive in every column of the block). The caller restores J's values.
void ContactSolver::add_friction_matrices(SparseMatrix& system) const {
  const int D = model_.dimension;
  const int* outer = system.outerIndexPtr();
  const int* inner = system.innerIndexPtr();
  double* values = system.valuePtr();
  for (const VertexContact& vc : contacts_)
    if (in_pass(vc)) add_friction_matrix(vc, D, outer, inner, values);
}

void ContactSolver::add_friction_matrix(const VertexContact& vc, int D, const int* outer, const int* inner,
                                        double* values) {
  if (vc.state != FrictionState::Slide || vc.direction_stiffness == 0.0) return;
  for (int j = 0; j < D; ++j) {
    const int col = vc.free + j;
    for (int k = outer[col]; k < outer[col + 1]; ++k)
      if (inner[k] == vc.free) {
        for (int i = 0; i < D; ++i) values[k + i] += vc.friction_matrix(i, j);
        break;
      }
  }
}

// The impulse each constraint and friction applied: c = J dv - b on the vertex's rows (J
// unfiltered, without the friction matrices), split into normal impulses lambda (N lambda =
// the normal part of c) and the tangential rest, the friction impulse (static while sticking,
// kinetic while sliding).
void ContactSolver::compute_impulses(const SparseMatrix& system, const VecX& dv_free, const VecX& rhs_free) {
  for (VertexContact& vc : contacts_)
    if (in_pass(vc)) compute_impulse(vc, system, dv_free, rhs_free);
}

void ContactSolver::compute_impulse(VertexContact& vc, const SparseMatrix& system, const VecX& dv_free,
                                    const VecX& rhs_free) const {
  const int D = model_.dimension;
  const int* outer = system.outerIndexPtr();
  const int* inner = system.innerIndexPtr();
  const double* values = system.valuePtr();
  Vec3 c = Vec3::Zero();
  for (int j = 0; j < D; ++j) {
    const int col = vc.free + j;  // J symmetric: row = column
    double sum = 0.0;
    for (int k = outer[col]; k < outer[col + 1]; ++k) sum += values[k] * dv_free[inner[k]];
    c[j] = sum - rhs_free[col];
  }
  if (vc.contacts.size() == 1) {
    ColliderContact& cc = vc.contacts.front();
    cc.normal_impulse = along_normal(cc.normal, c);
    vc.friction_impulse = c - cc.normal * cc.normal_impulse;
    return;
  }
  const Eigen::MatrixXd N = normals_of(vc);
  const Eigen::VectorXd lambda = N.completeOrthogonalDecomposition().solve(c);
  for (int k = 0; k < N.cols(); ++k) vc.contacts[k].normal_impulse = lambda[k];
  vc.friction_impulse = c - N * lambda;
}

// The active set is updated in three stages, each only when the one before changed nothing
// in this pass (ContactSolver::solve): release pulling contacts; then friction (stick/slide
// switches, the sliding bound and direction); then add vertices predicted to penetrate. A
// pass whose result is about to be corrected (a pulling constraint still on, a vertex about
// to switch) says nothing reliable about the others: a bound lagged from a pass in which a
// neighbour was still pulling, or a penetration predicted from a slip that friction is about
// to reverse, would mislead the next pass.
//
// Cycling. The constraints are linearised, so the active set can flip back and forth: a
// vertex whose constraint pulls slightly (lambda_n < 0) is released, then penetrates when
// free and is added again; a vertex can alternate between sticking and sliding. These rules
// stop it, each a standard anti-cycling device of active-set methods:
//   - a sticking contact that pulls first tries sliding (normal constrained only, no friction
//     yet) before it is released: stick with lambda_n < 0 often only means that holding the
//     vertex tangentially is what pulls it;
//   - a vertex released and added again within the same solve is held for the rest of it
//     (its pulling impulse is accepted: it penetrates when free, so the truth is a contact
//     with lambda_n near 0, which the linearisation cannot hit exactly);
//   - a vertex that goes from sliding back to sticking and then slides again within one
//     solve takes its slip direction from the proximal trial impulse z = f - m w (f the
//     friction it was given, w its slip, m its mass), s = -z / |z|, and its direction
//     stiffness from the projection onto the disc at z, not from w / |w|: a nearly stuck
//     vertex (near a pivot) has a tiny slip that turns from pass to pass, and B / |w| then
//     gave friction impulses far outside the cone. (This replaced a rail that held the
//     tangent direction across the slip by an unbounded constraint: 60 times mu lambda_n
//     on a pivoting rod at dt = 1/60 s; docs/contact.md, "A rod that pivots");
//   - after max_state_changes stick/slide switches in one solve a vertex may no longer go
//     back to sticking (it may always start sliding, so friction never exceeds the cone).
// A cycled vertex whose proximal trial lies inside the disc would stick; a change in its
// (noise) direction does not count as unsettled.
// And if the set still has not settled after max_iterations solves, finish_unsettled() finishes.

// Stage 1: releases contacts whose constraint would pull (lambda_n < 0), the worst per
// vertex first. Returns whether anything changed.
bool ContactSolver::release_pulling(const std::vector<char>& rods) {
  bool changed = false;
  for (VertexContact& vc : contacts_) {
    if (!rods[vc.rod]) continue;
    int worst = -1;
    for (int k = 0; k < static_cast<int>(vc.contacts.size()); ++k)
      if (vc.contacts[k].normal_impulse < 0.0 &&
          (worst < 0 || vc.contacts[k].normal_impulse < vc.contacts[worst].normal_impulse))
        worst = k;
    if (worst < 0 || vc.held) continue;
    if (vc.state == FrictionState::Stick) {
      const double tangential = vc.friction_impulse.norm();
      vc.state = FrictionState::Slide;
      vc.slip_direction = tangential > 0.0 ? Vec3(-vc.friction_impulse / tangential) : Vec3(Vec3::Zero());
      vc.friction_bound = 0.0;
      vc.direction_stiffness = 0.0;
      vc.secant_bound = -1.0;
      ++vc.state_changes;
    } else {
      vc.contacts.erase(vc.contacts.begin() + worst);
      ++released_[model_.layout.global_vertex(vc.rod, vc.vertex)];
    }
    rod_changed_[vc.rod] = 1;
    changed = true;
  }
  // Drop vertices left without contacts.
  const auto end = std::remove_if(contacts_.begin(), contacts_.end(),
                                  [](const VertexContact& vc) { return vc.contacts.empty(); });
  if (end != contacts_.end()) {
    contacts_.erase(end, contacts_.end());
    rebuild_slots();
  }
  return changed;
}

// Stage 2: friction. Switches between sticking and sliding (`switched`), and iterates each
// sliding vertex's bound mu lambda_n and slip direction to a fixed point (`updated`).
ContactSolver::FrictionChange ContactSolver::update_friction(const VecX& v_trial, const std::vector<char>& rods) {
  // Per rod, each on one thread: a vertex's update reads and writes its own contact only.
  index_contacts_by_rod();
  const int rod_count = static_cast<int>(rods.size());
  std::vector<FrictionChange> changes(rod_count);
  const bool parallel = threads_ > 1 && marked_dofs(rods) >= kParallelRodDofs;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_) if (parallel)
  for (int r = 0; r < rod_count; ++r) {
    if (!rods[r]) continue;
    for (int k = rod_contact_offsets_[r]; k < rod_contact_offsets_[r + 1]; ++k)
      update_friction_of(contacts_[rod_contact_list_[k]], v_trial, changes[r]);
  }
  FrictionChange change;
  for (const FrictionChange& c : changes) {
    change.switched = change.switched || c.switched;
    change.updated = change.updated || c.updated;
  }
  return change;
}

int ContactSolver::marked_dofs(const std::vector<char>& rods) const {
  int dofs = 0;
  for (int r = 0; r < static_cast<int>(rods.size()); ++r)
    if (rods[r]) {
      const auto [begin, end] = model_.layout.rod_dof_range(r);
      dofs += end - begin;
    }
  return dofs;
}

void ContactSolver::index_contacts_by_rod() {
  const int rod_count = model_.layout.rod_count();
  rod_contact_offsets_.assign(rod_count + 1, 0);
  for (const VertexContact& vc : contacts_) ++rod_contact_offsets_[vc.rod + 1];
  for (int r = 0; r < rod_count; ++r) rod_contact_offsets_[r + 1] += rod_contact_offsets_[r];
  rod_contact_list_.resize(contacts_.size());
  std::vector<int> next(rod_contact_offsets_.begin(), rod_contact_offsets_.end() - 1);
  for (int k = 0; k < static_cast<int>(contacts_.size()); ++k) rod_contact_list_[next[contacts_[k].rod]++] = k;
}

void ContactSolver::update_friction_of(VertexContact& vc, const VecX& v_trial, FrictionChange& change) {
  const double tol = settings_.friction_tolerance;
  const int gv = model_.layout.global_vertex(vc.rod, vc.vertex);
  double bound = coulomb_bound(vc);
  const Vec3 slip = tangential_part(vc, position(v_trial, gv) - vc.contacts.front().surface_velocity);

  if (vc.state == FrictionState::Stick) {
    const double tangential = vc.friction_impulse.norm();
    if (tangential > bound * (1.0 + 1e-9) && tangential > 0.0) {
      // Outside the friction cone: slide the way the other forces push.
      vc.state = FrictionState::Slide;
      vc.slip_direction = -vc.friction_impulse / tangential;
      vc.friction_bound = bound;
      vc.direction_stiffness = 0.0;  // no slip measured yet: the first pass lags the direction
      vc.secant_bound = -1.0;
      ++vc.state_changes;
      rod_switched_[vc.rod] = rod_changed_[vc.rod] = 1;
      change.switched = true;
    }
    return;
  }
  // Sticking is limited, sliding never: a vertex whose friction cannot settle ends up
  // sliding, with its friction bounded by the cone, never stuck beyond it.
  const bool may_stick = vc.state_changes < settings_.max_state_changes;
  // The friction impulse this pass applied, as the formulation defines it (build_constraints):
  // f = -B s - c P (v1 - u). The measured impulse (compute_impulses) is the same to the linear
  // solve's residual.
  const Vec3 applied = -vc.friction_bound * vc.slip_direction - vc.friction_matrix * slip;
  // The proximal (Alart-Curnier) trial impulse z = f - rho w: the friction that would also
  // stop this vertex's slip w, rho its mass (an impulse per velocity). Coulomb's law is the
  // fixed point f = proj(z) onto the disc |f| <= mu lambda_n, whatever rho > 0: inside the
  // disc the vertex sticks, outside it slides against z, s = -z / |z|. Unlike w / |w|, z
  // stays well defined as the slip vanishes (near a pivot the slip is tiny and turns from
  // one pass to the next; z then keeps the direction of the friction the vertex needed).
  // (Tangential to round-off: a slip that vanished leaves only round-off, in any direction.)
  const Vec3 trial = tangential_part(vc, applied - vertex_mass_[gv] * slip);
  const double trial_norm = trial.norm();
  const double along = slip.dot(vc.slip_direction);
  if (vc.friction_bound > 0.0 && !(along > 0.0) && may_stick) {
    // Friction would reverse the slip within the step: the vertex sticks instead.
    vc.state = FrictionState::Stick;
    vc.cycled = true;
    ++vc.state_changes;
    rod_switched_[vc.rod] = rod_changed_[vc.rod] = 1;
    change.switched = true;
    return;
  }
  // The bound B = mu lambda_n(B) is a fixed point; lambda_n is affine in B while the rest
  // holds still (the solve is linear), so a secant step through the last two passes finds
  // it at once where plain iteration oscillates (d(mu lambda_n)/dB is often near -1: the
  // friction that slows a tip also unloads it).
  const double target = bound;
  if (vc.secant_bound >= 0.0 && vc.friction_bound != vc.secant_bound) {
    const double slope = (target - vc.secant_value) / (vc.friction_bound - vc.secant_bound);
    if (slope < 0.5) bound = std::max(0.0, (target - slope * vc.friction_bound) / (1.0 - slope));
  }
  vc.secant_bound = vc.friction_bound;
  vc.secant_value = target;
  const double speed = slip.norm();
  const Vec3 direction = vc.cycled ? (trial_norm > 0.0 ? Vec3(-trial / trial_norm) : vc.slip_direction)
                                   : (speed > 0.0 ? Vec3(slip / speed) : vc.slip_direction);
  const bool bound_moved = std::abs(target - vc.friction_bound) > tol * std::max(target, vc.friction_bound);
  // A proximal vertex whose trial lies inside the disc (to the tolerance) would stick: its
  // stiffness c is at its cap and holds it, and the direction of a trial that small is noise.
  const bool trial_inside = vc.cycled && trial_norm <= (1.0 + tol) * vc.friction_bound;
  const bool direction_moved = !trial_inside && (direction - vc.slip_direction).norm() > tol;
  // No extra pass holds the applied friction to the cone beyond the bound's own tolerance:
  // at 1e-10 it cost brush_stroke 1719 active-set solves instead of 1373 and hair_on_sphere
  // 29339 instead of 15077, while the friction stays within 5e-7 of mu lambda_n on a
  // pivoting rod without it (docs/contact.md, "A rod that pivots").
  if (bound_moved || (direction_moved && std::max(bound, vc.friction_bound) > 0.0)) {
    vc.friction_bound = bound;
    vc.slip_direction = direction;
    rod_changed_[vc.rod] = 1;
    change.updated = true;
  }
  // Newton on the direction. Sliding consistently, c = B / |w|, the derivative of B w / |w|.
  // A vertex that cycled slides with the proximal direction -z / |z| and the derivative of
  // the projection onto the disc at z, (B / |z|) (I - z z^T / |z|^2), acting on f - rho w:
  // c = rho B / (|z| - B), which equals B / |w| while f = -B s and w = |w| s, and stays
  // bounded by the trial's distance outside the disc where B / |w| blows up (a vanishing slip).
  const double cap = kMaxDirectionStiffness * vertex_mass_[gv];
  if (vc.cycled) {
    const double excess = trial_norm - vc.friction_bound;
    vc.direction_stiffness =
        vertex_mass_[gv] * vc.friction_bound < cap * excess ? vertex_mass_[gv] * vc.friction_bound / excess : cap;
  } else {
    vc.direction_stiffness = vc.friction_bound < cap * speed ? vc.friction_bound / speed : cap;
  }
}


bool ContactSolver::solve(SparseMatrix& system, const VecX& rhs_free, const VecX& x0, const VecX& v,
                          double h, const VecX& guess, const LinearSolve& linear_solve, VecX& dv_free,
                          const RodSolve& rod_solve, const std::vector<char>* active_rods) {
  const int D = model_.dimension;
  const int n_free = static_cast<int>(rhs_free.size());
  const DofLayout& layout = model_.layout;
  const int rod_count = layout.rod_count();
  // The values are saved as passes first change them: a rod's columns by the thread that
  // filters them (rods apart), the filter's columns before a whole-system pass.
  saved_values_.resize(system.nonZeros());
  rod_values_saved_.assign(rod_count, 0);
  if (dv_free.size() != n_free) dv_free.setZero(n_free);

  // Anti-cycling counters are per solve (per Newton iteration).
  std::fill(released_.begin(), released_.end(), 0);
  for (VertexContact& vc : contacts_) {
    vc.held = false;
    vc.cycled = false;
    vc.state_changes = 0;
  }
  finishing_ = false;
  last_whole_pass_solved_ = false;
  // Only the active rods take part (the others' contacts, states and impulses stay as they
  // are, their rows of the system out of the solve); all without a list.
  pass_rods_ = active_rods;
  const std::vector<char>& all_rods = active_rods != nullptr ? *active_rods : all_rods_;
  int pass_rod_count = 0;
  for (const char a : all_rods) pass_rod_count += a != 0;
  xp_ = x0 + h * v;
  add_or_refresh(xp_, h, settings_.activation_gap, /*refresh_all=*/true, all_rods);

  // Rods that do not couple settle their active sets each on its own: a pass solves the rods
  // whose constraints the pass before changed, and a rod whose stages change nothing keeps its
  // solution (its rows, constraints and right-hand side are as they were). Otherwise every
  // pass solves the whole system, and a stage that changes anything holds back the next stage
  // everywhere (see release_pulling).
  bool per_rod = static_cast<bool>(rod_solve);
  rod_active_ = all_rods;
  if (per_rod) y_.setZero(n_free);
  const int* outer = system.outerIndexPtr();

  // One pass: constraints from the current active set, the filtered solve, the impulses.
  auto solve_rods = [&]() {
    active_rods_.clear();
    for (int r = 0; r < rod_count; ++r)
      if (rod_active_[r]) active_rods_.push_back(r);
    const int count = static_cast<int>(active_rods_.size());
    index_contacts_by_rod();
    rod_constraints_.resize(rod_count);
    thread_filter_scratch_.resize(threads_);
    if (rhs_.size() != n_free) rhs_.setZero(n_free);
    double* values = system.valuePtr();
    const bool parallel = threads_ > 1 && count > 1 && marked_dofs(rod_active_) >= kParallelRodDofs;
    // Each active rod on one thread: its constraints, its rows of the right-hand side, its
    // friction matrices and the filter of its columns (no entry couples two rods).
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads_) if (parallel)
    for (int k = 0; k < count; ++k) {
      const int r = active_rods_[k];
      const auto [begin, end] = layout.rod_free_range(r);
      save_rod_values(system, r);
      rhs_.segment(begin, end - begin) = rhs_free.segment(begin, end - begin);
      std::vector<VelocityConstraint>& constraints = rod_constraints_[r];
      constraints.clear();
      for (int c = rod_contact_offsets_[r]; c < rod_contact_offsets_[r + 1]; ++c) {
        VertexContact& vc = contacts_[rod_contact_list_[c]];
        constraints.push_back(build_constraint(vc, x0, v, h));
        add_friction_matrix(vc, D, outer, system.innerIndexPtr(), values);
      }
#ifdef _OPENMP
      std::vector<int>& scratch = thread_filter_scratch_[omp_get_thread_num()];
#else
      std::vector<int>& scratch = thread_filter_scratch_[0];
#endif
      filter_system(system, rhs_, constraints, D, &scratch);
    }
    const bool solved = rod_solve(system, rhs_, active_rods_, y_);
    if (!solved) {
      // Only the active rods' columns were filtered (all saved above).
      for (const int r : active_rods_) {
        const auto [begin, end] = layout.rod_free_range(r);
        std::copy(saved_values_.data() + outer[begin], saved_values_.data() + outer[end], values + outer[begin]);
      }
      return false;
    }
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads_) if (parallel)
    for (int k = 0; k < count; ++k) {
      const int r = active_rods_[k];
      const auto [begin, end] = layout.rod_free_range(r);
      // The filter touched this rod's columns only.
      std::copy(saved_values_.data() + outer[begin], saved_values_.data() + outer[end], values + outer[begin]);
      unfilter_solution(y_, rod_constraints_[r], D);
      dv_free.segment(begin, end - begin) = y_.segment(begin, end - begin);
      const auto [first_dof, end_dof] = layout.rod_dof_range(r);
      for (int dof = first_dof; dof < end_dof; ++dof) {
        const int f = layout.free_index(dof);
        v_trial_[dof] = f >= 0 ? v[dof] + dv_free[f] : v[dof];
      }
      for (int c = rod_contact_offsets_[r]; c < rod_contact_offsets_[r + 1]; ++c)
        compute_impulse(contacts_[rod_contact_list_[c]], system, dv_free, rhs_free);
    }
    rod_solves_ += count;
    return true;
  };
  int passes_solved = 0;  // passes that wrote dv_free
  auto solve_pass = [&]() {
    ++solves_;
    if (per_rod) {
      if (v_trial_.size() != v.size()) v_trial_ = v;
      if (solve_rods()) {
        ++passes_solved;
        return true;
      }
      // A block that cannot be solved on its own: whole-system passes from here on.
      per_rod = false;
      rod_active_ = all_rods;
    }
    rod_solves_ += pass_rod_count;
    build_constraints(x0, v, h, rhs_free);
    // The rods whose constraints this pass left as they were (most rods of a pressed brush
    // touch no collider, and a pass changes a few of the rest): the linear solve may keep
    // their solution where nothing couples them (the 1000-bristle brush: three quarters of
    // its rods' solves were in passes after a Newton iteration's first).
    record_pass();
    const std::vector<char>* same_rods = nullptr;
    if (last_whole_pass_solved_) {
      mark_same_rods(all_rods);
      same_rods = &same_rods_;
    }
    last_whole_pass_solved_ = false;
    // CG starts from the pass before's solution (the caller's guess on the first pass): a
    // pass changes a few contacts of many, so most of the solution stands. Started from zero,
    // every pass of a pressed brush with rod contact paid for the whole solve again.
    const VecX& start = passes_solved > 0 ? dv_free : guess;
    bool solved;
    // y_ keeps the filtered system's solution for the next pass (same_rods).
    if (constraints_.empty()) {
      pass_guess_ = start;
      solved = linear_solve(system, rhs_, pass_guess_, y_, same_rods);
      if (solved) dv_free = y_;
    } else {
      // The values this pass changes, saved first: the filter's columns (filtered_columns),
      // which hold the friction matrices' (each on a constrained vertex's diagonal block).
      // (Saving every value, 14 MB on the tilted 1000-bristle brush, was 2% of its run.)
      filtered_columns(system, constraints_, D, changed_columns_);
      const double* pristine = system.valuePtr();
      for (const int col : changed_columns_)
        std::copy(pristine + outer[col], pristine + outer[col + 1], saved_values_.data() + outer[col]);
      add_friction_matrices(system);
      filter_system(system, rhs_, constraints_, D, &filter_scratch_, &changed_columns_, /*columns_given=*/true);
      filter_guess(start, constraints_, D, pass_guess_);
      solved = linear_solve(system, rhs_, pass_guess_, y_, same_rods);
      // The values as saved: the friction matrices changed the contacts' columns, the filter
      // changed_columns_, nothing else (a copy of every value here was an eighth of a pass on
      // a pressed brush, on one thread).
      double* values = system.valuePtr();
      auto restore_column = [&](int col) {
        std::copy(saved_values_.data() + outer[col], saved_values_.data() + outer[col + 1], values + outer[col]);
      };
      for (const VertexContact& vc : contacts_)
        if (in_pass(vc))
          for (int j = 0; j < D; ++j) restore_column(vc.free + j);
      for (const int col : changed_columns_) restore_column(col);
      if (solved) {
        dv_free = y_;
        unfilter_solution(dv_free, constraints_, D);
      }
    }
    if (!solved) return false;
    last_whole_pass_solved_ = true;
    std::swap(pass_records_, last_pass_records_);
    ++passes_solved;
    // Every DOF each pass (the 1000-bristle brush: 63,000 at each of 3407 passes, 1.3% of its
    // run on two threads while serial; each entry its own, so the same for any count).
    const int dof_count = layout.dof_count();
    v_trial_.resize(dof_count);
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1 && dof_count >= kParallelDofs)
    for (int dof = 0; dof < dof_count; ++dof) {
      const int f = layout.free_index(dof);
      v_trial_[dof] = f >= 0 ? v[dof] + dv_free[f] : v[dof];
    }
    compute_impulses(system, dv_free, rhs_free);
    return true;
  };
  // Marks in rod_stage_ the rods of `eligible` a stage may act on: per rod, those the last
  // stage did not change (`marks`); for the whole system, all or none.
  auto next_stage = [&](const std::vector<char>& eligible, const std::vector<char>& marks) {
    const bool any = std::find(marks.begin(), marks.end(), 1) != marks.end();
    for (int r = 0; r < rod_count; ++r) rod_stage_[r] = eligible[r] && !(per_rod ? marks[r] : any);
    return std::find(rod_stage_.begin(), rod_stage_.end(), 1) != rod_stage_.end();
  };
  auto any_changed = [&] { return std::find(rod_changed_.begin(), rod_changed_.end(), 1) != rod_changed_.end(); };

  bool ok = true;
  for (int pass = 0;; ++pass) {
    ok = solve_pass();
    if (!ok) break;
    // Stages: release, then friction, then new contacts (see release_pulling).
    const std::vector<char> eligible = per_rod ? rod_active_ : all_rods;
    std::fill(rod_changed_.begin(), rod_changed_.end(), 0);
    std::fill(rod_switched_.begin(), rod_switched_.end(), 0);
    release_pulling(eligible);
    if (next_stage(eligible, rod_changed_)) {
      update_friction(v_trial_, rod_stage_);
      const std::vector<char> friction_eligible = rod_stage_;
      if (next_stage(friction_eligible, rod_switched_)) {
        predict_positions(x0, h, rod_stage_);
        add_or_refresh(xp_, h, -settings_.penetration_tolerance, /*refresh_all=*/false, rod_stage_);
      }
    }
    if (!any_changed()) break;
    if (per_rod) rod_active_ = rod_changed_;
    if (pass + 1 >= settings_.max_iterations) {
      // Unsettled: finish on the rods still changing (all, for whole-system passes) with
      // passes that cannot cycle (finish_unsettled).
      converged_ = false;
      const std::vector<char> unsettled = per_rod ? rod_active_ : all_rods;
      finish_unsettled(unsettled);
      finishing_ = true;
      auto contact_count = [&] {
        std::size_t count = 0;
        for (const VertexContact& vc : contacts_) count += vc.contacts.size();
        return count;
      };
      for (int extra = 0;; ++extra) {
        const bool was_per_rod = per_rod;
        ok = solve_pass();
        if (!ok) break;
        // Fallen back to whole-system passes: every rod is in them now, so every rod finishes.
        if (was_per_rod && !per_rod) finish_unsettled(all_rods);
        std::fill(rod_changed_.begin(), rod_changed_.end(), 0);
        std::fill(rod_switched_.begin(), rod_switched_.end(), 0);
        const std::vector<char> eligible_now = per_rod ? rod_active_ : all_rods;
        release_pulling(eligible_now);
        update_friction(v_trial_, eligible_now);
        predict_positions(x0, h, eligible_now);
        const std::size_t before_add = contact_count();
        add_or_refresh(xp_, h, -settings_.penetration_tolerance, /*refresh_all=*/false, eligible_now);
        if (!any_changed()) break;
        // A vertex that switches from sticking outside the cone to sliding, or is added, goes
        // on to one more pass however many the finish took: each does so a bounded number of
        // times (a released vertex added again is held; a contact made in the finish switches
        // once at most). The cap is a backstop.
        const bool switched = std::find(rod_switched_.begin(), rod_switched_.end(), 1) != rod_switched_.end();
        const bool added = contact_count() > before_add;
        if (extra + 1 >= kFinishSolves && !switched && !added) break;
        if (extra + 1 >= kFinishSolves + settings_.max_iterations) break;
        if (per_rod) rod_active_ = rod_changed_;
      }
      finishing_ = false;
      const std::vector<char> finished = per_rod ? rod_active_ : all_rods;
      for (int extra = 0; ok && extra < kDissipationSolves; ++extra) {
        if (!settle_friction_for_finish(finished)) break;
        if (per_rod) rod_active_ = rod_changed_;
        ok = solve_pass();
      }
      break;
    }
  }
  pass_rods_ = nullptr;
  return ok;
}

void ContactSolver::save_rod_values(const SparseMatrix& system, int rod) {
  if (rod_values_saved_[rod]) return;
  const auto [begin, end] = model_.layout.rod_free_range(rod);
  const int* outer = system.outerIndexPtr();
  std::copy(system.valuePtr() + outer[begin], system.valuePtr() + outer[end], saved_values_.data() + outer[begin]);
  rod_values_saved_[rod] = 1;
}

void ContactSolver::predict_positions(const VecX& x0, double h, const std::vector<char>& rods) {
  if (xp_.size() != x0.size()) xp_.setZero(x0.size());
  for (int r = 0; r < static_cast<int>(rods.size()); ++r)
    if (rods[r]) {
      const auto [begin, end] = model_.layout.rod_dof_range(r);
      xp_.segment(begin, end - begin) = x0.segment(begin, end - begin) + h * v_trial_.segment(begin, end - begin);
    }
}

// The Coulomb bound on a vertex's friction impulse: the sum of mu lambda_n over its contacts,
// at least zero. A held contact may pull a little (release_pulling); its negative lambda_n
// lowers the bound rather than being ignored, since the net normal impulse is what presses.
// The friction update and the report both use it, so the reported excess is measured against
// the bound the solver enforced.
double ContactSolver::coulomb_bound(const VertexContact& vc) const {
  double bound = 0.0;
  for (const ColliderContact& cc : vc.contacts) bound += colliders_[cc.collider].friction * cc.normal_impulse;
  return std::max(bound, 0.0);
}

void ContactSolver::report(const VecX& x1, double h, ContactReport& out) const {
  out.colliders.assign(colliders_.size(), ColliderContactStats{});
  out.solves = solves_;
  out.rod_solves = rod_solves_;
  out.converged = converged_;
  out.max_penetration = 0.0;
  out.max_penetration_fraction = 0.0;
  out.max_friction_ratio = 0.0;
  out.max_friction_excess = 0.0;
  for (const VertexContact& vc : contacts_) {
    const double bound = coulomb_bound(vc);
    double pressing = 0.0;
    for (const ColliderContact& cc : vc.contacts)
      pressing += colliders_[cc.collider].friction * std::max(cc.normal_impulse, 0.0);
    double mu = 0.0;
    for (const ColliderContact& cc : vc.contacts) mu = std::max(mu, colliders_[cc.collider].friction);
    const double friction = vc.friction_impulse.norm();
    out.max_friction_excess = std::max(out.max_friction_excess, (friction - bound) / h);
    if (mu > 0.0 && friction > 0.0)
      out.max_friction_ratio = std::max(
          out.max_friction_ratio, bound > 0.0 ? friction / bound : std::numeric_limits<double>::infinity());
    for (const ColliderContact& cc : vc.contacts) {
      // The vertex's friction impulse is shared in proportion to each contact's bound.
      const double share = pressing > 0.0
                               ? colliders_[cc.collider].friction * std::max(cc.normal_impulse, 0.0) / pressing
                               : 1.0 / static_cast<double>(vc.contacts.size());
      ColliderContactStats& s = out.colliders[cc.collider];
      ++s.contacts;
      if (vc.state == FrictionState::Stick) ++s.sticking;
      s.normal_force += std::abs(cc.normal_impulse) / h;
      s.friction_force += share * vc.friction_impulse.norm() / h;
      s.force += (cc.normal_impulse * cc.normal + share * vc.friction_impulse) / h;
    }
  }
  for_each_vertex_depth(x1, [&](int gv, double depth) {
    out.max_penetration = std::max(out.max_penetration, depth);
    out.max_penetration_fraction = std::max(out.max_penetration_fraction, depth / vertex_radius_[gv]);
  });
}

void ContactSolver::max_penetration_fraction_by_rod(const VecX& x, std::vector<double>& per_rod) const {
  per_rod.assign(model_.layout.rod_count(), -std::numeric_limits<double>::infinity());
  for_each_vertex_depth(x, [&](int gv, double depth) {
    double& deepest = per_rod[model_.layout.vertex_rod(gv)];
    deepest = std::max(deepest, depth / vertex_radius_[gv]);
  });
}

double ContactSolver::max_penetration_fraction(const VecX& x) const {
  double deepest = -std::numeric_limits<double>::infinity();
  for_each_vertex_depth(x, [&](int gv, double depth) { deepest = std::max(deepest, depth / vertex_radius_[gv]); });
  return deepest;
}

}  // namespace bristle
