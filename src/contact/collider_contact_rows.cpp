// Vertex-collider contacts as constraint rows (contact/collider_contact_rows.hpp).

#include "bristle/contact/collider_contact_rows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "bristle/contact/signed_distance.hpp"

namespace bristle {
namespace {

Vec3 vertex_point(const DofLayout& layout, const VecX& x, int global_vertex) {
  Vec3 p = Vec3::Zero();
  const int dof = layout.vertex_dof(global_vertex);
  for (int c = 0; c < layout.dimension(); ++c) p[c] = x[dof + c];
  return p;
}

// The point of the collider's start pose that its step's motion takes to x.
Vec3 start_pose_point(const Collider& c, const Vec3& x) { return c.step_rotation.transpose() * (x - c.step_translation); }

// The collider as contact sees it: in 2D a box's z extent means nothing in the xy-plane (as
// ContactSolver::begin_step has it).
Collider planar(const Collider& c, int dimension) {
  Collider copy = c;
  if (dimension == 2 && copy.type == ColliderType::Box) copy.half_extents.z() = std::numeric_limits<double>::infinity();
  return copy;
}

// The model's colliders are in their pose at the step's end (the handle driver moves them
// before the step: model/handle.hpp), which is where the end-of-step gap is measured.
double end_distance(const Collider& c, const Vec3& x) { return collider_distance(c, x); }

double vertex_radius(const Model& model, int global_vertex) {
  return model.rods[model.layout.vertex_rod(global_vertex)].material.radius;
}

}  // namespace

double collider_penetration(const Collider& collider, const Vec3& x, double radius, int dimension) {
  return std::max(0.0, radius - end_distance(planar(collider, dimension), x));
}

std::vector<RodContactRow> collider_contact_rows(const Model& model, const VecX& x_from, const VecX& x_to) {
  std::vector<RodContactRow> rows;
  const DofLayout& layout = model.layout;
  if (model.colliders.empty()) return rows;
  for (int gv = 0; gv < layout.vertex_count(); ++gv) {
    if (layout.free_index(layout.vertex_dof(gv)) < 0) continue;
    const Vec3 a = vertex_point(layout, x_from, gv), b = vertex_point(layout, x_to, gv);
    const double radius = vertex_radius(model, gv);
    const double reach = (b - a).norm() + 0.5 * radius;
    for (int c = 0; c < static_cast<int>(model.colliders.size()); ++c) {
      const Collider collider = planar(model.colliders[c], layout.dimension());
      const double gap = std::min(end_distance(collider, a), end_distance(collider, b)) - radius;
      if (!(gap < reach)) continue;
      RodContactRow row;
      row.vertices = {gv, gv, gv, gv};
      row.collider = c;
      row.friction = collider.friction;
      rows.push_back(row);
    }
  }
  return rows;
}

void linearise_collider_rows(const Model& model, std::vector<RodContactRow>& rows, const VecX& x, const VecX* v_lin,
                             double h) {
  const DofLayout& layout = model.layout;
  for (RodContactRow& row : rows) {
    const Collider collider = planar(model.colliders[row.collider], layout.dimension());
    const int gv = row.vertices[0];
    const Vec3 p = vertex_point(layout, x, gv);
    const Vec3 y = start_pose_point(collider, p);
    SegmentContactFrame frame;
    frame.gap = end_distance(collider, p) - vertex_radius(model, gv);
    Vec3 normal = collider_distance_gradient(collider, p);
    if (layout.dimension() == 2) normal.z() = 0.0;
    const double length = normal.norm();
    frame.normal = length > 0.0 ? Vec3(normal / length) : Vec3::UnitY();
    tangent_basis(frame.normal, frame.tangent1, frame.tangent2);
    frame.weights = Vec4(1.0, 0.0, 0.0, 0.0);
    if (v_lin != nullptr) frame.gap -= h * frame.normal.dot(vertex_point(layout, *v_lin, gv));
    // The surface point at p moves from y to p over the step.
    const Vec3 surface_velocity = (p - y) / h;
    row.velocity_offset = Vec3(0.0, -frame.tangent1.dot(surface_velocity), -frame.tangent2.dot(surface_velocity));
    row.frame = frame;
  }
}

}  // namespace bristle
