#include "bristle/contact/contact_solver.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include <Eigen/QR>

#include "bristle/contact/signed_distance.hpp"

namespace bristle {
namespace {

/// The vertex's contact normals as the columns of a 3 x m matrix.
Eigen::MatrixXd normals_of(const VertexContact& vc) {
  Eigen::MatrixXd n(3, static_cast<int>(vc.contacts.size()));
  for (int k = 0; k < n.cols(); ++k) n.col(k) = vc.contacts[k].normal;
  return n;
}

/// The component of `vector` orthogonal to the span of the columns of `normals`.
Vec3 tangential_part(const Eigen::MatrixXd& normals, const Vec3& vector) {
  const Eigen::VectorXd coefficients = normals.completeOrthogonalDecomposition().solve(vector);
  return vector - normals * coefficients;
}

}  // namespace

ContactSolver::ContactSolver(const Model& model, ContactSettings settings)
    : model_(model), settings_(settings) {
  const DofLayout& layout = model.layout;
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r)
    for (int i = 0; i < model.rods[r].vertex_count(); ++i) {
      vertex_rod_.push_back(r);
      vertex_index_.push_back(i);
      const int dof = layout.vertex_dof(r, i);
      vertex_dof_.push_back(dof);
      vertex_free_.push_back(layout.free_index(dof));
      vertex_radius_.push_back(model.rods[r].material.radius);
    }
  slot_.assign(vertex_rod_.size(), -1);
}

Vec3 ContactSolver::position(const VecX& x, int global_vertex) const {
  Vec3 p = Vec3::Zero();
  p.head(model_.dimension) = x.segment(vertex_dof_[global_vertex], model_.dimension);
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
  contacts_.clear();
  rebuild_slots();
  solves_ = 0;
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
bool ContactSolver::add_or_refresh(const VecX& xp, double h, double add_below, bool refresh_all) {
  bool changed = false;
  const int vertex_count = static_cast<int>(vertex_rod_.size());
  for (int gv = 0; gv < vertex_count; ++gv) {
    if (vertex_free_[gv] < 0) continue;  // prescribed: contact cannot act on it
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
          if (!refresh_all) changed = true;
        }
        continue;
      }
      if (!(gap < add_below * radius)) continue;
      if (slot_[gv] < 0) {
        VertexContact vc;
        vc.rod = vertex_rod_[gv];
        vc.vertex = vertex_index_[gv];
        vc.dof = vertex_dof_[gv];
        vc.free = vertex_free_[gv];
        vc.radius = radius;
        vc.state = colliders_[c].friction > 0.0 ? FrictionState::Stick : FrictionState::Slide;
        slot_[gv] = static_cast<int>(contacts_.size());
        contacts_.push_back(vc);
      }
      ColliderContact cc;
      cc.collider = c;
      linearise(cc, x, radius, h);
      contacts_[slot_[gv]].contacts.push_back(cc);
      changed = true;
    }
  }
  return changed;
}

// Turns every vertex contact into a velocity constraint, and sliding friction into impulses
// on the right-hand side.
//   b_k = (target_k - n_k . x0) / h       the normal velocity each contact needs
//   stick: v1 = u + w, w the least-norm solution of N^T w = b - N^T u (u the surface velocity):
//          the whole velocity change prescribed, frame = I
//   slide: frame = Q of N's QR (its first rank(N) columns span the normals), the normal
//          components y solve (N^T B) y = b; friction impulse -bound * slip_direction.
void ContactSolver::build_constraints(const VecX& x0, const VecX& v, double h, const VecX& rhs_free) {
  const int D = model_.dimension;
  constraints_.clear();
  rhs_ = rhs_free;
  for (VertexContact& vc : contacts_) {
    const Eigen::MatrixXd N = normals_of(vc);
    Eigen::VectorXd b(N.cols());
    const int gv = model_.layout.global_vertex(vc.rod, vc.vertex);
    const Vec3 x_start = position(x0, gv), v_now = position(v, gv);
    for (int k = 0; k < N.cols(); ++k)
      b[k] = (vc.contacts[k].target - vc.contacts[k].normal.dot(x_start)) / h;
    const Vec3 u = vc.contacts.front().surface_velocity;

    VelocityConstraint constraint;
    constraint.free = vc.free;
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
      const Eigen::VectorXd y = (Nd.transpose() * B).completeOrthogonalDecomposition().solve(b);
      const Eigen::VectorXd v_local = v_now.head(D);
      const Eigen::VectorXd y_now = B.transpose() * v_local;
      constraint.frame.topLeftCorner(D, D) = Q;
      constraint.count = rank;
      constraint.value.head(rank) = y - y_now;
      vc.friction_impulse = -vc.friction_bound * vc.slip_direction;
      rhs_.segment(vc.free, D) += vc.friction_impulse.head(D);
    }
    constraints_.push_back(constraint);
  }
}

