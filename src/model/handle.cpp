#include "bristle/model/handle.hpp"

#include <cassert>
#include <cmath>
#include <sstream>

#include "bristle/energy/rod_frame.hpp"

namespace bristle {
namespace {

// How much a rotation turns an edge's material frame relative to its reference frame: the
// angle about the turned tangent R t from the reference director carried by parallel
// transport (what the step's "transport frames" stage does to the reference) to the director
// turned by R (what a clamp does to the material frame). Both maps take t to R t, so the
// angle is the same for every director perpendicular to t. Zero when R turns t (almost)
// exactly around, where transport is undefined (docs/physics.md, "Twist in the step").
double frame_turn(const Vec3& tangent, const Mat3& rotation) {
  const Vec3 turned = rotation * tangent;
  if (!(tangent.dot(turned) > -1.0 + 1e-9)) return 0.0;
  const Vec3 axis = std::abs(tangent.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  const Vec3 director = tangent.cross(axis).normalized();
  return signed_angle(parallel_transport(tangent, turned, director), rotation * director, turned);
}

// The fixed twist DOFs of a handled rod (Rod::is_twist_fixed: by default an edge with both
// vertices fixed; a scene's `twist_fixed` can free a clamped end or hold a pinned one) and
// their edges.
template <class Visit>
void for_each_clamped_edge(const Model& model, int r, Visit&& visit) {
  const Rod& rod = model.rods[r];
  if (!rod.twist) return;
  for (int j = 0; j < rod.edge_count(); ++j)
    if (rod.is_twist_fixed(j)) visit(j, model.layout.edge_dof(r, j));
}

[[noreturn]] void fail(const Handle& handle, const std::string& what) {
  throw std::invalid_argument("handle '" + handle.name + "': " + what);
}

/// Interpolates a per-key vector quantity (see handle.hpp for the three schemes).
template <typename Value>
Vec3 interpolate(const Handle& handle, double time, Value value) {
  const std::vector<HandleKey>& keys = handle.keys;
  assert(!keys.empty());
  const int last = static_cast<int>(keys.size()) - 1;
  if (time <= keys.front().time) return value(keys.front());
  if (time >= keys.back().time) return value(keys.back());
  int k = 0;  // the segment [t_k, t_{k+1}] containing time
  while (k + 1 < last && time >= keys[k + 1].time) ++k;
  const double span = keys[k + 1].time - keys[k].time;
  const double s = (time - keys[k].time) / span;
  const Vec3 p0 = value(keys[k]), p1 = value(keys[k + 1]);
  switch (handle.interpolation) {
    case HandleInterpolation::Linear:
      return p0 + s * (p1 - p0);
    case HandleInterpolation::Smooth: {
      const double eased = s * s * (3.0 - 2.0 * s);
      return p0 + eased * (p1 - p0);
    }
    case HandleInterpolation::CatmullRom: {
      auto tangent = [&](int i) -> Vec3 {
        if (i == 0 || i == last) return Vec3::Zero();
        return (value(keys[i + 1]) - value(keys[i - 1])) / (keys[i + 1].time - keys[i - 1].time);
      };
      const double s2 = s * s, s3 = s2 * s;
      const double h00 = 2.0 * s3 - 3.0 * s2 + 1.0, h10 = s3 - 2.0 * s2 + s;
      const double h01 = -2.0 * s3 + 3.0 * s2, h11 = s3 - s2;
      return h00 * p0 + h10 * span * tangent(k) + h01 * p1 + h11 * span * tangent(k + 1);
    }
  }
  return p0;
}

}  // namespace

RigidTransform RigidTransform::inverse() const {
  RigidTransform inv;
  inv.rotation = rotation.transpose();
  inv.translation = -(inv.rotation * translation);
  return inv;
}

RigidTransform RigidTransform::operator*(const RigidTransform& other) const {
  RigidTransform out;
  out.rotation = rotation * other.rotation;
  out.translation = rotation * other.translation + translation;
  return out;
}

Vec3 HandleKey::rotation_vector() const {
  if (rotation_angle == 0.0) return Vec3::Zero();
  return rotation_angle * rotation_axis.normalized();
}

Vec3 Handle::translation_at(double time) const {
  return interpolate(*this, time, [](const HandleKey& k) { return k.translation; });
}

Vec3 Handle::rotation_vector_at(double time) const {
  return interpolate(*this, time, [](const HandleKey& k) { return k.rotation_vector(); });
}

RigidTransform Handle::pose(double time) const {
  const Vec3 phi = rotation_vector_at(time);
  const double angle = phi.norm();
  RigidTransform pose;
  if (angle > 0.0) pose.rotation = Eigen::AngleAxisd(angle, phi / angle).toRotationMatrix();
  pose.translation = pivot + translation_at(time) - pose.rotation * pivot;
  return pose;
}

void validate_handle(const Handle& handle) {
  if (handle.name.empty()) throw std::invalid_argument("a handle needs a name");
  if (handle.keys.empty()) fail(handle, "needs at least one key");
  if (!handle.pivot.allFinite()) fail(handle, "pivot is not finite");
  for (std::size_t k = 0; k < handle.keys.size(); ++k) {
    const HandleKey& key = handle.keys[k];
    std::ostringstream where;
    where << "key " << k << ": ";
    if (!std::isfinite(key.time)) fail(handle, where.str() + "time is not finite");
    if (k > 0 && !(key.time > handle.keys[k - 1].time))
      fail(handle, where.str() + "times must increase strictly");
    if (!key.translation.allFinite() || !key.rotation_axis.allFinite() || !std::isfinite(key.rotation_angle))
      fail(handle, where.str() + "translation and rotation must be finite");
    if (key.rotation_angle != 0.0 && key.rotation_axis.norm() == 0.0)
      fail(handle, where.str() + "rotation axis is zero");
  }
}

Collider transform_collider(const Collider& rest, const RigidTransform& pose) {
  Collider moved = rest;
  moved.point = pose.apply(rest.point);
  moved.normal = pose.apply_direction(rest.normal);
  moved.center = pose.apply(rest.center);
  moved.a = pose.apply(rest.a);
  moved.b = pose.apply(rest.b);
  moved.rotation = pose.rotation * rest.rotation;
  moved.step_rotation = Mat3::Identity();
  moved.step_translation = Vec3::Zero();
  return moved;
}

HandleDriver::HandleDriver(const Model& model, std::vector<Handle> handles)
    : handles_(std::move(handles)), rest_colliders_(model.colliders) {
  std::vector<int> claimed(model.rods.size(), -1);
  for (std::size_t h = 0; h < handles_.size(); ++h) {
    const Handle& handle = handles_[h];
    validate_handle(handle);
    for (std::size_t g = 0; g < h; ++g)
      if (handles_[g].name == handle.name) fail(handle, "two handles have this name");
    if (model.dimension == 2)
      for (const HandleKey& key : handle.keys)
        if (key.rotation_angle != 0.0 &&
            key.rotation_axis.head<2>().norm() > 1e-12 * key.rotation_axis.norm())
          fail(handle, "in a 2D scene rotations must be about z");
    std::vector<int> rods;
    for (const std::string& name : handle.rods) {
      const int r = model.rod_index(name);
      if (r < 0) fail(handle, "unknown rod '" + name + "'");
      if (claimed[r] >= 0) fail(handle, "rod '" + name + "' already follows handle '" + handles_[claimed[r]].name + "'");
      claimed[r] = static_cast<int>(h);
      rods.push_back(r);
    }
    handle_rods_.push_back(std::move(rods));
  }
  for (const Collider& c : model.colliders) {
    int index = -1;
    if (!c.handle.empty()) {
      for (std::size_t h = 0; h < handles_.size(); ++h)
        if (handles_[h].name == c.handle) index = static_cast<int>(h);
      if (index < 0) throw std::invalid_argument("a collider names unknown handle '" + c.handle + "'");
    }
    collider_handle_.push_back(index);
  }
}

void HandleDriver::prepare_step(Model& model, State& state, double dt) const {
  assert(dt > 0.0);
  assert(model.colliders.size() == collider_handle_.size());
  const int D = model.dimension;
  const double t0 = state.time, t1 = state.time + dt;
  std::vector<RigidTransform> start, end;
  for (const Handle& handle : handles_) {
    start.push_back(handle.pose(t0));
    end.push_back(handle.pose(t1));
  }
  for (std::size_t h = 0; h < handles_.size(); ++h)
    for (int r : handle_rods_[h]) {
      Rod& rod = model.rods[r];
      const RigidTransform motion = end[h] * start[h].inverse();
      rod.carry_group = static_cast<int>(h);
      rod.carry_rotation = motion.rotation;
      rod.carry_translation = motion.translation;
      rod.carry_duration = dt;
      for (int i : rod.fixed) {
        const int dof = model.layout.vertex_dof(r, i);
        const Vec3 target = end[h].apply(rod.initial_positions[i]);
        state.velocities.segment(dof, D) = (target.head(D) - state.positions.segment(dof, D)) / dt;
      }
      // A held edge's material frame turns with the handle: its twist advances by the
      // step's rotation measured against the transported reference (frame_turn). For a
      // clamped edge that is its frame's true turn; for a pinned edge whose twist is held
      // (`twist_fixed`) it is exact for a turn about the edge, the drive such a pin models.
      const Mat3 turn = end[h].rotation * start[h].rotation.transpose();
      for_each_clamped_edge(model, r, [&](int j, int dof) {
        const Vec3 tangent = (state.positions.segment<3>(model.layout.vertex_dof(r, j + 1)) -
                              state.positions.segment<3>(model.layout.vertex_dof(r, j)))
                                 .normalized();
        state.velocities[dof] = frame_turn(tangent, turn) / dt;
      });
    }
  for (std::size_t c = 0; c < collider_handle_.size(); ++c) {
    const int h = collider_handle_[c];
    if (h < 0) continue;
    Collider moved = transform_collider(rest_colliders_[c], end[h]);
    const RigidTransform motion = end[h] * start[h].inverse();
    moved.step_rotation = motion.rotation;
    moved.step_translation = motion.translation;
    model.colliders[c] = moved;
  }
}

void HandleDriver::place(Model& model, State& state) const {
  const int D = model.dimension;
  for (std::size_t h = 0; h < handles_.size(); ++h) {
    const RigidTransform pose = handles_[h].pose(state.time);
    // The whole rod moves, not only its fixed vertices: a first key away from the scene's
    // geometry starts the rod there instead of stretching its root edges.
    for (int r : handle_rods_[h]) {
      const Rod& rod = model.rods[r];
      for (int i = 0; i < rod.vertex_count(); ++i) {
        const int dof = model.layout.vertex_dof(r, i);
        state.positions.segment(dof, D) = pose.apply(rod.initial_positions[i]).head(D);
        state.velocities.segment(dof, D).setZero();
      }
      // Rods with twist: every edge's material frame, at its initial twist, turned by the
      // pose, against the reference frames the kernels carry from the rest edges to the
      // placed ones.
      const std::vector<double> theta = rod.initial_twists();
      if (rod.twist)
        for (int j = 0; j < rod.edge_count(); ++j) {
          const int dof = model.layout.edge_dof(r, j);
          const Vec3 tangent = (rod.initial_positions[j + 1] - rod.initial_positions[j]).normalized();
          const double turn = frame_turn(tangent, pose.rotation);
          state.positions[dof] = theta[j] == 0.0 ? turn : theta[j] + turn;
          state.velocities[dof] = 0.0;
        }
    }
  }
  for (std::size_t c = 0; c < collider_handle_.size(); ++c)
    if (collider_handle_[c] >= 0)
      model.colliders[c] = transform_collider(rest_colliders_[c], handles_[collider_handle_[c]].pose(state.time));
}

}  // namespace bristle
