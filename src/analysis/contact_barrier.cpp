#include "bristle/analysis/contact_barrier.hpp"

#include <cmath>
#include <limits>

#include "bristle/contact/signed_distance.hpp"

namespace bristle {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
/// dhat as a fraction of the rod's radius.
constexpr double kGapFraction = 1e-2;

/// Adds `block` (D x D of a 3 x 3) to the matrix at the free vertex's diagonal block.
void add_diagonal_block(SparseMatrix& matrix, int free, int dimension, const Mat3& block) {
  for (int col = 0; col < dimension; ++col)
    for (int row = 0; row < dimension; ++row) matrix.coeffRef(free + row, free + col) += block(row, col);
}

}  // namespace

ContactBarrier::ContactBarrier(const Model& model, double force_scale)
    : dimension_(model.dimension), colliders_(model.colliders) {
  if (model.dimension == 2)  // the z extent of a box means nothing in the xy-plane
    for (Collider& c : colliders_)
      if (c.type == ColliderType::Box) c.half_extents.z() = kInfinity;
  if (colliders_.empty()) return;
  const DofLayout& layout = model.layout;
  double smallest_dhat = kInfinity;
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r) {
    const Rod& rod = model.rods[r];
    rod_names_.push_back(rod.name);
    const double dhat = kGapFraction * rod.material.radius;
    for (int i = 0; i < rod.vertex_count(); ++i) {
      const int dof = layout.vertex_dof(r, i);
      const int free = layout.free_index(dof);
      if (free < 0) continue;  // held: contact cannot move it
      vertices_.push_back({r, i, dof, free, rod.material.radius, dhat});
      smallest_dhat = std::min(smallest_dhat, dhat);
    }
  }
  // One kappa for the whole model, from the thinnest rod's dhat (the stiffest barrier): a
  // thicker rod's vertex under force F then rests nearer its own dhat, still inside it.
  if (std::isfinite(smallest_dhat)) kappa_ = force_scale / smallest_dhat;
}

Vec3 ContactBarrier::position(const VecX& x, const Vertex& v) const {
  Vec3 p = Vec3::Zero();
  p.head(dimension_) = x.segment(v.dof, dimension_);
  return p;
}

double ContactBarrier::energy(const VecX& x) const {
  double total = 0.0;
  for (const Vertex& v : vertices_) {
    const Vec3 p = position(x, v);
    for (const Collider& c : colliders_) {
      const double d = collider_distance(c, p) - v.radius;
      if (d >= v.dhat) continue;
      if (!(d > 0.0)) return kInfinity;
      total += barrier_function(d, v.dhat).b;
    }
  }
  return kappa_ * total;
}

void ContactBarrier::add(const VecX& x, HessianProjection projection, VecX& gradient,
                         SparseMatrix* matrix) const {
  const int D = dimension_;
  for (const Vertex& v : vertices_) {
    const Vec3 p = position(x, v);
    for (const Collider& c : colliders_) {
      const double d = collider_distance(c, p) - v.radius;
      if (d >= v.dhat) continue;
      const BarrierValue b = barrier_function(d, v.dhat);
      Vec3 n = collider_distance_gradient(c, p);
      if (D == 2) n.z() = 0.0;
      gradient.segment(v.dof, D) += kappa_ * b.db * n.head(D);
      if (!matrix) continue;
      Mat3 block = kappa_ * b.d2b * n * n.transpose();
      if (projection == HessianProjection::Exact) block += kappa_ * b.db * collider_distance_hessian(c, p);
      add_diagonal_block(*matrix, v.free, D, block);
    }
  }
}

std::string ContactBarrier::lift_out(VecX& x) const {
  const int D = dimension_;
  for (const Vertex& v : vertices_) {
    // A vertex in a corner may be pushed by one collider into another: a few sweeps.
    for (int sweep = 0; sweep < 4; ++sweep) {
      bool moved = false;
      for (const Collider& c : colliders_) {
        const Vec3 p = position(x, v);
        const double d = collider_distance(c, p) - v.radius;
        if (d >= 0.5 * v.dhat) continue;
        Vec3 n = collider_distance_gradient(c, p);
        if (D == 2) n.z() = 0.0;
        if (!(n.norm() > 0.0)) continue;
        // phi grows at unit rate along n (|grad phi| = 1), so this lands at d = dhat / 2.
        x.segment(v.dof, D) += (0.5 * v.dhat - d) * n.normalized().head(D);
        moved = true;
      }
      if (!moved) break;
    }
    for (int c = 0; c < static_cast<int>(colliders_.size()); ++c) {
      const double d = collider_distance(colliders_[c], position(x, v)) - v.radius;
      if (!(d > 0.0))
        return "vertex " + std::to_string(v.index) + " of rod '" + rod_names_[v.rod] +
               "' cannot be placed outside collider " + std::to_string(c) + " (it starts inside, " +
               "wedged between colliders)";
    }
  }
  return "";
}

BarrierContacts ContactBarrier::contacts(const VecX& x) const {
  BarrierContacts out;
  out.normal_force.assign(colliders_.size(), 0.0);
  for (const Vertex& v : vertices_) {
    const Vec3 p = position(x, v);
    for (std::size_t c = 0; c < colliders_.size(); ++c) {
      const double d = collider_distance(colliders_[c], p) - v.radius;
      if (d >= v.dhat) continue;
      out.min_gap = out.contacts == 0 ? d : std::min(out.min_gap, d);
      ++out.contacts;
      out.normal_force[c] += kappa_ * std::abs(barrier_function(d, v.dhat).db);
    }
  }
  return out;
}

}  // namespace bristle