// The impulse each constraint applied: c = J dv - b - f_friction on the vertex's rows (J
// unfiltered), split into normal impulses lambda (N lambda = the normal part of c) and, for a
// sticking vertex, the tangential rest, its static friction impulse.
void ContactSolver::compute_impulses(const SparseMatrix& system, const VecX& dv_free, const VecX& rhs_free) {
  const int D = model_.dimension;
  const int* outer = system.outerIndexPtr();
  const int* inner = system.innerIndexPtr();
  const double* values = system.valuePtr();
  for (VertexContact& vc : contacts_) {
    Vec3 c = Vec3::Zero();
    for (int j = 0; j < D; ++j) {
      const int col = vc.free + j;  // J symmetric: row = column
      double sum = 0.0;
      for (int k = outer[col]; k < outer[col + 1]; ++k) sum += values[k] * dv_free[inner[k]];
      c[j] = sum - rhs_free[col];
    }
    if (vc.state == FrictionState::Slide) c -= vc.friction_impulse;
    const Eigen::MatrixXd N = normals_of(vc);
    const Eigen::VectorXd lambda = N.completeOrthogonalDecomposition().solve(c);
    for (int k = 0; k < N.cols(); ++k) vc.contacts[k].normal_impulse = lambda[k];
    if (vc.state == FrictionState::Stick) vc.friction_impulse = c - N * lambda;
  }
}

// Releases pulling contacts and moves vertices between sticking and sliding. Returns whether
// anything changed.
bool ContactSolver::update_friction_and_release(const VecX& v_trial) {
  bool changed = false;
  const double tol = settings_.friction_tolerance;
  for (VertexContact& vc : contacts_) {
    // A constraint that would pull (lambda_n < 0) is released, the worst one first.
    int worst = -1;
    for (int k = 0; k < static_cast<int>(vc.contacts.size()); ++k)
      if (vc.contacts[k].normal_impulse < 0.0 &&
          (worst < 0 || vc.contacts[k].normal_impulse < vc.contacts[worst].normal_impulse))
        worst = k;
    if (worst >= 0) {
      vc.contacts.erase(vc.contacts.begin() + worst);
      changed = true;
      continue;
    }
    double bound = 0.0;
    for (const ColliderContact& cc : vc.contacts) bound += colliders_[cc.collider].friction * cc.normal_impulse;
    const Eigen::MatrixXd N = normals_of(vc);
    const int gv = model_.layout.global_vertex(vc.rod, vc.vertex);
    const Vec3 slip = tangential_part(N, position(v_trial, gv) - vc.contacts.front().surface_velocity);

    if (vc.state == FrictionState::Stick) {
      const double tangential = vc.friction_impulse.norm();
      if (tangential > bound * (1.0 + 1e-9) && tangential > 0.0) {
        // Outside the friction cone: slide the way the other forces push.
        vc.state = FrictionState::Slide;
        vc.slip_direction = -vc.friction_impulse / tangential;
        vc.friction_bound = bound;
        changed = true;
      }
      continue;
    }
    const double along = slip.dot(vc.slip_direction);
    if (vc.friction_bound > 0.0 && !(along > 0.0)) {
      // Friction would reverse the slip within the step: the vertex sticks instead.
      vc.state = FrictionState::Stick;
      changed = true;
      continue;
    }
    const double speed = slip.norm();
    const Vec3 direction = speed > 0.0 ? Vec3(slip / speed) : vc.slip_direction;
    const bool bound_moved = std::abs(bound - vc.friction_bound) > tol * std::max(bound, vc.friction_bound);
    const bool direction_moved = (direction - vc.slip_direction).norm() > tol;
    if (bound_moved || (direction_moved && std::max(bound, vc.friction_bound) > 0.0)) {
      vc.friction_bound = bound;
      vc.slip_direction = direction;
      changed = true;
    }
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

bool ContactSolver::solve(SparseMatrix& system, const VecX& rhs_free, const VecX& x0, const VecX& v,
                          double h, const VecX& guess, const LinearSolve& linear_solve, VecX& dv_free) {
  const int D = model_.dimension;
  const int n_free = static_cast<int>(rhs_free.size());
  const DofLayout& layout = model_.layout;
  saved_values_ = Eigen::Map<const VecX>(system.valuePtr(), system.nonZeros());
  zero_.setZero(n_free);

  xp_ = x0 + h * v;
  add_or_refresh(xp_, h, settings_.activation_gap, /*refresh_all=*/true);

  bool ok = true;
  for (int pass = 0;; ++pass) {
    ++solves_;
    build_constraints(x0, v, h, rhs_free);
    if (constraints_.empty()) {
      ok = linear_solve(system, rhs_, guess, dv_free);
    } else {
      filter_system(system, rhs_, constraints_, D);
      ok = linear_solve(system, rhs_, zero_, y_);
      Eigen::Map<VecX>(system.valuePtr(), system.nonZeros()) = saved_values_;
      if (ok) {
        unfilter_solution(y_, constraints_, D);
        dv_free = y_;
      }
    }
    if (!ok) break;

    v_trial_ = v;
    for (int dof = 0; dof < layout.dof_count(); ++dof) {
      const int f = layout.free_index(dof);
      if (f >= 0) v_trial_[dof] += dv_free[f];
    }
    compute_impulses(system, dv_free, rhs_free);
    bool changed = update_friction_and_release(v_trial_);
    xp_ = x0 + h * v_trial_;
    changed = add_or_refresh(xp_, h, -settings_.penetration_tolerance, /*refresh_all=*/false) || changed;
    if (!changed) break;
    if (pass + 1 >= settings_.max_iterations) {
      converged_ = false;
      break;
    }
  }
  return ok;
}

void ContactSolver::report(const VecX& x1, double h, ContactReport& out) const {
  out.colliders.assign(colliders_.size(), ColliderContactStats{});
  out.solves = solves_;
  out.converged = converged_;
  out.max_penetration = 0.0;
  for (const VertexContact& vc : contacts_) {
    double bound = 0.0;
    for (const ColliderContact& cc : vc.contacts) bound += colliders_[cc.collider].friction * cc.normal_impulse;
    for (const ColliderContact& cc : vc.contacts) {
      // The vertex's friction impulse is shared in proportion to each contact's bound.
      const double share = bound > 0.0 ? colliders_[cc.collider].friction * cc.normal_impulse / bound
                                       : 1.0 / static_cast<double>(vc.contacts.size());
      ColliderContactStats& s = out.colliders[cc.collider];
      ++s.contacts;
      if (vc.state == FrictionState::Stick) ++s.sticking;
      s.normal_force += std::abs(cc.normal_impulse) / h;
      s.friction_force += share * vc.friction_impulse.norm() / h;
      s.force += (cc.normal_impulse * cc.normal + share * vc.friction_impulse) / h;
    }
  }
  for (int gv = 0; gv < static_cast<int>(vertex_rod_.size()); ++gv) {
    if (vertex_free_[gv] < 0) continue;
    const Vec3 x = position(x1, gv);
    for (const Collider& c : colliders_)
      out.max_penetration = std::max(out.max_penetration, vertex_radius_[gv] - collider_distance(c, x));
  }
}

}  // namespace bristle
